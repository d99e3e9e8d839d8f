"""Test reports read from a test run's output: junit XML, pytest ``-rA`` lines, count lines.

`parse_test_report` takes the best source available (junit XML, else the ``PASSED id``
summary lines, else a "N passed, M failed" line) and returns a `TestReport`: a status per
test id and totals. `nodeid_to_junit` maps pytest node ids to junit ids.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field


@dataclass
class TestReport:
    """Statuses of test ids parsed from a test run's output."""

    __test__ = False

    statuses: dict[str, str] = field(default_factory=dict)   # id -> passed|failed|error|skipped
    counts: dict[str, int] = field(default_factory=dict)     # passed/failed/error/skipped totals
    source: str = "none"                                     # junit | summary | counts | none
    errors: list[str] = field(default_factory=list)          # collection errors (junit)

    def status_of(self, test_id: str) -> str | None:
        if test_id in self.statuses:
            return self.statuses[test_id]
        alt = nodeid_to_junit(test_id)
        return self.statuses.get(alt)


def nodeid_to_junit(nodeid: str) -> str:
    """pytest node id ``tests/test_x.py::TestA::test_b[1]`` -> junit ``tests.test_x.TestA::test_b[1]``
    (pytest's own ``mangle_test_address``: the parameters after the first ``[`` are kept
    whole, ``::`` in them included)."""
    path, bracket, params = nodeid.partition("[")
    parts = path.split("::")
    head = parts[0][:-3] if parts[0].endswith(".py") else parts[0]
    parts[0] = head.replace("/", ".")
    parts[-1] += bracket + params
    return f"{'.'.join(parts[:-1])}::{parts[-1]}" if len(parts) > 1 else parts[0]


def parse_junit(xml_text: str) -> TestReport:
    """Parse junit XML (pytest --junitxml); ids are ``classname::name``. An expected failure
    (``<skipped type="pytest.xfail">``) is a pass, as SWE-bench counts it; a collection
    error (a testcase without a classname) is listed in `TestReport.errors`. An id that
    repeats (a teardown error after a pass) keeps its worst status."""
    rep = TestReport(source="junit")
    root = ET.fromstring(xml_text)
    for tc in root.iter("testcase"):
        cls, name = tc.get("classname", ""), tc.get("name", "")
        tid = f"{cls}::{name}" if cls else name
        status = "passed"
        for child in tc:
            if child.tag == "failure":
                status = _worse(status, "failed")
            elif child.tag == "error":
                status = _worse(status, "error")
            elif child.tag == "skipped" and child.get("type") != "pytest.xfail":
                status = _worse(status, "skipped")
        if not cls and status == "error":
            rep.errors.append(f"{name}: collection failure")
        rep.statuses[tid] = _worse(rep.statuses.get(tid, "passed"), status) if tid in rep.statuses else status
        rep.counts[status] = rep.counts.get(status, 0) + 1
    return rep


_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def _worse(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


_SUMMARY_RE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+)")
_COUNT_RE = re.compile(r"(\d+)\s+(passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b")


def parse_test_report(output: str, junit_xml: str | None = None) -> TestReport:
    """Best available report: junit XML, else pytest ``-rA`` lines, else a count line."""
    if junit_xml:
        try:
            return parse_junit(junit_xml)
        except ET.ParseError:
            pass
    rep = TestReport(source="summary")
    mapping = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped",
               "XFAIL": "skipped", "XPASS": "passed"}
    for line in output.splitlines():
        m = _SUMMARY_RE.match(line.strip())
        if m and "::" in m.group(2) or (m and m.group(2).endswith(".py")):
            rep.statuses[m.group(2)] = mapping[m.group(1)]
    counts: dict[str, int] = {}
    for line in output.splitlines()[::-1]:
        found = _COUNT_RE.findall(line)
        if found:
            for n, what in found:
                key = "error" if what.startswith("error") else what
                counts[key] = int(n)
            break
    rep.counts = counts
    if not rep.statuses:
        rep.source = "counts" if counts else "none"
    return rep


