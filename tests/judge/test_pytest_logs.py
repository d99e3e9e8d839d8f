"""Test-log parsing of repo tasks (codegym.judge.logs.pytest): unittest's verbose report,
pytest's lines, and how a case reads them (codegym.judge.kinds.repo.evaluate_case)."""

from __future__ import annotations

import pytest

from codegym.judge.kinds.repo import CommandRun, evaluate_case
from codegym.judge.logs.pytest import parse_results, parse_unittest

UNITTEST_OUTPUT = """\
tests.test_broken (unittest.loader._FailedTest.tests.test_broken) ... ERROR
test_bad (tests.test_m.T.test_bad) ... FAIL
test_doc (tests.test_m.T.test_doc)
A docstring line. ... ok
test_err (tests.test_m.T.test_err) ... ERROR
test_ok (tests.test_m.T.test_ok) ... ok
test_noisy (tests.test_m.T.test_noisy) ... printed by the test
ok
test_skip (tests.test_m.T.test_skip) ... skipped 'because'
test_sub (tests.test_m.T.test_sub) ...
  test_sub (tests.test_m.T.test_sub) (i=2) ... FAIL
test_subok (tests.test_m.T.test_subok) ... ok
test_xf (tests.test_m.T.test_xf) ... expected failure
test_old (tests.test_old.U) ... ok
setUpClass (tests.test_m.V) ... ERROR

======================================================================
FAIL: test_bad (tests.test_m.T.test_bad)
----------------------------------------------------------------------
AssertionError: 3 != 4
----------------------------------------------------------------------
Ran 11 tests in 0.001s

FAILED (failures=2, errors=2, skipped=1, expected failures=1)
"""


def test_unittest_report_parsing():
    r = parse_results(UNITTEST_OUTPUT)
    assert r.source == "unittest" and r.complete and r.ran == 11
    assert r.statuses == {
        "tests.test_m.T.test_bad": "failed", "tests.test_m.T.test_doc": "passed",
        "tests.test_m.T.test_err": "error", "tests.test_m.T.test_ok": "passed",
        "tests.test_m.T.test_noisy": "passed", "tests.test_m.T.test_skip": "skipped",
        "tests.test_m.T.test_sub": "failed", "tests.test_m.T.test_subok": "passed",
        "tests.test_m.T.test_xf": "passed", "tests.test_old.U.test_old": "passed"}
    assert any("tests.test_broken" in e for e in r.errors) and any("setUpClass" in e for e in r.errors)
    assert r.status_of("test_old (tests.test_old.U)") == "passed"     # SWE-bench's Django form
    run = CommandRun("ok", rc=1, output=UNITTEST_OUTPUT)
    ok, score, message, st = evaluate_case(["tests.test_m.T.test_ok", "tests.test_m.T.test_skip",
                                                "tests.test_m.T.test_gone"], run)
    assert not ok and score == pytest.approx(1 / 3)
    assert st == {"tests.test_m.T.test_ok": "passed", "tests.test_m.T.test_skip": "skipped",
                  "tests.test_m.T.test_gone": "missing"}
    assert "missing from the report" in message
    # a forged pass before the real failing line: the worst status wins
    r = parse_unittest("test_a (m.T.test_a) ... ok\ntest_a (m.T.test_a) ... FAIL\nRan 1 test in 0.0s\n")
    assert r.statuses == {"m.T.test_a": "failed"}
    # no summary: not complete; no test ran: a case without ids fails
    assert not parse_unittest("test_a (m.T.test_a) ... ok\n").complete
    ok, *_ = evaluate_case([], CommandRun("ok", rc=0, output="\nRan 0 tests in 0.000s\n\nOK\n"))
    assert not ok


def test_pytest_reports_still_parse():
    out = ("PASSED tests/test_a.py::test_one\nFAILED tests/test_a.py::test_two - boom\n"
           "=== 1 failed, 1 passed in 0.1s ===\n")
    r = parse_results(out)
    assert r.complete and r.status_of("tests/test_a.py::test_one") == "passed"
    assert r.status_of("tests/test_a.py::test_two") == "failed"
    assert not parse_results("PASSED tests/test_a.py::test_one\n").complete
