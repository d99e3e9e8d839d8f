"""Grading like SWE-bench's harness (issue 27 item 4): a FAIL_TO_PASS / PASS_TO_PASS id is matched
as SWE-bench's parser names the test -- ``parse_log_pytest`` keeps a pytest id up to its first
space, so published lists hold ``tests/test_x.py::test_y[required-Missing`` --, every outcome the
harness grades FULL is FULL here, and an id that stands for several tests never turns a failure
into a pass. The harness itself (the ``swebench`` package's parser and grading functions) is the
reference."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import xml.sax.saxutils as su

import pytest

from codegym.judge.kinds.repo import CommandRun, evaluate_case
from codegym.judge.logs.junit import nodeid_to_junit
from codegym.judge.logs.pytest import group_status, parse_results
from codegym.judge.logs.swebench import harness_key, official_parser

grading = pytest.importorskip("swebench.harness.grading")


class _Parsers:
    def __getitem__(self, name):
        return official_parser(name)


#: SWE-bench's parsers by name (swebench 4.x and 5.x)
PARSE = _Parsers()

#: pytest's -rA summary order: passes, skips, xfails, xpasses, errors, failures
_ORDER = {"passed": 0, "skipped": 1, "xfail": 2, "error": 3, "failed": 4}
_WORD = {"passed": "PASSED", "skipped": "SKIPPED", "xfail": "XFAIL", "error": "ERROR", "failed": "FAILED"}


def summary_log(results: dict[str, str], nested: list[str] = ()) -> str:
    """pytest's ``-rA`` short test summary of {node id: status}: a skip has no id of its own;
    `nested`: lines a nested run printed (captured output, shown before the summary)."""
    lines = [*nested, "=========================== short test summary info ============================"]
    for tid, st in sorted(results.items(), key=lambda kv: _ORDER[kv[1]]):
        if st == "skipped":
            lines.append(f"SKIPPED [1] {tid.split('::')[0]}:3: not today")
        elif st in ("failed", "error"):
            lines.append(f"{_WORD[st]} {tid} - AssertionError: boom")
        else:
            lines.append(f"{_WORD[st]} {tid}")
    counts = {}
    for st in results.values():
        counts[st] = counts.get(st, 0) + 1
    plural = {"passed": "passed", "failed": "failed", "error": "errors", "skipped": "skipped", "xfail": "xfailed"}
    lines.append("==== " + ", ".join(f"{n} {plural[st]}" for st, n in counts.items()) + " in 0.12s ====")
    return "\n".join(lines) + "\n"


def junit_xml(results: dict[str, str]) -> str:
    """pytest's junit file of {node id: status} (classname::name as pytest mangles them)."""
    cases = []
    for tid, st in results.items():
        cls, _, name = nodeid_to_junit(tid).rpartition("::")
        body = {"passed": "", "failed": "<failure message='boom'/>", "error": "<error message='boom'/>",
                "skipped": "<skipped type='pytest.skip' message='no'/>",
                "xfail": "<skipped type='pytest.xfail' message='x'/>"}[st]
        cases.append(f"<testcase classname={su.quoteattr(cls)} name={su.quoteattr(name)}>{body}</testcase>")
    return f"<testsuites><testsuite>{''.join(cases)}</testsuite></testsuites>"


def harness_resolution(log: str, f2p: list[str], p2p: list[str], parser: str = "parse_log_pytest") -> str:
    sm = PARSE[parser](log, None)
    report = grading.get_eval_tests_report(sm, {"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p})
    return grading.get_resolution_status(report).removeprefix("RESOLVED_")


def our_resolution(results: dict[str, str], f2p: list[str], p2p: list[str], junit: bool,
                   parser: str | None = None, nested: list[str] = ()) -> str:
    log = summary_log(results, nested)
    run = CommandRun("ok", rc=1, output=log, junit=junit_xml(results) if junit else None)
    f = [evaluate_case([t], run, parser)[0] for t in f2p]
    p = [evaluate_case([t], run, parser)[0] for t in p2p]
    a, b = (sum(f) / len(f) if f else 1), (sum(p) / len(p) if p else 1)
    return "FULL" if a == 1 and b == 1 else "PARTIAL" if 0 < a < 1 and b == 1 else "NO"


def test_cut_ids_stand_for_their_tests():
    results = {
        "tests/test_x.py::test_y[required-Missing value]": "passed",
        "tests/test_x.py::test_y[required-Missing other]": "passed",
        "tests/test_x.py::test_z[a b]": "failed",          # one of two fails: the cut id fails
        "tests/test_x.py::test_z[a c]": "passed",
        "tests/test_x.py::test_w[x y]": "skipped",         # a skip has no line in the harness's log
        "tests/test_x.py::test_w[x z]": "passed",
        "tests/test_x.py::test_v[q r]": "skipped",         # only skips: not a pass
        "tests/test_x.py::test_u[k l]": "xfail",
        "tests/test_x.py::test_t[m n]": "error",
    }
    for junit in (False, True):
        log = summary_log(results)
        res = parse_results(log, junit_xml(results) if junit else None)
        assert res.source == ("junit" if junit else "pytest")
        sm = PARSE["parse_log_pytest"](log, None)
        for key in ["tests/test_x.py::test_y[required-Missing", "tests/test_x.py::test_z[a",
                    "tests/test_x.py::test_w[x", "tests/test_x.py::test_v[q", "tests/test_x.py::test_u[k",
                    "tests/test_x.py::test_t[m"]:
            assert (res.status_of(key) == "passed") == grading.test_passed(key, sm), (junit, key)
        assert res.status_of("tests/test_x.py::test_z[a") == "failed"
        assert res.status_of("tests/test_x.py::test_v[q") == ("skipped" if junit else None)
        assert res.status_of("tests/test_x.py::test_y[required-Missing value]") == "passed"   # full ids too
        assert res.status_of("tests/test_x.py::test_y[required") is None   # not a key: no prefix match
        assert res.status_of("tests/test_x.py::test_y") is None


def test_group_status():
    assert group_status(["passed", "skipped"]) == "passed"
    assert group_status(["passed", "failed", "skipped"]) == "failed"
    assert group_status(["error", "failed"]) == "error"
    assert group_status(["skipped"]) == "skipped"


@pytest.mark.parametrize("seed", range(60))
def test_random_outcomes_grade_as_the_harness_grades(seed):
    """Random parametrized tests whose ids share their first word, random outcomes, lists made
    of the harness's own keys: our resolution equals the harness's on the same run, from the
    text report and from junit -- except where the harness's prefix fallback (swebench 5's
    ``_resolve_case``) matched an absent id to another test (``test_0[p``, all of whose tests
    were skipped, to ``test_0[p]``): codegym does not, so it is stricter there, never laxer."""
    rnd = random.Random(seed)
    results: dict[str, str] = {}
    for f in range(rnd.randint(1, 3)):
        for t in range(rnd.randint(1, 4)):
            for k in range(rnd.randint(1, 4)):
                words = rnd.choice([["p"], ["p", "q"], ["p", "r s"], [f"v{k}"]])
                tid = f"tests/test_{f}.py::test_{t}[{' '.join(words)}{k if len(words) > 1 else ''}]"
                results[tid] = rnd.choice(["passed", "passed", "passed", "failed", "error", "skipped", "xfail"])
    # lines of nested runs' live logs (``PASSED   [ 50%]``): the harness's parser takes ids from them
    nested = [f"{rnd.choice(['PASSED', 'FAILED', 'ERROR', 'SKIPPED'])}{' ' * rnd.randint(1, 60)}"
              f"[{rnd.choice([' 50%]', '100%]', '100%]----------'])}" for _ in range(rnd.randint(0, 4))]
    keys = sorted({harness_key(t) for t in results})
    keys += sorted({line.split()[1] for line in nested})   # listed as the published lists list them
    rnd.shuffle(keys)
    cut = rnd.randint(0, len(keys))
    f2p, p2p = keys[:cut], keys[cut:]
    log = summary_log(results, nested)
    want = harness_resolution(log, f2p, p2p)
    sm = PARSE["parse_log_pytest"](log, None)
    prefix_matched = any(k not in sm and grading.test_passed(k, sm) for k in keys)
    # a listed id the harness read as a skip counts neither way there; here it is a pass: the same
    # FULL, and PARTIAL where the harness may say NO (no pass but that id, and a failure)
    ignored = any(sm.get(k) == "SKIPPED" for k in keys)
    for junit in (False, True):
        ours = our_resolution(results, f2p, p2p, junit=junit, nested=nested)
        assert (ours == want or (prefix_matched and want == "FULL" and ours != "FULL")
                or (ignored and want != "FULL" and ours != "FULL")), (junit, ours, want)
        assert ours != "FULL" or want == "FULL"


def test_the_options_parser_trims_paths_as_the_harness_does():
    """psf/requests, pylint, pydicom: SWE-bench keeps the last part of a path parameter."""
    results = {"tests/test_x.py::test_p[/tmp/pytest-of-root/pytest-3/test_p0/data.txt]": "passed",
               "tests/test_x.py::test_p[/tmp/pytest-of-root/pytest-3/test_p1/other.txt]": "failed"}
    log = summary_log(results)
    for f2p, want in ((["tests/test_x.py::test_p[/data.txt]"], "FULL"),
                      (["tests/test_x.py::test_p[/other.txt]"], "NO")):
        assert harness_resolution(log, f2p, [], "parse_log_requests") == want
        for junit in (False, True):
            assert our_resolution(results, f2p, [], junit, parser="parse_log_requests") == want
    line = "PASSED tests/test_x.py::test_p[a b]"   # astropy: cut by swebench 4, whole in swebench 5
    assert harness_key(line[7:], "parse_log_astropy") == next(iter(PARSE["parse_log_astropy"](line, None)))
    assert harness_key("test_a (m.T)", "parse_log_django") is None


def test_a_real_pytest_run_with_spaced_ids(tmp_path):
    """pytest itself: ids with spaces cut as the published lists cut them grade as the harness grades."""
    (tmp_path / "test_ids.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('v', ['Missing value', 'Missing other', 'a b', 'a c', 'x - y', 'x z'])\n"
        "def test_p(v):\n    assert v not in ('a c', 'x z')\n"
        "@pytest.mark.parametrize('v', ['s kip', 's ok'])\n"
        "def test_s(v):\n    if v == 's kip':\n        pytest.skip('no')\n", encoding="utf-8")
    p = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                        f"--junitxml={tmp_path / 'j.xml'}", "test_ids.py"], cwd=tmp_path, capture_output=True,
                       text=True, env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    sm = PARSE["parse_log_pytest"](p.stdout, None)
    assert set(sm) >= {"test_ids.py::test_p[Missing", "test_ids.py::test_p[a", "test_ids.py::test_p[x",
                       "test_ids.py::test_s[s"}
    for junit in (None, (tmp_path / "j.xml").read_text()):
        res = parse_results(p.stdout, junit)
        for key in sm:   # ``[1]`` of a SKIPPED line: neither passed nor failed there, a pass here
            ignored = "::" not in key and sm[key] == "SKIPPED"
            assert (res.status_of(key) == "passed") == (grading.test_passed(key, sm) or ignored), key
        run = CommandRun("ok", rc=1, output=p.stdout, junit=junit)
        ok, _, _, st = evaluate_case(["test_ids.py::test_p[Missing", "test_ids.py::test_s[s"], run)
        assert ok and st == {"test_ids.py::test_p[Missing": "passed", "test_ids.py::test_s[s": "passed"}
        ok, _, _, st = evaluate_case(["test_ids.py::test_p[a", "test_ids.py::test_p[x"], run)
        assert not ok and set(st.values()) == {"failed"}


def test_an_unexpected_pass_is_no_pass(tmp_path):
    """SWE-bench's parser records no XPASS line (the test is missing: a failure); junit writes a
    non-strict XPASS as a pass, so pytest's -rA line decides."""
    (tmp_path / "test_x.py").write_text("import pytest\n@pytest.mark.xfail\ndef test_a():\n    pass\n"
                                        "@pytest.mark.xfail\ndef test_b():\n    assert 0\n")
    p = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                        f"--junitxml={tmp_path / 'j.xml'}", "test_x.py"], cwd=tmp_path, capture_output=True,
                       text=True, env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    sm = PARSE["parse_log_pytest"](p.stdout, None)
    for junit in (None, (tmp_path / "j.xml").read_text()):
        res = parse_results(p.stdout, junit)
        for tid in ("test_x.py::test_a", "test_x.py::test_b"):
            assert (res.status_of(tid) == "passed") == grading.test_passed(tid, sm), (junit is None, tid)
        assert res.status_of("test_x.py::test_a") == "failed"


def test_ids_the_harness_reads_from_nested_runs_live_logs(tmp_path):
    """pytest-dev__pytest-5227 lists ``[``, ``[100%]`` in PASS_TO_PASS: SWE-bench's parser read them
    from the ``PASSED   [100%]`` lines a nested pytest run with live logging prints. An id that
    is no node id has the status the harness reads from the same text log -- a pass where the
    harness has one, a failure where its last line is a failure, missing where it has none."""
    (tmp_path / "test_nested.py").write_text(
        "import os\npytest_plugins = 'pytester'\n"
        "def test_inner(testdir):\n"
        "    testdir.makepyfile('import logging, os\\ndef test_a():\\n    logging.warning(\"x\")\\n'\n"
        "                       'def test_b():\\n    logging.warning(\"y\")\\n'\n"
        "                       '    assert os.environ.get(\"NESTED_FAIL\") is None\\n')\n"
        "    testdir.makeini('[pytest]\\nlog_cli = true\\n')\n"
        "    print(testdir.runpytest_subprocess('-v').stdout.str())\n", encoding="utf-8")
    for fail, listed, want in ((None, ["[", "[100%]"], "FULL"), ("1", ["[100%]"], "NO"),
                               (None, ["[100%]", "[7%]"], "NO")):
        env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        if fail:
            env["NESTED_FAIL"] = fail
        p = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider",
                            f"--junitxml={tmp_path / 'j.xml'}", "test_nested.py"], cwd=tmp_path,
                           capture_output=True, text=True, env=env)
        sm = PARSE["parse_log_pytest"](p.stdout, None)
        assert "[100%]" in sm, p.stdout[-2000:]
        f2p, p2p = ["test_nested.py::test_inner"], listed
        assert harness_resolution(p.stdout, f2p, p2p) == want, (fail, listed, sm)
        for junit in (None, (tmp_path / "j.xml").read_text()):
            run = CommandRun("ok", rc=p.returncode, output=p.stdout, junit=junit)
            ok = [evaluate_case([t], run)[0] for t in f2p + p2p]
            assert ("FULL" if all(ok) else "NO") == want, (fail, listed, junit is None, ok)
    # a unittest report is not read this way (its ids are dotted names; a printed line forges nothing)
    res = parse_results("PASSED [100%]\ntest_a (m.T) ... ok\n\nRan 1 test in 0.0s\n\nOK\n")
    assert res.source == "unittest" and res.status_of("[100%]") is None
