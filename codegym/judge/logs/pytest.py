"""Per-test results read from a Python test run's log (`TestResults`).

`parse_unittest` reads ``python -m unittest -v`` (status lines, subtests, ``FAIL:`` /
``ERROR:`` sections, import failures, the ``Ran N tests`` summary); `parse_results`
picks it or pytest's report (junit XML, ``-rA`` lines, count lines: read by
`codegym.judge.logs.junit.parse_test_report`). Test ids are unittest's dotted ids, pytest
node ids or SWE-bench's Django form ``test_y (tests.test_x.Class)`` (`django_to_dotted`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from codegym.judge.logs.junit import nodeid_to_junit, parse_test_report

__all__ = ["TestResults", "parse_unittest", "parse_results", "django_to_dotted"]

#: unittest's class and module fixtures: their failures are errors outside tests
_LIFECYCLE = frozenset({"setUpClass", "tearDownClass", "setUpModule", "tearDownModule"})


def django_to_dotted(test_id: str) -> str | None:
    """``test_y (tests.test_x.Class)`` -> ``tests.test_x.Class.test_y`` (None: not that form)."""
    m = re.fullmatch(r"(\S+) \(([\w.]+)\)", test_id.strip())
    return f"{m.group(2)}.{m.group(1)}" if m else None


@dataclass
class TestResults:
    """Per-test statuses read from a run's report.

    statuses  id -> passed | failed | error | skipped (the worst one if an id repeats)
    complete  the runner reached its final summary (a crash or an exit mid-run: False)
    ran       number of tests the runner says it ran (None: unknown)
    errors    collection / import / class-fixture errors, as text
    source    unittest | junit | summary | counts | none
    """

    __test__ = False

    statuses: dict[str, str] = field(default_factory=dict)
    complete: bool = False
    ran: int | None = None
    errors: list[str] = field(default_factory=list)
    source: str = "none"

    def status_of(self, test_id: str) -> str | None:
        if test_id in self.statuses:
            return self.statuses[test_id]
        dotted = django_to_dotted(test_id)
        if dotted and dotted in self.statuses:
            return self.statuses[dotted]
        if "::" in test_id:
            return self.statuses.get(nodeid_to_junit(test_id))
        return None

    @property
    def failures(self) -> int:
        return sum(1 for s in self.statuses.values() if s in ("failed", "error"))


_SEVERITY = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_UT_STATUS = r"ok|FAIL|ERROR|skipped(?: .*)?|expected failure|unexpected success"
_UT_LINE = re.compile(r"^(?P<name>[^\s()]+) \((?P<paren>[^\s()]+)\)(?P<sub> \(.*\))?"
                      r"(?: (?P<doc>.*?))? \.\.\. ?(?P<status>" + _UT_STATUS + r")?\s*$")
_UT_HEADER = re.compile(r"^(?P<name>[^\s()]+) \((?P<paren>[^\s()]+)\)\s*$")
_UT_START = re.compile(r"^(?P<name>[^\s()]+) \((?P<paren>[^\s()]+)\)(?: [^()]*?)? \.\.\. ")
_UT_DOC_STATUS = re.compile(r"^.* \.\.\. (?P<status>" + _UT_STATUS + r")\s*$")
_UT_BARE_STATUS = re.compile(r"^(?P<status>" + _UT_STATUS + r")\s*$")
_UT_SECTION = re.compile(r"^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>[^\s()]+) "
                         r"\((?P<paren>[^\s()]+)\)(?: \(.*\))?\s*$")
_UT_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*$")
_UT_RAN_ANY = re.compile(r"^Ran \d+ tests? in ", re.M)
_UT_LINE_ANY = re.compile(_UT_LINE.pattern, re.M)
_FAILED_TEST = "unittest.loader._FailedTest."


def _ut_status(word: str) -> str:
    if word == "ok" or word == "expected failure":
        return "passed"
    if word.startswith("skipped"):
        return "skipped"
    if word == "ERROR":
        return "error"
    return "failed"  # FAIL, unexpected success


def parse_unittest(output: str) -> TestResults:
    """Read ``python -m unittest -v`` output (Python 3.8+: ``name (module.Class)``,
    3.11+: ``name (module.Class.name)``)."""
    res = TestResults(source="unittest")

    def put(name: str, paren: str, status: str) -> None:
        if paren.startswith(_FAILED_TEST):
            res.errors.append(f"{paren[len(_FAILED_TEST):]}: could not be imported")
            return
        if name in _LIFECYCLE:
            res.errors.append(f"{name} ({paren}): {status}")
            return
        tid = paren if paren.endswith("." + name) else f"{paren}.{name}"
        old = res.statuses.get(tid)
        if old is None or _SEVERITY[status] > _SEVERITY[old]:
            res.statuses[tid] = status

    pending: tuple[str, str] | None = None
    for raw in output.splitlines():
        line = raw.strip()
        m = _UT_RAN.match(line)
        if m:
            res.ran, res.complete = int(m.group(1)), True
            pending = None
            continue
        m = _UT_SECTION.match(line)
        if m:
            put(m.group("name"), m.group("paren"), "error" if m.group("kind") == "ERROR" else "failed")
            pending = None
            continue
        m = _UT_LINE.match(line)
        if m:
            name, paren, status = m.group("name"), m.group("paren"), m.group("status")
            if m.group("sub"):  # a subtest: only failures are reported
                if status and _ut_status(status) in ("failed", "error"):
                    put(name, paren, _ut_status(status))
                continue
            if status:
                put(name, paren, _ut_status(status))
                pending = None
            else:  # status follows later (after the test's own output, or its subtests)
                pending = (name, paren)
            continue
        m = _UT_HEADER.match(line) or _UT_START.match(line)
        if m:  # the status follows: after a docstring line, or after the test's own output
            pending = (m.group("name"), m.group("paren"))
            continue
        if pending is not None:
            m = _UT_DOC_STATUS.match(line) or _UT_BARE_STATUS.match(line)
            if m:
                put(*pending, _ut_status(m.group("status")))
                pending = None
    return res


def parse_results(output: str, junit_xml: str | None = None) -> TestResults:
    """Per-test results of a run: junit XML when given, else unittest's verbose report,
    else pytest's ``-rA`` / count lines (`parse_test_report`)."""
    if not junit_xml and (_UT_RAN_ANY.search(output) or _UT_LINE_ANY.search(output)
                          and not re.search(r"^(PASSED|FAILED|ERROR) \S+::", output, re.M)):
        return parse_unittest(output)
    rep = parse_test_report(output, junit_xml)
    res = TestResults(statuses=dict(rep.statuses), source=rep.source)
    if rep.source == "junit":
        res.complete = True
    elif rep.counts:
        res.complete = True
        res.ran = sum(v for k, v in rep.counts.items() if k in ("passed", "failed", "error", "xfailed", "xpassed"))
    if not res.statuses and res.ran is None and rep.counts:
        res.ran = 0
    if re.search(r"^(?:ERROR collecting|E\s+\w+Error)", output, re.M) and rep.counts.get("error"):
        res.errors.append("collection errors")
    return res
