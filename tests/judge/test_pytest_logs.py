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


# --------------------------------------------------------------------------- pytest text, junit, official parsers

COLOURED = (
    "\x1b[1m============================= test session starts ==============================\x1b[0m\n"
    "tests/test_t.py::test_sp[a b] \x1b[32mPASSED\x1b[0m\x1b[32m                                 [ 20%]\x1b[0m\n"
    "tests/test_t.py::T::test_br[x-[1, 2]] \x1b[31mFAILED\x1b[0m\x1b[31m                        [ 40%]\x1b[0m\n"
    "\x1b[32mPASSED\x1b[0m tests/test_t.py::test_sp[a b]\n"
    "\x1b[32mPASSED\x1b[0m tests/test_t.py::test_uni[\\xe9t\\xe9]\n"
    "\x1b[33mXFAIL\x1b[0m tests/test_t.py::test_xf - reason\n"
    "\x1b[31mFAILED\x1b[0m tests/test_t.py::T::test_br[x-[1, 2]] - AssertionError: a - b\n"
    "\x1b[31mFAILED\x1b[0m tests/test_t.py::test_dash[p - q] - assert 0\n"
    "\x1b[33mSKIPPED\x1b[0m [1] tests/test_t.py:9: no reason\n"
    "\x1b[31m=================== \x1b[31m\x1b[1m2 failed\x1b[0m, \x1b[32m2 passed\x1b[0m, "
    "\x1b[33m1 xfailed\x1b[0m\x1b[31m in 0.05s\x1b[0m\x1b[31m ===================\x1b[0m\n")


def test_pytest_text_with_colour_spaces_brackets_unicode():
    r = parse_results(COLOURED)
    assert r.source == "pytest" and r.complete
    assert r.statuses == {"tests/test_t.py::test_sp[a b]": "passed", "tests/test_t.py::test_uni[\\xe9t\\xe9]": "passed",
                          "tests/test_t.py::test_xf": "passed", "tests/test_t.py::T::test_br[x-[1, 2]]": "failed",
                          "tests/test_t.py::test_dash[p - q]": "failed"}
    assert r.status_of("tests/test_t.py::test_uni[été]") == "passed"   # the unescaped id finds it too
    assert not parse_results(COLOURED.rsplit("\n", 2)[0]).complete     # no final line: unfinished


def test_pytest_teardown_error_after_pass_is_an_error():
    r = parse_results("PASSED a.py::t\nERROR a.py::t - teardown boom\n=== 1 passed, 1 error in 0.1s ===\n")
    assert r.statuses == {"a.py::t": "error"}


def test_junit_xfail_passes_collection_error_listed():
    xml = ('<testsuites><testsuite name="pytest">'
           '<testcase classname="tests.test_t" name="test_sp[a b]"/>'
           '<testcase classname="tests.test_t" name="test_xf"><skipped type="pytest.xfail" message="x"/></testcase>'
           '<testcase classname="tests.test_t" name="test_sk"><skipped type="pytest.skip" message="x"/></testcase>'
           '<testcase classname="tests.test_t" name="test_sp[a b]"><error message="teardown"/></testcase>'
           '<testcase classname="" name="tests.test_broken"><error message="collection failure"/></testcase>'
           '</testsuite></testsuites>')
    r = parse_results("garbage", xml)
    assert r.source == "junit" and r.complete
    assert r.status_of("tests/test_t.py::test_xf") == "passed"
    assert r.status_of("tests/test_t.py::test_sk") == "skipped"
    assert r.status_of("tests/test_t.py::test_sp[a b]") == "error"
    assert any("tests.test_broken" in e for e in r.errors)


def test_a_real_pytest_run_in_colour_parses_from_text_and_junit(tmp_path):
    """pytest itself (--color=yes, -rA, -v) on ids with spaces, brackets and unicode: the text
    report and the junit file give the same statuses."""
    import os
    import subprocess
    import sys
    (tmp_path / "test_ids.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('v', ['a b', 'x - y', 'été', '[1, 2]'])\n"
        "def test_p(v):\n    assert v != 'x - y'\n"
        "@pytest.mark.xfail\ndef test_xf():\n    assert 0\n", encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-v", "--color=yes", "-p", "no:cacheprovider",
                        f"--junitxml={tmp_path / 'j.xml'}", "test_ids.py"], cwd=tmp_path, capture_output=True,
                       text=True, env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert "\x1b[" in p.stdout
    text = parse_results(p.stdout)
    junit = parse_results("", (tmp_path / "j.xml").read_text())
    ids = ["test_ids.py::test_p[a b]", "test_ids.py::test_p[x - y]", "test_ids.py::test_p[été]",
           "test_ids.py::test_p[[1, 2]]", "test_ids.py::test_xf"]
    want = ["passed", "failed", "passed", "passed", "passed"]
    assert [text.status_of(i) for i in ids] == want and text.complete
    assert [junit.status_of(i) for i in ids] == want


def test_official_swebench_parsers_where_they_apply():
    pytest.importorskip("swebench.harness.log_parsers")
    from codegym.judge.logs.swebench import official_statuses  # swebench 4.x and 5.x alike
    # the judge's pytest reader agrees with SWE-bench's (v2: ANSI stripped, ids with spaces)
    official = official_statuses("parse_log_pytest_v2", COLOURED)
    ours = parse_results(COLOURED).statuses
    assert official
    for tid, st in official.items():
        if tid in ours:
            assert ours[tid] == st, tid
    # a task naming SWE-bench's Django parser is read with it
    log = ("test_a (m.tests.T) ... ok\ntest_b (m.tests.T) ... FAIL\n\nRan 2 tests in 0.1s\n\nFAILED (failures=1)\n")
    r = parse_results(log, parser="parse_log_django")
    assert r.source == "swebench:parse_log_django" and r.complete
    assert r.status_of("test_a (m.tests.T)") == "passed" and r.status_of("test_b (m.tests.T)") == "failed"
