"""Per-test results read from a Python test run's log (`TestResults`).

`parse_unittest` reads ``python -m unittest -v`` (status lines, subtests, ``FAIL:`` /
``ERROR:`` sections, import failures, the ``Ran N tests`` summary); `parse_pytest` reads
pytest's text (``-rA`` summary and ``-v`` lines: ids with spaces, brackets, unicode; ANSI
colour stripped, `strip_ansi`); `parse_results` picks junit XML when the run wrote it, a
named official SWE-bench parser (`codegym.judge.logs.swebench`), or one of those. Test
ids are unittest's dotted ids, pytest node ids or SWE-bench's Django form
``test_y (tests.test_x.Class)`` (`django_to_dotted`); a listed id that names no test
exactly may be one as SWE-bench's parser wrote it (cut at its first space):
`TestResults.status_of` then answers for the tests it stands for (`group_status`); a
listed id that is no node id at all (``[100%]``: SWE-bench's parser read it from a line of
a nested run's output) has the status the harness reads from the same text log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from codegym.judge.logs.junit import nodeid_to_junit, parse_junit
from codegym.judge.logs.swebench import harness_key, harness_statuses, official_statuses

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    """`text` without terminal escape sequences (colours, cursor moves) or carriage returns."""
    return _ANSI_RE.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def escape_id(test_id: str) -> str:
    """A node id as pytest prints it: the non-ASCII characters of its parameter part
    escaped (``test_x[\\xe9]``), as pytest does unless told otherwise."""
    head, bracket, params = test_id.partition("[")
    if not bracket or params.isascii():
        return test_id
    return head + bracket + params.encode("unicode_escape").decode("ascii")


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
    log       the run's text log (for the ids SWE-bench's parser reads from it alone)
    """

    __test__ = False

    statuses: dict[str, str] = field(default_factory=dict)
    complete: bool = False
    ran: int | None = None
    errors: list[str] = field(default_factory=list)
    source: str = "none"
    log: str = field(default="", repr=False, compare=False)
    _key_cache: dict = field(default_factory=dict, repr=False, compare=False)

    def status_of(self, test_id: str, parser: str | None = None) -> str | None:
        """The status of a listed test id: the test it names (as given, pytest's escaped
        form, Django's form, junit's ``classname::name``), else -- an id as SWE-bench's
        parser wrote it: cut at its first space by ``parse_log_pytest`` (as the published
        lists have it), or as the task's parser `parser` records it -- the `group_status` of
        the tests whose `harness_key` it is; else, in a pytest run, for an id that is no node id
        (no ``::``: ``[100%]``, which SWE-bench's parser read from a ``PASSED  [100%]`` line of
        a nested run's live log), what the harness reads from the text log (`harness_statuses`),
        a skip there a pass: the harness counts a listed id it read as skipped neither passed
        nor failed, and codegym has no third verdict. None: no test."""
        forms = self._forms(test_id)
        for tid in forms:
            if tid in self.statuses:
                return self.statuses[tid]
        keys = self._keys(parser)
        for tid in forms:
            if tid in keys:
                return group_status(keys[tid])
        if "::" not in test_id and self.log and self.source in ("junit", "pytest"):
            return self._log_ids(parser).get(test_id)
        return None

    def _log_ids(self, parser: str | None) -> dict[str, str]:
        """`harness_statuses` of the log (once per parser), a skip read as a pass."""
        key = ("log", parser)
        if key not in self._key_cache:
            self._key_cache[key] = {tid: "passed" if st == "skipped" else st
                                    for tid, st in harness_statuses(self.log, parser).items()}
        return self._key_cache[key]

    @staticmethod
    def _forms(test_id: str) -> list[str]:
        out = []
        for tid in (test_id, escape_id(test_id)):
            out.append(tid)
            dotted = django_to_dotted(tid)
            if dotted:
                out.append(dotted)
            if "::" in tid:
                out.append(nodeid_to_junit(tid))
        return list(dict.fromkeys(out))

    def _keys(self, parser: str | None) -> dict[str, list[str]]:
        """{an id SWE-bench's parsers record for reported tests (``parse_log_pytest``'s,
        `parser`'s): the statuses of those tests}, without the ids that are their own key
        (built once per parser and state of `statuses`)."""
        if self._key_cache.get("n") != len(self.statuses):
            self._key_cache.clear()
            self._key_cache["n"] = len(self.statuses)
        if parser not in self._key_cache:
            keys: dict[str, list[str]] = {}
            for rid, st in self.statuses.items():
                for key in {harness_key(rid), harness_key(rid, parser) if parser else None}:
                    if key is not None and key != rid:
                        keys.setdefault(key, []).append(st)
            self._key_cache[parser] = keys
        return self._key_cache[parser]

    def put(self, test_id: str, status: str) -> None:
        """Record a status; when an id is reported twice the worst status stays."""
        old = self.statuses.get(test_id)
        if old is None or _SEVERITY[status] > _SEVERITY[old]:
            self.statuses[test_id] = status
            self._key_cache.clear()

    @property
    def failures(self) -> int:
        return sum(1 for s in self.statuses.values() if s in ("failed", "error"))


_SEVERITY = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def group_status(statuses: list[str]) -> str:
    """The status of a listed id that stands for several tests (SWE-bench's cut id): what
    SWE-bench's harness reads from pytest's ``-rA`` summary, where a skipped test has no
    line of its own and a failure's line comes after every pass -- failed (or error) when
    any of them failed, passed when none failed and one passed, else skipped. So the id
    passes only when each of its tests passed or was skipped, and one passed: an id that
    matches two different tests never turns a failure into a pass."""
    seen = [s for s in statuses if s != "skipped"]
    if not seen:
        return "skipped"
    worst = max(seen, key=_SEVERITY.__getitem__)
    return worst
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
    output = strip_ansi(output)

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


#: SWE-bench counts an expected failure as a pass, and an unexpected pass as no pass (its
#: parser records no XPASS line: the test is missing, a failure)
_PY_STATUS = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped",
              "XFAIL": "passed", "XPASS": "failed"}
_PY_SUMMARY = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (.+)$")
_PY_VERBOSE = re.compile(r"^(.+?::.+?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: +\[ *\d+%\])?\s*$")
#: pytest's final count line: framed by ``=`` (default), bare under ``-q``
_PY_FINAL = re.compile(r"^(=+ )?(?:.*\b(?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b.*"
                       r"|no tests ran.*) in [\d.]+s(?: \([\d:]+\))?(?(1) =+)$")
_PY_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")


def _summary_id(word: str, rest: str) -> str | None:
    """The node id of a ``-rA`` line: ``FAILED id - message`` ends at the first `` - `` outside
    brackets (parameter ids may hold spaces and dashes); a PASSED line is the id alone."""
    rest = rest.strip()
    if word in ("FAILED", "ERROR", "XFAIL", "XPASS"):
        depth, i = 0, 0
        while i < len(rest):
            c = rest[i]
            if c == "[":
                depth += 1
            elif c == "]":
                depth = max(0, depth - 1)
            elif depth == 0 and rest.startswith(" - ", i):
                rest = rest[:i]
                break
            i += 1
    if "::" not in rest and not rest.endswith(".py"):
        return None  # "SKIPPED [1] path:line: reason" names no test
    return rest


def parse_pytest(output: str) -> TestResults:
    """Read pytest's text report: the ``-rA`` short summary lines and ``-v`` lines (the worst
    status of an id wins: a teardown error after a pass is an error), the final count line
    (``=== 3 passed, 1 failed in 0.2s ===``) for completeness, collection errors."""
    res = TestResults(source="pytest")
    counts: dict[str, int] = {}
    for line in strip_ansi(output).splitlines():
        m = _PY_SUMMARY.match(line)
        if m:
            tid = _summary_id(m.group(1), m.group(2))
            if tid is not None:
                res.put(tid, _PY_STATUS[m.group(1)])
            continue
        m = _PY_VERBOSE.match(line)
        if m and not line.startswith(" "):
            res.put(m.group(1).strip(), _PY_STATUS[m.group(2)])
            continue
        if _PY_FINAL.match(line.strip()):
            res.complete = True
            counts = {("error" if w.startswith("error") else w): int(n) for n, w in _PY_COUNT.findall(line)}
        elif line.startswith("ERROR collecting ") or line.startswith("_ ERROR collecting "):
            res.errors.append(line.strip("_ ").strip())
    if res.complete:
        res.ran = sum(v for k, v in counts.items() if k != "skipped")
    return res


def _from_junit(xml_text: str) -> TestResults | None:
    try:
        rep = parse_junit(xml_text)
    except Exception:  # noqa: BLE001 -- a junit file that is not XML: read the text instead
        return None
    res = TestResults(statuses=dict(rep.statuses), complete=True, source="junit")
    res.ran = sum(1 for s in rep.statuses.values() if s != "skipped")
    res.errors.extend(rep.errors)
    return res


def parse_results(output: str, junit_xml: str | None = None, parser: str | None = None) -> TestResults:
    """Per-test results of a run: the junit XML the run wrote, else the official SWE-bench
    parser named by the task (`parser`, e.g. ``parse_log_django``; the ``swebench`` package),
    else unittest's verbose report or pytest's text report, whichever the log holds."""
    text = strip_ansi(output)
    res = _read_results(text, junit_xml, parser)
    res.log = text
    return res


def _read_results(text: str, junit_xml: str | None, parser: str | None) -> TestResults:
    if junit_xml:
        res = _from_junit(junit_xml)
        if res is not None:
            # junit writes a non-strict unexpected pass as a pass; pytest's own -rA line says XPASS
            for m in _XPASS_LINE.finditer(text):
                tid = _summary_id("XPASS", m.group(1))
                if tid is not None:
                    res.put(nodeid_to_junit(tid) if "::" in tid else tid, "failed")
            return res
    if parser:
        statuses = official_statuses(parser, text)
        res = TestResults(source=f"swebench:{parser}")
        for tid, st in statuses.items():
            res.put(tid, st)
        ut = parse_unittest(text) if _UT_RAN_ANY.search(text) else None
        py = parse_pytest(text)
        res.complete = bool((ut and ut.complete) or py.complete or _OTHER_FINAL.search(text))
        res.ran = (ut.ran if ut and ut.complete else py.ran)
        res.errors = list((ut.errors if ut else []) or py.errors)
        return res
    if _UT_RAN_ANY.search(text) or (_UT_LINE_ANY.search(text) and not re.search(
            r"^(PASSED|FAILED|ERROR) \S+::", text, re.M)):
        return parse_unittest(text)
    return parse_pytest(text)


_XPASS_LINE = re.compile(r"^XPASS (.+)$", re.M)
#: final lines of other runners SWE-bench parses (SymPy's bin/test)
_OTHER_FINAL = re.compile(r"^=+ tests finished: .* in [\d.]+ seconds =+$", re.M)
