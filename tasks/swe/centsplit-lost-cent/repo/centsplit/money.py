"""`Money`: an amount of one currency, held as an integer number of minor units."""

from __future__ import annotations

import re
from typing import Sequence

from centsplit.currency import Currency, get_currency

_AMOUNT_RE = re.compile(r"^\s*(-)?(\d+)(?:\.(\d+))?\s+([A-Za-z]{3})\s*$")


class MoneyError(ValueError):
    """An invalid amount or an operation between different currencies."""


class Money:
    __slots__ = ("minor", "currency")

    def __init__(self, minor: int, currency: Currency | str):
        if not isinstance(minor, int):
            raise MoneyError(f"amounts are whole minor units, got {minor!r}")
        self.minor = minor
        self.currency = get_currency(currency) if isinstance(currency, str) else currency

    @classmethod
    def parse(cls, text: str) -> "Money":
        """``"12.34 EUR"`` -> Money(1234, EUR). More decimals than the currency has is an error."""
        m = _AMOUNT_RE.match(text)
        if not m:
            raise MoneyError(f"cannot read an amount from {text!r}")
        sign, whole, frac, code = m.groups()
        cur = get_currency(code)
        frac = frac or ""
        if len(frac) > cur.exponent:
            raise MoneyError(f"{code} has {cur.exponent} decimal places: {text!r}")
        minor = int(whole) * cur.factor + int(frac.ljust(cur.exponent, "0") or 0)
        return cls(-minor if sign else minor, cur)

    def _check(self, other: "Money") -> None:
        if not isinstance(other, Money):
            raise TypeError(f"expected Money, got {type(other).__name__}")
        if other.currency != self.currency:
            raise MoneyError(f"cannot combine {self.currency.code} and {other.currency.code}")

    def __add__(self, other: "Money") -> "Money":
        self._check(other)
        return Money(self.minor + other.minor, self.currency)

    def __sub__(self, other: "Money") -> "Money":
        self._check(other)
        return Money(self.minor - other.minor, self.currency)

    def __neg__(self) -> "Money":
        return Money(-self.minor, self.currency)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Money):
            return NotImplemented
        return (self.minor, self.currency) == (other.minor, other.currency)

    def __hash__(self) -> int:
        return hash((self.minor, self.currency))

    def __lt__(self, other: "Money") -> bool:
        self._check(other)
        return self.minor < other.minor

    def __str__(self) -> str:
        exp = self.currency.exponent
        sign = "-" if self.minor < 0 else ""
        whole, frac = divmod(abs(self.minor), self.currency.factor)
        body = f"{whole}.{frac:0{exp}d}" if exp else str(whole)
        return f"{sign}{body} {self.currency.code}"

    def __repr__(self) -> str:
        return f"Money.parse({str(self)!r})"

    def allocate(self, ratios: Sequence[int]) -> list["Money"]:
        """Split into shares proportional to `ratios` (non-negative integers, not all 0)."""
        if not ratios or any(r < 0 for r in ratios) or sum(ratios) == 0:
            raise MoneyError(f"ratios must be non-negative and not all zero: {ratios!r}")
        total = sum(ratios)
        return [Money(self.minor * r // total, self.currency) for r in ratios]

    def split(self, n: int) -> list["Money"]:
        """Split into `n` equal shares."""
        if n < 1:
            raise MoneyError("split needs at least one share")
        return self.allocate([1] * n)
