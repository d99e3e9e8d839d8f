"""Value comparison of function tasks: decoded return values against expected values.

`ValueChecker` (exact / float / `seq_lenient` rules) and `EvalPlusChecker` (EvalPlus's
per-input decision with its special oracles); `make_value_checker` picks one.

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
    equal element-wise when `seq_lenient` (default; ``"top"``: only a returned
    tuple equals a list, as LiveCodeBench turns a returned tuple into a list); with a
    float tolerance every pair of non-bool numbers where either is a float is compared
    with `floats_close`; sets compare as sets; dict keys must
    match exactly; a `Repr` (unserialisable value) equals nothing.
    Both sides are plain data built by the trusted host, so no user code runs.
    """

    name = "values"

    def __init__(self, abs_tol: float | None = None, rel_tol: float | None = None,
                 seq_lenient: bool | str = True, strict_types: bool = False):
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
            lenient = self.seq_lenient is True or (self.seq_lenient == "top" and not p)
            if self.strict_types and not self._same_kind(g, e, lenient):
                return f"{where}: expected {type(e).__name__} {_short(e)}, got {type(g).__name__} {_short(g)}"
            if isinstance(g, (int, float)) and isinstance(e, (int, float)):  # bool is an int
                if not self._num_eq(g, e):
                    return f"{where}: expected {_short(e)}, got {_short(g)}"
                continue
            if isinstance(g, (list, tuple)) and isinstance(e, (list, tuple)):
                if not lenient and type(g) is not type(e):
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

    def _same_kind(self, g: Any, e: Any, lenient: bool) -> bool:
        if isinstance(g, (list, tuple)) and isinstance(e, (list, tuple)):
            return lenient or type(g) is type(e)
        if isinstance(g, (set, frozenset)) and isinstance(e, (set, frozenset)):
            return True
        return type(g) is type(e)

    def check_value(self, expected: Any, got: Any, args: Any = None, kwargs: Any = None) -> CheckResult:
        """`got` (the decoded return value) against `expected`; `args`/`kwargs` are the
        call's arguments (rules that need them: `codegym.judge.checkers.evalplus`)."""
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


def make_value_checker(spec: Any = None) -> ValueChecker | EvalPlusChecker:
    """The value checker of a function task: exact unless the spec is `float`.

    Options read from the spec (dict or CheckerSpec attributes, when present):
    ``seq_lenient`` (list == tuple, default True), ``strict_types`` (default False)."""
    kind = spec if isinstance(spec, str) else spec_get(spec, "type", "exact")
    lenient = spec_get(spec, "seq_lenient", True) if not isinstance(spec, str) else True
    lenient = lenient if lenient == "top" else bool(lenient)
    strict = spec_get(spec, "strict_types", False) if not isinstance(spec, str) else False
    if kind == "float":
        return ValueChecker(spec_get(spec, "abs_tol", 1e-6), spec_get(spec, "rel_tol", 1e-6),
                            seq_lenient=lenient, strict_types=bool(strict))
    if kind == "evalplus":
        args = spec_get(spec, "args", ()) or ()
        return EvalPlusChecker(spec_get(spec, "abs_tol", 0.0), spec_get(spec, "rel_tol", EVALPLUS_RTOL),
                               oracle=str(args[0]) if args else None)
    return ValueChecker(seq_lenient=lenient, strict_types=bool(strict))


# --------------------------------------------------------------------------- EvalPlus

#: rtol of EvalPlus's ``np.allclose``
EVALPLUS_RTOL = 1e-07
#: the atol EvalPlus forces when the task's is 0 and the expected value is floats
EVALPLUS_FLOAT_ATOL = 1e-06
#: EvalPlus's special oracles (`EvalPlusChecker`'s `oracle`)
EVALPLUS_ORACLES = ("poly_root", "always", "or_zero", "surface_area", "digit_distance", "set_eq", "not_none")


def is_floats(x: Any) -> bool:
    """EvalPlus's ``is_floats``: a float, or a non-empty list/tuple of floats only."""
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(isinstance(i, float) for i in x)
    return False


def _allclose(out: Any, exp: Any, atol: float, rtol: float) -> bool:
    # np.allclose(out, exp, rtol=rtol, atol=atol) on numbers and nested sequences of numbers
    if isinstance(exp, (list, tuple)) or isinstance(out, (list, tuple)):
        if not (isinstance(exp, (list, tuple)) and isinstance(out, (list, tuple))) or len(out) != len(exp):
            return False
        return all(_allclose(o, e, atol, rtol) for o, e in zip(out, exp))
    if not (isinstance(out, (int, float)) and isinstance(exp, (int, float))):
        return False
    if math.isinf(out) or math.isinf(exp):
        return out == exp
    return abs(out - exp) <= atol + rtol * abs(exp)


def _poly(xs: Any, x: Any) -> float:
    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])


def _surface_area(base_edge: Any, height: Any) -> float:
    slant_height = math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 4 * (base_edge * slant_height) / 2)


def _digit_distance(num1: Any, num2: Any) -> int:
    s1, s2 = str(num1), str(num2)
    n = max(len(s1), len(s2))
    s1, s2 = s1.zfill(n), s2.zfill(n)
    return sum(abs(int(a) - int(b)) for a, b in zip(s1, s2))


def evalplus_ok(oracle: str | None, out: Any, exp: Any, inp: Any, atol: float,
                rtol: float = EVALPLUS_RTOL) -> bool:
    """EvalPlus's decision for one input (``evalplus.eval.unsafe_execute``): the special
    oracle, then ``out == exp``, else -- when ``atol != 0``, or the expected value is
    floats (EvalPlus then uses atol 1e-6) -- equal types and ``np.allclose``."""
    if isinstance(out, Repr) and oracle != "not_none":   # an unserialisable value is still not None
        return False
    if oracle == "poly_root":
        poly_args: list[Any] = [*inp, out]  # (EvalPlus calls ``poly(*inp, out)``)
        return abs(_poly(*poly_args)) <= atol
    exact = out == exp
    if oracle == "always":
        exact = True
    elif oracle == "or_zero":
        exact = exact or out == 0
    elif oracle == "surface_area":
        exact = exact or abs(out - _surface_area(*inp)) <= atol
    elif oracle == "digit_distance":
        exact = exact or out == _digit_distance(*inp)
    elif oracle == "set_eq":
        exact = set(out) == set(exp)
    elif oracle == "not_none":   # the expected value is whether the reference returned non-None
        exact = out == exp if isinstance(out, bool) else exp == (out is not None)
    if atol == 0 and is_floats(exp):
        atol = EVALPLUS_FLOAT_ATOL
    if not exact and atol != 0:
        if type(out) is not type(exp):
            return False
        return _allclose(out, exp, atol, rtol)
    return bool(exact)


class EvalPlusChecker(Tagged):
    """EvalPlus's comparison of a return value (`evalplus_ok`), on the host: `abs_tol` is
    the task's ``atol``, `oracle` one of `EVALPLUS_ORACLES` or None. Values compare with
    Python's ``==`` (a tuple is not a list); the plain data decoded from the driver runs
    no user code. docs/importers.md lists the rules."""

    name = "evalplus"

    def __init__(self, abs_tol: float = 0.0, rel_tol: float = EVALPLUS_RTOL, oracle: str | None = None):
        if oracle is not None and oracle not in EVALPLUS_ORACLES:
            raise ValueError(f"unknown EvalPlus oracle {oracle!r} (known: {', '.join(EVALPLUS_ORACLES)})")
        self.atol, self.rtol, self.oracle = float(abs_tol), float(rel_tol), oracle

    def check_value(self, expected: Any, got: Any, args: Any = None, kwargs: Any = None) -> CheckResult:
        try:
            ok = evalplus_ok(self.oracle, got, expected, list(args or ()), self.atol, self.rtol)
        except Exception:  # noqa: BLE001 -- a value the rule cannot use (EvalPlus: the assertion fails)
            ok = False
        if ok:
            return OK
        rule = f" (EvalPlus oracle {self.oracle})" if self.oracle else ""
        return CheckResult(False, 0.0, "wrong return value" + rule,
                           clip(f"expected {_short(expected)}, got {_short(got)}"))

    def __repr__(self) -> str:
        return f"<EvalPlusChecker atol={self.atol} oracle={self.oracle}>"


