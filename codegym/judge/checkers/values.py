"""Value comparison of function tasks: decoded return values against expected JSON values.

Both sides are plain data built by the trusted host (`codegym.judge.protocol.decode_value`
rebuilds the driver's tagged values), so no user code runs while comparing. A value that
could not be serialised comes back as a `Repr`, which equals nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from codegym.judge.checkers.base import OK, CheckResult, Tagged, clip, spec_get
from codegym.judge.checkers.text import floats_close


@dataclass(frozen=True)
class Repr:
    """A return value that could not be serialised as data: only its repr came back.

    Never equal to any expected value."""

    text: str
    type_name: str = ""

    def __repr__(self) -> str:
        return f"<unserialisable {self.type_name}: {self.text}>"


class ValueChecker(Tagged):
    """Compare a decoded return value with the expected JSON value (function tasks).

    Equality is Python's ``==`` on plain data (so ``1 == 1.0 == True`` unless
    `strict_types`), except that: NaN equals NaN; lists and tuples compare
    equal element-wise when `seq_lenient` (default, as LiveCodeBench/EvalPlus
    do); with a float tolerance every pair of non-bool numbers where either is a
    float is compared with `floats_close`; sets compare as sets; dict keys must
    match exactly; a `Repr` (unserialisable value) equals nothing.
    Both sides are plain data built by the trusted host, so no user code runs.
    """

    name = "values"

    def __init__(self, abs_tol: float | None = None, rel_tol: float | None = None,
                 seq_lenient: bool = True, strict_types: bool = False):
        self.tolerance = abs_tol is not None or rel_tol is not None
        self.abs_tol = float(abs_tol or 0.0)
        self.rel_tol = float(rel_tol or 0.0)
        self.seq_lenient = seq_lenient
        self.strict_types = strict_types

    def _num_eq(self, g: Any, e: Any) -> bool:
        if isinstance(g, float) or isinstance(e, float):
            try:
                g, e = float(g), float(e)
            except OverflowError:  # an int beyond float range: Python compares it exactly
                return g == e
            if self.tolerance:
                return floats_close(g, e, self.abs_tol, self.rel_tol)
            if math.isnan(g) or math.isnan(e):
                return math.isnan(g) and math.isnan(e)
            return g == e
        return g == e

    def first_difference(self, got: Any, expected: Any, path: str = "") -> str | None:
        """None when equal, else a description of the first difference (with its path)."""
        stack = [(got, expected, path)]
        while stack:
            g, e, p = stack.pop()
            where = p or "value"
            if isinstance(g, Repr):
                return f"{where}: expected {_short(e)}, got an unserialisable {g.type_name} ({_short(g.text)})"
            if self.strict_types and not self._same_kind(g, e):
                return f"{where}: expected {type(e).__name__} {_short(e)}, got {type(g).__name__} {_short(g)}"
            if isinstance(g, (int, float)) and isinstance(e, (int, float)):  # bool is an int
                if not self._num_eq(g, e):
                    return f"{where}: expected {_short(e)}, got {_short(g)}"
                continue
            if isinstance(g, (list, tuple)) and isinstance(e, (list, tuple)):
                if not self.seq_lenient and type(g) is not type(e):
                    return f"{where}: expected a {type(e).__name__}, got a {type(g).__name__}"
                if len(g) != len(e):
                    return f"{where}: expected length {len(e)}, got length {len(g)} ({_short(g)})"
                for i in range(len(g) - 1, -1, -1):
                    stack.append((g[i], e[i], f"{p}[{i}]"))
                continue
            if isinstance(g, dict) and isinstance(e, dict):
                if len(g) != len(e) or any(k not in e for k in g):
                    miss = [k for k in e if k not in g]
                    extra = [k for k in g if k not in e]
                    return (f"{where}: keys differ" + (f"; missing {_short(miss)}" if miss else "")
                            + (f"; unexpected {_short(extra)}" if extra else ""))
                for k in reversed(list(e)):
                    stack.append((g[k], e[k], f"{p}[{k!r}]"))
                continue
            if isinstance(g, (set, frozenset)) and isinstance(e, (set, frozenset)):
                if self.tolerance or any(isinstance(x, float) for x in e):
                    ok = self._sets_eq(g, e)
                else:
                    ok = g == e
                if not ok:
                    return f"{where}: expected {_short(e)}, got {_short(g)}"
                continue
            if type(g) in (str, bytes, type(None)) or type(e) in (str, bytes, type(None)):
                if type(g) is not type(e) or g != e:
                    return f"{where}: expected {_short(e)}, got {_short(g)}"
                continue
            try:
                same = g == e
            except Exception:  # noqa: BLE001 -- plain data should not raise; be safe anyway
                same = False
            if same is not True:
                return f"{where}: expected {_short(e)}, got {_short(g)}"
        return None

    def _sets_eq(self, g: Any, e: Any) -> bool:
        if len(g) != len(e):
            return False
        rest = list(e)
        for x in g:
            for j, y in enumerate(rest):
                if self.first_difference(x, y) is None:
                    rest.pop(j)
                    break
            else:
                return False
        return True

    def _same_kind(self, g: Any, e: Any) -> bool:
        if isinstance(g, (list, tuple)) and isinstance(e, (list, tuple)):
            return self.seq_lenient or type(g) is type(e)
        if isinstance(g, (set, frozenset)) and isinstance(e, (set, frozenset)):
            return True
        return type(g) is type(e)

    def check_value(self, expected: Any, got: Any) -> CheckResult:
        try:
            d = self.first_difference(got, expected)
        except RecursionError:
            d = "value nested too deeply to compare"
        if d is None:
            return OK
        return CheckResult(False, 0.0, "wrong return value", clip(d))

    def __repr__(self) -> str:
        return f"<ValueChecker {self.tag} tol={self.tolerance}>"


def _short(v: Any, n: int = 80) -> str:
    try:
        s = repr(v)
    except Exception:  # noqa: BLE001
        s = f"<{type(v).__name__}>"
    return s if len(s) <= n else s[: n - 3] + "..."


def make_value_checker(spec: Any = None) -> ValueChecker:
    """The value checker of a function task: exact unless the spec is `float`.

    Options read from the spec (dict or CheckerSpec attributes, when present):
    ``seq_lenient`` (list == tuple, default True), ``strict_types`` (default False)."""
    kind = spec if isinstance(spec, str) else spec_get(spec, "type", "exact")
    lenient = spec_get(spec, "seq_lenient", True) if not isinstance(spec, str) else True
    strict = spec_get(spec, "strict_types", False) if not isinstance(spec, str) else False
    if kind == "float":
        return ValueChecker(spec_get(spec, "abs_tol", 1e-6), spec_get(spec, "rel_tol", 1e-6),
                            seq_lenient=bool(lenient), strict_types=bool(strict))
    return ValueChecker(seq_lenient=bool(lenient), strict_types=bool(strict))


__all__ = ["Repr", "ValueChecker", "make_value_checker"]
