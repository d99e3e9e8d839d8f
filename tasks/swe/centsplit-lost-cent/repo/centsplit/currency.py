"""Currencies and the number of decimal places of their minor unit."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Currency:
    code: str
    exponent: int  # digits after the decimal point: 2 for EUR, 0 for JPY, 3 for KWD

    @property
    def factor(self) -> int:
        return 10 ** self.exponent


_CURRENCIES = {c.code: c for c in (
    Currency("EUR", 2), Currency("USD", 2), Currency("GBP", 2), Currency("CHF", 2),
    Currency("JPY", 0), Currency("KWD", 3),
)}


def get_currency(code: str) -> Currency:
    try:
        return _CURRENCIES[code.upper()]
    except KeyError:
        raise KeyError(f"unknown currency {code!r}") from None
