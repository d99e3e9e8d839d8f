"""Unit tests of codegym.judge.checkers: every rule on constructed outputs (no sandbox needed),
plus the value comparison of function tasks and the exit-code protocol of program checkers."""

from __future__ import annotations

import math

import pytest

from codegym.judge.checkers import make_checker
from codegym.judge.checkers.base import CHECKER_VERSION
from codegym.judge.checkers.program import ProgramChecker
from codegym.judge.checkers.text import (
    ExactChecker,
    FloatChecker,
    LinesChecker,
    LinesUnorderedChecker,
    SetsChecker,
    TokensChecker,
    parse_number,
)
from codegym.judge.checkers.values import Repr, ValueChecker, make_value_checker
from codegym.sandbox.types import ExecResult


def ok(c, expected, got):
    r = c.check(expected, got)
    assert r.ok and r.score == 1.0, r
    return r


def bad(c, expected, got):
    r = c.check(expected, got)
    assert not r.ok and r.score == 0.0 and r.message, r
    return r


# --------------------------------------------------------------------------- exact / lines / tokens


def test_exact_is_byte_for_byte():
    c = ExactChecker()
    ok(c, "1 2\n3\n", "1 2\n3\n")
    bad(c, "1 2\n3\n", "1 2\n3")          # missing trailing newline
    bad(c, "1 2\n", "1  2\n")             # inner whitespace
    r = bad(c, "a\nb\n", "a\nc\n")
    assert "line 2" in r.diff and "'b'" in r.diff and "'c'" in r.diff
    r = bad(c, "x\n", "x\r\n")
    assert "line endings" in r.diff or "line 1" in r.diff


def test_lines_ignores_trailing_space_and_blank_lines_only():
    c = LinesChecker()
    ok(c, "1 2\n3\n", "1 2   \n3\n\n\n")
    ok(c, "1 2\n3\n", "1 2\r\n3")
    bad(c, "1 2\n3\n", "1  2\n3\n")       # inner spacing matters
    bad(c, "1 2\n3\n", " 1 2\n3\n")       # leading spacing matters
    r = bad(c, "1\n2\n", "1\n")
    assert "ended early" in r.diff


def test_tokens_default_whitespace_insensitive_case_sensitive():
    c = make_checker(None)
    assert isinstance(c, TokensChecker) and c.tag == f"tokens@{CHECKER_VERSION['tokens']}"
    ok(c, "1 2 3\n", "1\n2\t3")
    ok(c, "YES\n", "  YES  ")
    ok(c, "", "\n \n")
    bad(c, "YES\n", "yes\n")              # not lower-cased
    r = bad(c, "1 2 3 4\n", "1 2 5 4\n")
    assert "token 3" in r.diff and "'3'" in r.diff and "'5'" in r.diff
    r = bad(c, "1 2 3\n", "1 2\n")
    assert "ended early" in r.diff
    r = bad(c, "1 2\n", "1 2 3\n")
    assert "extra output" in r.diff and "'3'" in r.diff


def test_diff_is_short_on_huge_outputs():
    c = TokensChecker()
    exp = " ".join(str(i) for i in range(200000))
    got = exp.replace(" 123456 ", " 999999 ")
    r = bad(c, exp, got)
    assert len(r.diff) <= 400 and "123456" in r.diff and "999999" in r.diff


# --------------------------------------------------------------------------- float


def test_float_tolerance_absolute_or_relative():
    c = FloatChecker(abs_tol=1e-6, rel_tol=1e-6)
    ok(c, "0.333333333\n", "0.3333333")
    ok(c, "1000000.5\n", "1000000.9")         # relative 4e-7
    bad(c, "1000000.5\n", "1000003")          # relative 2.5e-6 and absolute 2.5
    ok(c, "1e-9\n", "0")                      # absolute
    ok(c, "nan inf -inf\n", "NaN inf -inf")
    bad(c, "inf\n", "-inf")
    bad(c, "nan\n", "0")
    ok(c, "Case 1: 2.50\n", "Case 1: 2.5")    # words compared exactly, numbers with tolerance
    bad(c, "Case 1: 2.50\n", "case 1: 2.5")
    bad(c, "1.0 2.0\n", "1.0")
    r = bad(c, "1.0 2.0 3.0\n", "1.0 2.1 3.0")
    assert "token 2" in r.diff


def test_float_plain_integers_stay_exact_and_odd_numbers_rejected():
    c = FloatChecker(abs_tol=1e-3, rel_tol=1e-3)
    bad(c, "100000\n", "100001")              # two plain integers: exact
    ok(c, "100000\n", "100000.5")             # one is a float: tolerance applies
    bad(c, "1.5\n", "1_5")
    bad(c, "1.5\n", "0x1")
    assert parse_number("1e5") == 1e5 and parse_number("1_0") is None and parse_number("abc") is None


# --------------------------------------------------------------------------- unordered / sets


def test_lines_unordered_is_a_multiset_of_token_lines():
    c = LinesUnorderedChecker()
    ok(c, "a b\nc d\n", "c  d\na b\n\n")
    bad(c, "a b\na b\nc\n", "a b\nc\n")           # multiplicity counts
    r = bad(c, "a b\nc\n", "a b\nx\n")
    assert "missing line" in r.diff and "unexpected line" in r.diff
    bad(c, "a b\n", "b a\n")                      # tokens inside a line keep their order


def test_sets_lines_in_order_tokens_free_within_a_line():
    c = SetsChecker()
    ok(c, "1 2 3\n4 5\n", "3 1 2\n5 4\n\n")
    bad(c, "1 2 3\n4 5\n", "4 5\n1 2 3\n")        # line order matters
    bad(c, "1 1 2\n", "1 2\n")                   # multiplicity within a line counts
    bad(c, "1 2\n", "1 2 2\n")


def test_make_checker_from_specs():
    assert isinstance(make_checker("exact"), ExactChecker)
    assert isinstance(make_checker({"type": "lines_unordered"}), LinesUnorderedChecker)
    f = make_checker({"type": "float", "abs_tol": 0.5, "rel_tol": 0})
    assert isinstance(f, FloatChecker) and f.check("1.0", "1.4").ok and not f.check("1.0", "1.6").ok
    p = make_checker({"type": "program", "code": "print(1)", "language": "python"})
    assert isinstance(p, ProgramChecker) and p.tag == "program@1"
    with pytest.raises(ValueError):
        make_checker("nonsense")
    for name in ("exact", "lines", "tokens", "float", "lines_unordered", "sets", "program", "values"):
        assert CHECKER_VERSION[name] >= 1


# --------------------------------------------------------------------------- values (function kind)


def test_values_exact_python_equality_with_nan_and_lenient_sequences():
    v = ValueChecker()
    assert v.check_value(3, 3).ok
    assert v.check_value(3, 3.0).ok                 # Python: 3 == 3.0
    assert not v.check_value(3, 4).ok
    assert v.check_value([1, [2, 3]], (1, (2, 3))).ok   # list == tuple (default, like LCB/EvalPlus)
    assert not ValueChecker(seq_lenient=False).check_value([1, 2], (1, 2)).ok
    assert v.check_value(math.nan, math.nan).ok
    assert v.check_value([math.nan, math.inf], [math.nan, math.inf]).ok
    assert not v.check_value(math.inf, -math.inf).ok
    assert v.check_value({"a": [1, 2]}, {"a": [1, 2]}).ok
    assert not v.check_value({"1": 2}, {1: 2}).ok    # keys keep their types
    assert v.check_value({1, 2}, {2, 1}).ok
    assert not v.check_value([1, 2], {1, 2}).ok
    assert not v.check_value("1", 1).ok
    assert not v.check_value(None, 0).ok
    assert not v.check_value(b"ab", "ab").ok
    assert v.check_value(10 ** 400, 10 ** 400).ok and not v.check_value(10 ** 400, 1e308).ok
    r = v.check_value([[1, 2], [3, 4]], [[1, 2], [3, 5]])
    assert not r.ok and "[1][1]" in r.diff and "4" in r.diff and "5" in r.diff
    assert not v.check_value(1, Repr("<object>", "X")).ok   # unserialisable values equal nothing


def test_values_strict_types_and_tolerance():
    strict = ValueChecker(strict_types=True)
    assert not strict.check_value(1, True).ok
    assert not strict.check_value(1, 1.0).ok
    assert strict.check_value([1, "a"], [1, "a"]).ok
    tol = make_value_checker({"type": "float", "abs_tol": 1e-6, "rel_tol": 1e-6})
    assert tol.check_value([0.1 + 0.2, {"x": 1.0}], [0.3, {"x": 1.0000000001}]).ok
    assert not tol.check_value(0.3, 0.31).ok
    assert tol.check_value({0.3}, {0.1 + 0.2}).ok          # sets of floats with tolerance
    assert make_value_checker("exact").check_value(0.1 + 0.2, 0.30000000000000004).ok
    assert not make_value_checker("exact").check_value(0.3, 0.1 + 0.2).ok


# --------------------------------------------------------------------------- program checker protocol


def _res(code=0, out="", err="", status=None):
    st = status or ("ok" if code == 0 else "runtime_error")
    return ExecResult(status=st, exit_code=code, stdout=out, stderr=err)


def test_program_checker_exit_codes():
    p = ProgramChecker("pass")
    r = p.interpret(_res(0))
    assert r.ok and r.score == 1.0
    r = p.interpret(_res(0, out="0.75\n"))
    assert r.ok and r.score == 0.75
    r = p.interpret(_res(1, err="wrong: expected 3, got 4"))
    assert not r.ok and not r.failed and "expected 3" in r.diff
    r = p.interpret(_res(2, err="bad format"))
    assert not r.ok and not r.failed and "presentation" in r.message
    r = p.interpret(_res(3, err="checker bug"))
    assert r.failed
    r = p.interpret(_res(7, out="0.4\n"))
    assert not r.ok and r.score == pytest.approx(0.4) and not r.failed
    r = p.interpret(_res(7, err="points 0.5\n"))
    assert r.score == pytest.approx(0.5)
    r = p.interpret(_res(7, out="1\n"))
    assert r.ok and r.score == 1.0
    r = p.interpret(_res(7, out="garbage"))
    assert r.failed
    r = p.interpret(_res(7, out="5"))
    assert r.score == 1.0                                  # clamped into [0, 1]
    r = p.interpret(_res(None, status="timeout"))
    assert r.failed and not r.ok
    r = p.interpret(_res(42))
    assert r.failed
