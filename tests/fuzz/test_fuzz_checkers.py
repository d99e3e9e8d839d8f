"""Fuzzing the judge's output checkers (`codegym.judge.checkers`).

Properties, for every text checker (exact, lines, tokens, float, lines_unordered,
sets, decimal_lines) and the value checker of function tasks:

- no exception escapes, whatever the texts (control characters, huge or tiny
  numbers, NaN and infinities spelt every way, CRLF, Unicode spaces);
- an output equal to the expected one is accepted (and whitespace a checker ignores
  does not matter to it); a result is a `CheckResult` with a score in [0, 1];
- a rejection says where: a message, and a diff (short) naming the line, token,
  column or value path of the first difference.
"""

from __future__ import annotations

import math

from _fuzz import budget
from hypothesis import given
from hypothesis import strategies as st

from codegym.judge.checkers import make_checker
from codegym.judge.checkers.base import DIFF_MAX, CheckResult
from codegym.judge.checkers.text import TEXT_CHECKERS, FloatChecker
from codegym.judge.checkers.values import ValueChecker

NAMES = sorted(TEXT_CHECKERS)
_tokens = st.one_of(
    st.integers(-10**30, 10**30).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "NaN", "-nan", "inf", "-Infinity", "1e309", "1e-400", "0.1", "-0", "+3", "1_000",
                     "0x10", "1.", ".5", "１２", "YES", "yes", "", "\x00", "é", "\u00a0", "\u2028"]),
    st.text(max_size=6))
_seps = st.sampled_from([" ", "\n", "\t", "\r\n", "  ", "\n\n", "\u00a0", "\x0b"])


@st.composite
def outputs(draw) -> str:
    toks = draw(st.lists(_tokens, max_size=12))
    out = ""
    for t in toks:
        out += t + draw(_seps)
    return out if draw(st.booleans()) else out.rstrip()


def _check_result(r: CheckResult) -> None:
    assert isinstance(r, CheckResult)
    assert isinstance(r.ok, bool) and 0.0 <= r.score <= 1.0 and not math.isnan(r.score)
    assert len(r.diff) <= DIFF_MAX + 3
    if r.ok:
        assert r.score == 1.0
    else:
        assert r.message.strip(), r
        where = (r.message + " " + r.diff).lower()
        assert any(w in where for w in ("line", "token", "column", "expected", "got", "output", "value")), r


@budget(100)
@given(st.sampled_from(NAMES + ["float"]), outputs(), outputs())
def test_text_checkers_never_raise_and_say_where(name, expected, got):
    c = make_checker(name if name != "float" else {"type": "float", "abs_tol": 1e-6, "rel_tol": 1e-6})
    r = c.check(expected, got)
    _check_result(r)


@budget(100)
@given(st.sampled_from(NAMES + ["float"]), outputs())
def test_an_equal_output_is_accepted(name, text):
    c = make_checker(name) if name != "float" else FloatChecker(1e-9, 1e-9)
    if name == "decimal_lines" or name == "float":
        # (numbers compare as numbers: NaN is not a number these checkers accept)
        if any(w in text.lower() for w in ("nan",)):
            return
    r = c.check(text, text)
    assert r.ok, (name, text, r)


@budget(80)
@given(st.sampled_from(["lines", "tokens", "float"]), outputs())
def test_ignored_whitespace_does_not_matter(name, text):
    c = make_checker(name) if name != "float" else FloatChecker(1e-6, 1e-6)
    if "nan" in text.lower():
        return
    padded = "\n".join(line.rstrip() + "  " for line in text.split("\n")) + "\n\n"
    assert c.check(text, padded).ok, (name, text)


_values = st.recursive(
    st.one_of(st.integers(-10**20, 10**20), st.floats(allow_nan=True), st.booleans(), st.none(), st.text(max_size=5)),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=3), kids, max_size=4),
                           st.lists(kids, max_size=3).map(tuple)),
    max_leaves=20)


@budget(80)
@given(_values, _values, st.sampled_from([None, 1e-6]), st.booleans())
def test_value_checker_never_raises_and_names_the_path(got, expected, tol, strict):
    c = ValueChecker(abs_tol=tol, rel_tol=tol, strict_types=strict)
    d = c.first_difference(got, expected)
    assert c.first_difference(expected, expected) is None or _has_nan(expected)
    if d is not None:
        assert d.split(":")[0].strip(), d  # "value" or the path of the first difference


def _has_nan(v) -> bool:
    if isinstance(v, float):
        return math.isnan(v)
    if isinstance(v, dict):
        return any(_has_nan(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return any(_has_nan(x) for x in v)
    return False
