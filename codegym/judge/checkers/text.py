"""Text checkers of stdio tasks: pure functions of (expected, got), and their diffs.

`exact`, `lines`, `tokens` (the default), `float`, `lines_unordered`, `sets`,
`decimal_lines` (LiveCodeBench's stdin rule); the
rules are in docs/judge.md. Every check returns a `CheckResult` whose `diff` is a
short description of the first difference, meant as feedback to the agent.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from codegym.judge.checkers.base import OK, CheckResult, Tagged, clip, show

#: context shown on each side of a differing token
CONTEXT = 24


def _line_snippet(line: str, col: int) -> str:
    """The part of `line` around character `col`, with ellipses."""
    lo = max(0, col - CONTEXT)
    hi = min(len(line), col + CONTEXT)
    return ("..." if lo else "") + line[lo:hi] + ("..." if hi < len(line) else "")


def _token_positions(text: str) -> list[tuple[str, int, int, str]]:
    """Tokens with (line number from 1, column, the line's text). Only used on failure."""
    out = []
    for ln, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"\S+", line):
            out.append((m.group(), ln, m.start(), line))
    return out


def token_diff(expected: str, got: str, index: int | None = None) -> str:
    """Describe the first differing token (or the one at `index`)."""
    e = _token_positions(expected)
    g = _token_positions(got)
    if index is None:
        index = 0
        while index < len(e) and index < len(g) and e[index][0] == g[index][0]:
            index += 1
    if index >= len(e) and index >= len(g):
        return ""
    if index >= len(g):
        tok, ln, col, line = e[index]
        return clip(f"output ended early: expected {len(e)} tokens, got {len(g)}; "
                    f"next expected token {show(tok)} (line {ln}: {show(_line_snippet(line, col))})")
    if index >= len(e):
        tok, ln, col, line = g[index]
        return clip(f"extra output: expected {len(e)} tokens, got {len(g)}; first extra token "
                    f"{show(tok)} (line {ln}: {show(_line_snippet(line, col))})")
    et, eln, ecol, eline = e[index]
    gt, gln, gcol, gline = g[index]
    return clip(f"token {index + 1} (line {gln}): expected {show(et)}, got {show(gt)}\n"
                f"  expected line {eln}: {show(_line_snippet(eline, ecol), 80)}\n"
                f"  got line {gln}:      {show(_line_snippet(gline, gcol), 80)}")


def line_diff(expected_lines: Sequence[str], got_lines: Sequence[str]) -> str:
    """Describe the first differing line of two line lists."""
    n = min(len(expected_lines), len(got_lines))
    for i in range(n):
        e, g = expected_lines[i], got_lines[i]
        if e != g:
            col = 0
            while col < len(e) and col < len(g) and e[col] == g[col]:
                col += 1
            return clip(f"line {i + 1}, column {col + 1}:\n"
                        f"  expected: {show(_line_snippet(e, col), 80)}\n"
                        f"  got:      {show(_line_snippet(g, col), 80)}")
    if len(got_lines) < len(expected_lines):
        return clip(f"output ended early: expected {len(expected_lines)} lines, got {len(got_lines)}; "
                    f"line {n + 1} should be {show(expected_lines[n], 80)}")
    if len(got_lines) > len(expected_lines):
        return clip(f"extra output: expected {len(expected_lines)} lines, got {len(got_lines)}; "
                    f"line {n + 1} is {show(got_lines[n], 80)}")
    return ""


class Checker(Tagged):
    """Base of the text checkers: ``check(expected, got, input="") -> CheckResult``."""

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.tag}>"


class NormalisedChecker(Checker):
    """Equal when both texts are identical, or equal once `normalise`d; `describe`
    reports the difference of the normalised forms."""

    def normalise(self, text: str) -> Any:
        raise NotImplementedError

    def describe(self, expected: Any, got: Any) -> CheckResult:
        raise NotImplementedError

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        if got == expected:
            return OK
        e, g = self.normalise(expected), self.normalise(got)
        if e == g:
            return OK
        return self.describe(e, g)


class ExactChecker(Checker):
    """Identical text."""

    name = "exact"

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        if got == expected:
            return OK
        el, gl = expected.split("\n"), got.split("\n")
        d = line_diff(el, gl)
        if not d:  # same lines: the difference is a trailing newline or \r
            d = (f"texts differ only in line endings / trailing newline: expected ends "
                 f"{show(expected[-10:])}, got ends {show(got[-10:])}")
        return CheckResult(False, 0.0, "output differs (exact comparison)", clip(d))


class LinesChecker(NormalisedChecker):
    """Line by line; trailing whitespace per line and trailing blank lines ignored."""

    name = "lines"

    def normalise(self, text: str) -> list[str]:
        lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def describe(self, expected: list[str], got: list[str]) -> CheckResult:
        return CheckResult(False, 0.0, "output differs", line_diff(expected, got))


class TokensChecker(Checker):
    """Whitespace-separated tokens equal (the stdio default)."""

    name = "tokens"

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        # str.split() is the fast path: one C call per side, no per-token Python work
        if got == expected or got.split() == expected.split():
            return OK
        return CheckResult(False, 0.0, "output differs", token_diff(expected, got))


_NUM_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)",
                     re.IGNORECASE)
_INT_RE = re.compile(r"[+-]?\d+")


def parse_number(tok: str) -> float | None:
    """The float value of a numeric token, None if it is not a number.

    Stricter than float(): no underscores, no surrounding text, no hex."""
    if _NUM_RE.fullmatch(tok) is None:
        return None
    try:
        return float(tok)
    except (ValueError, OverflowError):
        return None


def floats_close(g: float, e: float, abs_tol: float, rel_tol: float) -> bool:
    """Absolute-or-relative closeness; nan == nan, infinities equal only themselves."""
    if math.isnan(e) or math.isnan(g):
        return math.isnan(e) and math.isnan(g)
    if math.isinf(e) or math.isinf(g):
        return e == g
    d = abs(g - e)
    return d <= abs_tol or d <= rel_tol * abs(e)


class FloatChecker(Checker):
    """Tokens; numbers within abs_tol or rel_tol (plain integer pairs exact)."""

    name = "float"

    def __init__(self, abs_tol: float = 1e-6, rel_tol: float = 1e-6):
        self.abs_tol = float(abs_tol)
        self.rel_tol = float(rel_tol)

    def token_equal(self, e: str, g: str) -> bool:
        if e == g:
            return True
        ev = parse_number(e)
        if ev is None:
            return False
        gv = parse_number(g)
        if gv is None:
            return False
        if _INT_RE.fullmatch(e) and _INT_RE.fullmatch(g):
            return int(e) == int(g)  # counts and indices stay exact
        return floats_close(gv, ev, self.abs_tol, self.rel_tol)

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        et, gt = expected.split(), got.split()
        if et == gt:
            return OK
        if len(et) == len(gt):
            for i, (e, g) in enumerate(zip(et, gt)):
                if not self.token_equal(e, g):
                    return CheckResult(False, 0.0,
                                       f"output differs (float tolerance abs {self.abs_tol:g}, "
                                       f"rel {self.rel_tol:g})", token_diff(expected, got, i))
            return OK
        return CheckResult(False, 0.0, "output differs (wrong number of tokens)",
                           token_diff(expected, got))

    def __repr__(self) -> str:
        return f"<FloatChecker {self.tag} abs={self.abs_tol:g} rel={self.rel_tol:g}>"


class LinesUnorderedChecker(NormalisedChecker):
    """Multiset of (token tuples of) non-blank lines."""

    name = "lines_unordered"

    def normalise(self, text: str) -> Counter:
        c: Counter = Counter()
        for line in text.splitlines():
            toks = tuple(line.split())
            if toks:
                c[toks] += 1
        return c

    def describe(self, ec: Counter, gc: Counter) -> CheckResult:
        missing = ec - gc
        extra = gc - ec
        parts = [f"expected {sum(ec.values())} lines (any order), got {sum(gc.values())}"]
        if missing:
            toks = next(iter(missing))
            parts.append(f"missing line: {show(' '.join(toks), 80)}"
                         + (f" (and {sum(missing.values()) - 1} more)" if sum(missing.values()) > 1 else ""))
        if extra:
            toks = next(iter(extra))
            parts.append(f"unexpected line: {show(' '.join(toks), 80)}"
                         + (f" (and {sum(extra.values()) - 1} more)" if sum(extra.values()) > 1 else ""))
        return CheckResult(False, 0.0, "output differs (lines compared as a multiset)",
                           clip("\n  ".join(parts)))


class SetsChecker(NormalisedChecker):
    """Lines in order, each line a multiset of tokens."""

    name = "sets"

    def normalise(self, text: str) -> list[list[str]]:
        lines = [sorted(line.split()) for line in text.splitlines()]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def describe(self, el: list[list[str]], gl: list[list[str]]) -> CheckResult:
        d = line_diff([" ".join(x) for x in el], [" ".join(x) for x in gl])
        return CheckResult(False, 0.0, "output differs (each line compared as a multiset of tokens; "
                                       "the diff shows sorted tokens)", d)


#: the text checkers without options, by name (one shared instance each)
def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(tok) for tok in line.split()]
    except (InvalidOperation, ValueError):
        return None


class DecimalLinesChecker(Checker):
    """LiveCodeBench's stdin rule: the whole output stripped, then line by line (each
    line stripped, the line counts equal), a line passes when it is identical or when
    its whitespace-separated tokens all read as decimals equal to the expected line's
    (``Decimal``: ``1.50`` equals ``1.5``, ``0.333`` does not equal ``0.3333``)."""

    name = "decimal_lines"

    @staticmethod
    def lines(text: str) -> list[str]:
        return [ln.strip() for ln in text.strip().split("\n")]

    def check(self, expected: str, got: str, input: str = "") -> CheckResult:  # noqa: A002
        if got == expected:
            return OK
        e, g = self.lines(expected), self.lines(got)
        if len(e) != len(g):
            return CheckResult(False, 0.0, "output differs: another number of lines", line_diff(e, g))
        for i, (el, gl) in enumerate(zip(e, g)):
            if el == gl:
                continue
            ge, ee = _decimals(gl), _decimals(el)
            if ge is None or ee is None or ge != ee:
                return CheckResult(False, 0.0, "output differs", line_diff(e[i:i + 1], g[i:i + 1])
                                   .replace("line 1,", f"line {i + 1},", 1))
        return OK


TEXT_CHECKERS: dict[str, type[Checker]] = {
    "decimal_lines": DecimalLinesChecker,
    "exact": ExactChecker,
    "lines": LinesChecker,
    "tokens": TokensChecker,
    "lines_unordered": LinesUnorderedChecker,
    "sets": SetsChecker,
}

