"""Julia's ``Test`` report: what a program using ``@testset`` printed.

`julia_test_report` reads the ``Test Summary:`` tables (their column set varies with the
outcome and the Julia version) and the ``Test Failed at`` / ``Error During Test at`` lines;
`julia_test_failures` is the check the judge adds to a script run's exit status 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class JuliaTestReport:
    """What Julia's Test library printed.

    summaries  number of ``Test Summary:`` tables seen
    passed, failed, errored, broken  totals over the summary tables (and the
               "Some tests did not pass: ..." line when there is no table)
    failures   first lines of ``Test Failed at`` / ``Error During Test at`` reports
    """

    summaries: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    broken: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """A summary was printed and it shows no failure or error."""
        return self.summaries > 0 and not self.failed and not self.errored and not self.failures


_SUMMARY_COLS = {"pass": "passed", "fail": "failed", "error": "errored", "broken": "broken"}
_DID_NOT_PASS = re.compile(r"Some tests did not pass:\s*(\d+)\s+passed,\s*(\d+)\s+failed,\s*(\d+)\s+errored,"
                           r"\s*(\d+)\s+broken")


def julia_test_report(output: str) -> JuliaTestReport:
    """Parse the output (stdout + stderr) of a Julia program using ``Test``.

    Reads every ``Test Summary: | Pass  Fail  Error  Broken  Total  Time`` table
    (the column set varies with the outcome and the Julia version) and the
    ``Test Failed at`` / ``Error During Test at`` lines."""
    rep = JuliaTestReport()
    lines = output.splitlines()
    seen_did_not_pass = None
    for k, line in enumerate(lines):
        s = line.strip()
        if s.startswith("Test Summary:") and "|" in s:
            cols = [c.lower() for c in s.split("|", 1)[1].split()]
            # the next line with a '|' holds the counts (right-aligned under the headers)
            for nxt in lines[k + 1:k + 4]:
                if "|" in nxt:
                    vals = nxt.split("|", 1)[1].split()
                    nums = [v for v in vals if v.isdigit()]
                    named = [c for c in cols if c != "time"]
                    # a zero column is printed blank in some versions: align from the right
                    # only when counts are missing
                    # (no counts at all: named[-0:] is every column, zipped with nothing)
                    pairs = zip(named, nums) if len(nums) == len(named) else zip(named[-len(nums):], nums)
                    for c, v in pairs:
                        attr = _SUMMARY_COLS.get(c)
                        if attr:
                            setattr(rep, attr, getattr(rep, attr) + int(v))
                    rep.summaries += 1
                    break
        elif "Test Failed at" in s or "Error During Test at" in s:
            rep.failures.append(s[:300])
        m = _DID_NOT_PASS.search(s)
        if m:
            seen_did_not_pass = m
    if rep.summaries == 0 and seen_did_not_pass is not None:
        p, f, e, b = (int(x) for x in seen_did_not_pass.groups())
        rep.passed, rep.failed, rep.errored, rep.broken = p, f, e, b
        rep.summaries = 1
    return rep


def julia_test_failures(stdout: str, stderr: str = "") -> str | None:
    """A message when Julia's test report shows a failure or an error (None when it
    shows none or there is no report) -- the check the judge adds to exit status 0."""
    rep = julia_test_report((stdout or "") + "\n" + (stderr or ""))
    if rep.failed or rep.errored or rep.failures:
        first = rep.failures[0] if rep.failures else ""
        return (f"Julia tests: {rep.passed} passed, {rep.failed} failed, {rep.errored} errored"
                + (f"; {first}" if first else ""))
    return None


