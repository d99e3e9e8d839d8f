"""The judge: run a task's tests on a workspace and return a `JudgeReport`.

Owns `judge(...)` (public), the records `JudgeReport` and `CaseResult`, and the
verdict rules. Test materialisation lives in `codegym.judge.testgen`, comparisons in
`codegym.judge.checkers`, the trusted in-sandbox drivers in `codegym.judge.harness`.

    >>> from codegym import load_task
    >>> from codegym.judge.run import judge
    >>> task = load_task("tasks/examples/bracket-depth.yaml")
    >>> rep = judge(task, task.solution("reference").files, split="hidden")
    >>> rep.verdict, rep.passed == rep.total
    ('accepted', True)

Verdict rules (in this order):

1. ``no_code``: the main file (the task's, or the language's for another
   accepted language) is missing, blank, or holds only comments (Python:
   nothing but docstrings/``pass``).
2. ``compile_error``: the build failed (for Python: the main file does not
   compile -- checked in the host with ``compile()``, which parses but never
   runs anything); ``compile_output`` holds the message.
3. Otherwise the cases run (in parallel where the kind allows) and
   ``accepted`` iff every case passed. If not, the verdict is the status of
   the *first failing case in case order* (lowest index), as online judges
   report it: wrong_answer, runtime_error, timeout, memory_limit,
   output_limit, or sandbox_error (the infrastructure or a checker program
   failed -- such a report must not be used as a reward).
   A split with no cases is ``accepted`` (progress 1).

``early_exit=True`` (training) stops starting new cases after the first
failure; cases never evaluated are reported with status ``skipped`` and do not
count as passed, so `passed`/`progress` are lower bounds there. The verdict is
the same as a full run would give whenever the first failure in case order has
been evaluated, which run order guarantees for cases started before it. With
``early_exit=False`` (evaluation) every case runs.

``stage`` is "no_code" < "compile_error" < "ran" < "accepted" and
``progress`` is 0 (no code), 0.25 (code that does not compile), and
``0.5 + 0.5 * passed / total`` once it ran (1.0 when accepted).

``timing=True`` also judges the ``perf`` split (when the split judged does not
include it; its cases are appended, so the verdict covers them), and if
everything passed measures the build on the perf inputs with
`codegym.timing.measurement.measure` (metric, warmups and repeats from ``task.perf``);
the `Measurement` goes to ``report.timing``. The timed runs are `perf_runs`:
launched as the cases are judged and each output checked, so a timed run that
answers wrongly (or does not end ok) fails its case and the verdict, as a
judged run would.

Kinds: ``stdio`` (build once, one run per case via ``run_many``, outputs
checked in the host; Python programs are not built but run through
`codegym.judge.harness.LAUNCHER` with their files as extra files of each run, so no
candidate's code ever sits in the sandbox's build store, which other runs can
read), ``function`` (Python; one driver run holds many cases;
values compared in the host: expected values never enter the sandbox),
``script`` (assert-style tests; a run passes only with the per-run nonce
marker, see `codegym.judge.harness`), ``repo`` (a test command run on the task's
repository with the candidate's files over it; graded by `codegym.tasks.repo`: test
files restored, test patch applied, unittest / pytest junit / ``-rA`` / "N
passed" reports; listed test ids that are missing count as failed).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import re
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from codegym.judge import harness
from codegym.judge.checkers import (CheckResult, ProgramChecker, make_checker, make_value_checker)
from codegym.core.limits import Limits
from codegym.judge.testgen import Case, TestgenError, materialize

#: every verdict a report can carry
VERDICTS = ("accepted", "wrong_answer", "runtime_error", "timeout", "memory_limit", "output_limit",
            "compile_error", "no_code", "sandbox_error")
#: statuses of one case
CASE_STATUSES = ("passed", "wrong_answer", "runtime_error", "timeout", "memory_limit", "output_limit",
                 "compile_error", "sandbox_error", "skipped")
STAGES = ("no_code", "compile_error", "ran", "accepted")
#: how much program output / stderr a message quotes
MESSAGE_MAX = 600


@dataclass
class CaseResult:
    """Outcome of one test case.

    status   passed | wrong_answer | runtime_error | timeout | memory_limit | output_limit |
             compile_error | sandbox_error | skipped (not evaluated: early exit)
    time_s   CPU seconds of the run (function kind: of the call); wall_s wall-clock seconds
    memory_mb  peak resident memory of the process
    message  what went wrong (exception, exit code, checker message), truncated
    diff     short expected-vs-got description of the first difference
    score    1.0 passed, partial credit from a program checker, else 0.0
    """

    index: int
    name: str
    status: str
    split: str = ""
    time_s: float = 0.0
    wall_s: float = 0.0
    memory_mb: float = 0.0
    message: str = ""
    diff: str = ""
    score: float = 0.0
    weight: float = 1.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict:
        # every field is a scalar: no deep copy needed (asdict costs ~10x this)
        return {f: getattr(self, f) for f in _CASE_FIELDS}


_CASE_FIELDS = tuple(f.name for f in dataclasses.fields(CaseResult))


@dataclass
class JudgeReport:
    """What the judge decided about one workspace on one split (see the module docstring)."""

    verdict: str
    passed: int
    total: int
    cases: list[CaseResult] = field(default_factory=list)
    stage: str = "ran"
    progress: float = 0.0
    compile_output: str = ""
    timing: Any = None
    task_id: str = ""
    task_hash: str = ""
    split: str = "hidden"
    language: str = ""
    checker: str = ""
    score: float = 0.0
    elapsed_s: float = 0.0
    first_failure: int | None = None
    message: str = ""
    timing_error: str = ""

    @property
    def accepted(self) -> bool:
        return self.verdict == "accepted"

    def failing_case(self) -> CaseResult | None:
        return self.cases[self.first_failure] if self.first_failure is not None else None

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in (
            "verdict", "passed", "total", "stage", "progress", "compile_output", "task_id", "task_hash",
            "split", "language", "checker", "score", "elapsed_s", "first_failure", "message",
            "timing_error")}
        d["cases"] = [c.to_dict() for c in self.cases]
        t = self.timing
        d["timing"] = t.to_dict() if hasattr(t, "to_dict") else t
        return d


# --------------------------------------------------------------------------- helpers


def _clip(s: str, n: int = MESSAGE_MAX) -> str:
    s = s or ""
    return s if len(s) <= n else s[: n - 3] + "..."


def _tail(s: str, n: int = MESSAGE_MAX) -> str:
    s = (s or "").rstrip()
    return s if len(s) <= n else "..." + s[-(n - 3):]


_COMMENT_LINE = {"python": ("#",), "julia": ("#",), "c": ("//",), "cpp": ("//",), "javascript": ("//",)}
_BLOCK = {"c": re.compile(r"/\*.*?\*/", re.S), "cpp": re.compile(r"/\*.*?\*/", re.S),
          "javascript": re.compile(r"/\*.*?\*/", re.S), "julia": re.compile(r"#=.*?=#", re.S)}


def is_blank_code(source: str | bytes | None, language: str) -> bool:
    """True when a source holds no code: missing, blank, or only comments
    (Python: only comments, docstrings and ``pass``)."""
    if source is None:
        return True
    if isinstance(source, bytes):
        source = source.decode("utf-8", "replace")
    if not source.strip():
        return True
    if language == "python":
        try:
            tree = harness.parse_python(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        return all(isinstance(n, ast.Pass) or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
                                               and isinstance(n.value.value, str)) for n in tree.body)
    block = _BLOCK.get(language)
    if block is not None:
        source = block.sub("", source)
    prefixes = _COMMENT_LINE.get(language)
    if prefixes is None:
        return False
    return all(not ln.strip() or ln.strip().startswith(prefixes) for ln in source.splitlines())


def python_compile_error(source: str | bytes, filename: str) -> str | None:
    """The compiler's message when `source` does not compile, else None (nothing is run)."""
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as e:
            return f"{filename}: not UTF-8: {e}"
    if len(source) > (4 << 20):
        return None  # too large to check here: the run will report it
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        return "".join(traceback.format_exception_only(type(e), e)).rstrip()
    except (RecursionError, MemoryError) as e:
        return f"{filename}: too deeply nested to compile ({type(e).__name__})"
    return None


_STATUS_OF_EXEC = {"runtime_error": "runtime_error", "timeout": "timeout", "memory_limit": "memory_limit",
                   "output_limit": "output_limit", "sandbox_error": "sandbox_error",
                   "compile_error": "runtime_error"}


def _exec_message(res) -> str:
    parts = []
    if res.status == "timeout":
        parts.append(res.message or "time limit exceeded")
    elif res.status == "memory_limit":
        parts.append(res.message or "memory limit exceeded")
    elif res.status == "output_limit":
        parts.append(res.message or "output limit exceeded")
    else:
        if res.signal:
            parts.append(f"killed by signal {res.signal}")
        elif res.exit_code not in (None, 0):
            parts.append(f"exit code {res.exit_code}")
        if res.message and res.message not in parts:
            parts.append(res.message)
    err = _tail(res.stderr)
    if err:
        parts.append(err)
    return _clip("\n".join(parts))


def _case_limits(task, case: Case) -> Limits:
    return task.limits.replace(time_s=case.time_s) if case.time_s else task.limits


# --------------------------------------------------------------------------- kinds


def _stdio_launch(lang: str, files: Mapping[str, Any], main_file: str) -> tuple[list[str], dict | None]:
    """(argv, extra files) of a stdio run. Python programs run through the launcher with
    their files as extra files of each run: they never enter the sandbox's build store,
    which later runs can read (a policy must not learn to copy a peer's solution)."""
    if lang == "python":
        return [main_file], harness.hidden_files(dict(files))
    return [], None


def _checker_cache(task, value: bool = False):
    """``checker_for(case)``: the case's checker (its own, else the task's), made once per
    spec; output checkers for stdio, value checkers (``value=True``) for function tasks.
    Thread-safe: timed runs may be verified from several threads."""
    import threading
    made: dict[int, Any] = {}
    lock = threading.Lock()

    def checker_for(case: Case):
        spec = case.checker if case.checker is not None else task.checker
        with lock:
            c = made.get(id(spec))
            if c is None:
                c = made[id(spec)] = (make_value_checker(spec) if value
                                      else make_checker(spec, time_s=_case_limits(task, case).time_s))
        return c
    return checker_for


def _run_stdio(task, build, cases: list[Case], sandbox, early_exit: bool, language: str,
               argv: Sequence[str] = (), extra: Mapping[str, Any] | None = None) -> list[CaseResult | None]:
    from codegym.sandbox import RunRequest
    n = len(cases)
    out: list[CaseResult | None] = [None] * n
    checker_for = _checker_cache(task)

    program_pending: list[int] = []

    def evaluate(i: int, res) -> bool:
        """Fill out[i]; True when the case failed (for early exit)."""
        case = cases[i]
        base = dict(index=case.index, name=case.name, split=case.split, time_s=res.cpu_s, wall_s=res.wall_s,
                    memory_mb=res.max_rss_mb, weight=case.weight)
        if res.status != "ok":
            out[i] = CaseResult(status=_STATUS_OF_EXEC.get(res.status, "runtime_error"),
                                message=_exec_message(res), **base)
            return True
        chk = checker_for(case)
        if isinstance(chk, ProgramChecker):
            program_pending.append(i)
            out[i] = CaseResult(status="passed", score=1.0, **base)  # provisional
            return False
        r = chk.check(case.expected, res.stdout, case.stdin or "")
        if res.stdout_truncated and r.ok:
            r = CheckResult(False, 0.0, "output was truncated", "")
        out[i] = CaseResult(status="passed" if r.ok else "wrong_answer", message=r.message, diff=r.diff,
                            score=r.score if r.ok else 0.0, **base)
        return not r.ok

    results_cache: dict[int, Any] = {}

    def stop(i: int, res) -> bool:
        results_cache[i] = res
        failed = evaluate(i, res)
        return early_exit and failed

    reqs = []
    default = task.limits
    for case in cases:
        lim = _case_limits(task, case) if case.time_s else None
        reqs.append(RunRequest(stdin=case.stdin or "", argv=argv, extra_files=extra, limits=lim))
    results = sandbox.run_many(build, reqs, limits=default, stop=stop)
    for i, res in enumerate(results):
        if res is not None and out[i] is None:
            evaluate(i, res)
    if program_pending:
        groups: dict[int, list[int]] = {}
        for i in program_pending:
            groups.setdefault(id(checker_for(cases[i])), []).append(i)
        for idxs in groups.values():
            chk = checker_for(cases[idxs[0]])
            checks = chk.check_many(sandbox, [(cases[i].stdin or "", cases[i].expected,
                                               results[i].stdout) for i in idxs])
            for i, r in zip(idxs, checks):
                cr = out[i]
                assert cr is not None
                if r.failed:
                    cr.status = "sandbox_error"
                elif not r.ok:
                    cr.status = "wrong_answer"
                cr.score = r.score if not r.failed else 0.0
                cr.message, cr.diff = r.message, r.diff
    return out


def _run_function(task, files: Mapping[str, Any], main_file: str, cases: list[Case], sandbox,
                  early_exit: bool) -> tuple[list[CaseResult | None], str | None]:
    """Returns (results, compile_error message or None)."""
    n = len(cases)
    out: list[CaseResult | None] = [None] * n
    build = sandbox.build("python", {"main.py": harness.FUNCTION_DRIVER})
    sol_files = harness.solution_files(dict(files))
    if not build.ok:
        res = build.result
        msg = _exec_message(res) if res is not None else "build failed"
        st = "sandbox_error" if res is not None and res.status == "sandbox_error" else "runtime_error"
        for i, c in enumerate(cases):
            out[i] = CaseResult(c.index, c.name, st, c.split, message=msg, weight=c.weight)
        return out, None
    vchecker = _checker_cache(task, value=True)

    per_case = []
    for case in cases:
        lim = _case_limits(task, case)
        per_case.append((lim.time_s, lim.wall()))
    import_time = task.limits.time_s
    workers = max(1, int(getattr(sandbox, "workers", 1) or 1))
    n_chunks = max(1, min(workers, math.ceil(n / 16)))
    size = math.ceil(n / n_chunks) if n else 0
    pending = [list(range(k, min(n, k + size))) for k in range(0, n, size)] if n else []
    compile_error: list[str | None] = [None]
    stopped = [False]

    def request_for(idxs: list[int]):
        from codegym.sandbox import RunRequest
        nonce = harness.new_nonce()
        body = harness.function_request(
            nonce, main_file, task.entry_point,
            [(i, list(cases[i].args or []), dict(cases[i].kwargs or {}), per_case[i][0], per_case[i][1])
             for i in idxs], import_time=import_time, stop_on_error=early_exit)
        cpu = sum(per_case[i][0] for i in idxs) + import_time + 1.0
        wall = sum(per_case[i][1] for i in idxs) + task.limits.wall() + 2.0
        lim = task.limits.replace(time_s=cpu, wall_s=wall)
        return nonce, RunRequest(stdin=body, limits=lim, extra_files=sol_files)

    def absorb(idxs: list[int], nonce: str, res) -> tuple[bool, list[int]]:
        """Fill results of one chunk; returns (a case failed, indices still to run)."""
        frames = harness.parse_function_frames(res.stdout, nonce)
        failed = False
        if frames.import_error is not None:
            kind = frames.import_error.get("import")
            msg = _clip(str(frames.import_error.get("e", "")))
            if kind == "compile_error":
                compile_error[0] = msg
            status = {"timeout": "timeout", "memory_limit": "memory_limit"}.get(kind, "runtime_error")
            for i in idxs:
                c = cases[i]
                out[i] = CaseResult(c.index, c.name, status, c.split, message=msg, weight=c.weight)
            return True, []
        rest: list[int] = []
        prev_status = None
        for pos, i in enumerate(idxs):
            c = cases[i]
            fr = frames.results.get(i)
            if fr is None:
                # the process ended during this case (or never reached it)
                if prev_status == "timeout" and res.status == "ok":
                    # the driver's own time guard ended the run after the previous case
                    rest = idxs[pos:]
                    break
                if not frames.done:
                    st = _STATUS_OF_EXEC.get(res.status, "runtime_error")
                    if res.status == "ok":
                        msg = "the program exited during the call" + (f" (exit code {res.exit_code})"
                                                                       if res.exit_code else "")
                        msg = _clip(msg + ("\n" + _tail(res.stderr) if res.stderr.strip() else ""))
                    else:
                        msg = _exec_message(res)
                    out[i] = CaseResult(c.index, c.name, st, c.split, wall_s=res.wall_s,
                                        memory_mb=res.max_rss_mb, message=msg, weight=c.weight)
                    failed = True
                    rest = idxs[pos + 1:]
                else:
                    out[i] = CaseResult(c.index, c.name, "sandbox_error", c.split,
                                        message="the driver reported no result for this case", weight=c.weight)
                    failed = True
                    continue
                break
            st = prev_status = fr.get("s")
            base = dict(index=c.index, name=c.name, split=c.split, time_s=float(fr.get("t") or 0.0),
                        wall_s=float(fr.get("w") or 0.0), memory_mb=float(fr.get("m") or 0.0), weight=c.weight)
            if st == "ok":
                try:
                    got = harness.decode_value(fr.get("v"))
                except (harness.DecodeError, ValueError, TypeError, KeyError, RecursionError) as e:
                    out[i] = CaseResult(status="wrong_answer", message=f"undecodable return value: {e}", **base)
                    failed = True
                    continue
                r = vchecker(c).check_value(c.expected, got)
                out[i] = CaseResult(status="passed" if r.ok else "wrong_answer", message=r.message, diff=r.diff,
                                    score=1.0 if r.ok else 0.0, **base)
                failed = failed or not r.ok
            else:
                status = st if st in ("runtime_error", "timeout", "memory_limit", "output_limit") else "runtime_error"
                out[i] = CaseResult(status=status, message=_clip(str(fr.get("e", ""))), **base)
                failed = True
                if early_exit:
                    rest = []
                    break
        return failed, rest

    while pending and not stopped[0]:
        batch = pending
        pending = []
        reqs = [request_for(idxs) for idxs in batch]
        follow: list[list[int]] = []

        absorbed: set[int] = set()

        def stop(k: int, res) -> bool:
            absorbed.add(k)
            failed, rest = absorb(batch[k], reqs[k][0], res)
            if rest:
                follow.append(rest)
            if failed and early_exit:
                stopped[0] = True
                return True
            return False

        results = sandbox.run_many(build, [r for _, r in reqs], stop=stop)
        for k, res in enumerate(results):
            if res is not None and k not in absorbed:   # finished after the stop
                absorb(batch[k], reqs[k][0], res)
        if compile_error[0] is not None:
            return out, compile_error[0]
        pending = sorted(follow)
    return out, None


def _script_failure_status(info: dict | None, res) -> tuple[str, str]:
    if res.status in ("timeout", "memory_limit", "output_limit", "sandbox_error"):
        return res.status, _exec_message(res)
    if info is None:
        if res.exit_code == 3 and "codegym:" in (res.stderr or ""):
            return "sandbox_error", _tail(res.stderr)
        if res.status == "ok":
            return "runtime_error", _clip("the program ended before the tests completed (no success marker)"
                                          + ("\n" + _tail(res.stderr) if res.stderr.strip() else ""))
        return "runtime_error", _exec_message(res)
    typ = str(info.get("type", ""))
    msg = str(info.get("message", ""))
    tamper = str(info.get("tamper", "") or "")
    if info.get("stage") == "driver":
        return "sandbox_error", msg
    if info.get("stage") == "import" and typ in ("SyntaxError", "IndentationError", "TabError"):
        return "compile_error", f"{typ}: {msg}"
    if typ == "MemoryError":
        return "memory_limit", "MemoryError"
    if typ == "AssertionError" or tamper or typ == "Refused":
        text = f"{typ}" + (f": {msg}" if msg else "")
        if tamper:
            text += f" (refused: {tamper})"
        return "wrong_answer", text
    return "runtime_error", f"{typ}: {msg}" if msg else typ


def _run_script(task, files: Mapping[str, Any], main_file: str, language: str, cases: list[Case], sandbox,
                early_exit: bool) -> tuple[list[CaseResult | None], str | None]:
    from codegym.sandbox import RunRequest, get_language
    n = len(cases)
    out: list[CaseResult | None] = [None] * n
    nonces = [harness.new_nonce() for _ in range(n)]
    if language == "python":
        build = sandbox.build("python", {"main.py": harness.SCRIPT_DRIVER})
        sol_files = harness.solution_files(dict(files), only_python=True, main_file=main_file)
        reqs = [RunRequest(stdin=harness.script_request(nonces[i], main_file, cases[i].code or "",
                                                        task.entry_point),
                           limits=_case_limits(task, cases[i]), extra_files=sol_files) for i in range(n)]
        builds = [build] * n
    else:
        src = files.get(main_file) or ""
        if isinstance(src, bytes):
            src = src.decode("utf-8", "replace")
        lang_main = get_language(language).main_file
        builds = []
        for c in cases:
            fl = {k: v for k, v in files.items() if k != main_file}
            fl[lang_main] = harness.script_program(language, src, c.code or "")
            builds.append(sandbox.build(language, fl))
        reqs = [RunRequest(stdin=nonces[i] + "\n", limits=_case_limits(task, cases[i])) for i in range(n)]
    compile_error: list[str | None] = [None]

    def evaluate(i: int, res) -> bool:
        c = cases[i]
        base = dict(index=c.index, name=c.name, split=c.split, time_s=res.cpu_s, wall_s=res.wall_s,
                    memory_mb=res.max_rss_mb, weight=c.weight)
        if res.status == "ok" and harness.script_passed(res.stdout, nonces[i]):
            bad = None
            if language == "julia":
                # exit 0 and the marker, but Julia's own test report must show no failure either
                from codegym.importers.multiple import julia_test_failures
                bad = julia_test_failures(res.stdout, res.stderr)
            if bad is None:
                out[i] = CaseResult(status="passed", score=1.0, **base)
                return False
            out[i] = CaseResult(status="wrong_answer", message=_clip(bad), **base)
            return True
        info = harness.parse_script_failure(res.stdout) if language == "python" else None
        status, msg = _script_failure_status(info, res)
        if language != "python" and status == "runtime_error":
            err = (res.stderr or "") + (res.stdout or "")
            if re.search(r"Test Failed|did not pass|AssertionError", err):
                status = "wrong_answer"
        if info and info.get("test_line") and c.code:
            lines = c.code.splitlines()
            ln = info["test_line"]
            if isinstance(ln, int) and 1 <= ln <= len(lines):
                msg = f"{msg}\n  at test line {ln}: {lines[ln - 1].strip()[:200]}"
        if info and isinstance(info.get("solution_line"), int):
            msg = f"{msg}\n  (raised in {main_file} line {info['solution_line']})"
        if status == "compile_error":
            compile_error[0] = msg
        out[i] = CaseResult(status=status, message=_clip(msg), **base)
        return True

    if language == "python":
        def stop(i: int, res) -> bool:
            return evaluate(i, res) and early_exit
        sandbox.run_many(builds[0], reqs, stop=stop) if n else None
    else:
        for i in range(n):
            if not builds[i].ok:
                res = builds[i].result
                if res is not None and res.status == "compile_error":
                    compile_error[0] = _tail(res.stderr or res.stdout or res.message)
                    break
                out[i] = CaseResult(cases[i].index, cases[i].name, "sandbox_error", cases[i].split,
                                    message=_exec_message(res) if res else "build failed", weight=cases[i].weight)
                if early_exit:
                    break
                continue
            res = sandbox.run(builds[i], stdin=reqs[i].stdin, limits=reqs[i].limits)
            if evaluate(i, res) and early_exit:
                break
    return out, compile_error[0]


def _run_repo(task, files: Mapping[str, Any], cases: list[Case], sandbox, early_exit: bool) -> list[CaseResult | None]:
    # Repository grading (base tree + overlay, restored tests, test patch, report parsing)
    # lives with the rest of the repo-task machinery.
    from codegym.tasks import repo as swe
    return swe.run_repo_cases(task, files, cases, sandbox, early_exit)


# --------------------------------------------------------------------------- judge


def _finish(rep: JudgeReport, results: Sequence[CaseResult | None], cases: Sequence[Case]) -> JudgeReport:
    final: list[CaseResult] = []
    for c, r in zip(cases, results):
        final.append(r if r is not None else CaseResult(c.index, c.name, "skipped", c.split, weight=c.weight))
    rep.cases = final
    rep.total = len(final)
    rep.passed = sum(1 for r in final if r.passed)
    wsum = sum(r.weight for r in final)
    rep.score = (sum(r.weight * (r.score if r.status in ("passed", "wrong_answer") else 0.0) for r in final)
                 / wsum) if wsum > 0 else 1.0
    first = next((r for r in final if r.status not in ("passed", "skipped")), None)
    if first is None and any(r.status == "skipped" for r in final):
        first = next(r for r in final if r.status == "skipped")
        first = CaseResult(first.index, first.name, "sandbox_error", first.split,
                           message="case was not run although no case failed")
    if first is None:
        rep.verdict, rep.stage, rep.progress, rep.first_failure = "accepted", "accepted", 1.0, None
    else:
        rep.verdict = first.status
        rep.first_failure = first.index
        rep.stage = "ran"
        rep.progress = 0.5 + 0.5 * rep.passed / rep.total if rep.total else 0.5
        rep.message = f"case {first.index} ({first.name}): {first.status}" + (
            f": {first.message.splitlines()[0][:200]}" if first.message else "")
    return rep


def _checker_tag(task, kind: str) -> str:
    if kind == "stdio":
        try:
            return make_checker(task.checker, time_s=task.limits.time_s).tag
        except ValueError:
            return "unknown"
    if kind == "function":
        return make_value_checker(task.checker).tag
    if kind == "script":
        return f"script@{harness.HARNESS_VERSION}"
    return f"repo@{harness.HARNESS_VERSION}"


def task_image(task, sandbox) -> str | None:
    """The container image a task names for its tests (``repo.image``, or the image the
    sandbox builds from ``repo.dockerfile``); None: the backend's image per language."""
    repo = getattr(task, "repo", None)
    if repo is None:
        return None
    if getattr(repo, "dockerfile", None) and hasattr(sandbox, "image_from_dockerfile"):
        return sandbox.image_from_dockerfile(repo.dockerfile)
    return getattr(repo, "image", None)


def judge(task, files: Mapping[str, str | bytes], sandbox=None, split: str = "hidden", timing: bool = False,
          early_exit: bool = False, language: str | None = None) -> "JudgeReport":
    """Judge workspace `files` ({path: text}) on `split` of `task`; see the module docstring."""
    t0 = time.monotonic()
    from codegym.tasks.schema import canonical_language
    lang = canonical_language(language) if language else task.language
    if lang is None:
        raise ValueError(f"unknown language {language!r}")
    if lang not in task.accepted_languages():
        raise ValueError(f"task {task.id} does not accept {lang} (accepted: {', '.join(task.accepted_languages())})")
    kind = task.kind
    main_file = task.main_file_for(lang) or ""
    rep = JudgeReport(verdict="no_code", passed=0, total=0, stage="no_code", progress=0.0, task_id=task.id,
                      task_hash=task.content_hash, split=split, language=lang, checker=_checker_tag(task, kind))
    if split not in ("public", "hidden", "perf", "all"):
        raise ValueError(f"unknown split {split!r}; expected public, hidden, perf or all")
    n_declared = sum(len(task.cases(s)) for s in (("public", "hidden", "perf") if split == "all" else (split,)))
    if kind != "repo" and is_blank_code(files.get(main_file), lang):
        rep.total = n_declared
        rep.message = f"{main_file} is missing or holds no code"
        rep.elapsed_s = time.monotonic() - t0
        return rep
    rep.stage, rep.progress = "compile_error", 0.25
    if lang == "python" and kind != "repo":
        err = python_compile_error(files[main_file], main_file)
        if err is not None:
            rep.verdict, rep.total, rep.compile_output = "compile_error", n_declared, err
            rep.message = err.splitlines()[-1] if err else ""
            rep.elapsed_s = time.monotonic() - t0
            return rep
    elif kind != "repo":
        # A toolchain missing here (e.g. julia): tree-sitter still gives compile-stage feedback.
        from codegym.judge.syntax import precheck
        err = precheck(lang, files, main_file)
        if err is not None:
            rep.verdict, rep.total, rep.compile_output = "compile_error", n_declared, err
            rep.message = err.splitlines()[1] if "\n" in err else err
            rep.elapsed_s = time.monotonic() - t0
            return rep
    if sandbox is None:
        from codegym.sandbox import make_sandbox
        sandbox = make_sandbox()
    if hasattr(sandbox, "for_task"):  # backends that keep containers per task (docker)
        try:
            image = task_image(task, sandbox)
        except Exception as e:  # noqa: BLE001  the task's image could not be built: not a verdict
            rep.verdict, rep.stage, rep.progress, rep.total = "sandbox_error", "ran", 0.5, n_declared
            rep.message = f"the task's container image could not be built: {e}"
            rep.elapsed_s = time.monotonic() - t0
            return rep
        sandbox = sandbox.for_task(task.id, image=image)
    try:
        cases = materialize(task, split, sandbox)
        if timing and split not in ("perf", "all"):
            extra = materialize(task, "perf", sandbox)
            cases = cases + [dataclasses.replace(c, index=len(cases) + k) for k, c in enumerate(extra)]
    except TestgenError as e:
        rep.verdict, rep.stage, rep.progress, rep.total = "sandbox_error", "ran", 0.5, n_declared
        rep.message = f"tests could not be materialised: {e}"
        rep.elapsed_s = time.monotonic() - t0
        return rep
    rep.total = len(cases)
    compile_err: str | None = None
    build = None
    if kind == "stdio":
        run_argv, run_extra = _stdio_launch(lang, files, main_file)
        build = sandbox.build(lang, {"main.py": harness.LAUNCHER}) if run_extra is not None \
            else sandbox.build(lang, dict(files))
        if not build.ok:
            res = build.result
            if res is not None and res.status == "compile_error":
                rep.verdict = "compile_error"
                rep.compile_output = _tail((res.stderr or "") + (res.stdout or "") or res.message, 4000)
                rep.message = res.message or "compilation failed"
            else:
                rep.verdict = "sandbox_error"
                rep.message = (res.message if res is not None else "") or "the build failed"
            rep.elapsed_s = time.monotonic() - t0
            return rep
        results = _run_stdio(task, build, cases, sandbox, early_exit, lang, run_argv, run_extra)
    elif kind == "function":
        if lang != "python":
            rep.verdict, rep.stage = "sandbox_error", "ran"
            rep.message = "function tasks run Python only"
            return rep
        results, compile_err = _run_function(task, files, main_file, cases, sandbox, early_exit)
    elif kind == "script":
        results, compile_err = _run_script(task, files, main_file, lang, cases, sandbox, early_exit)
    elif kind == "repo":
        results = _run_repo(task, files, cases, sandbox, early_exit)
    else:
        raise ValueError(f"unknown task kind {kind!r}")
    if compile_err is not None:
        rep.verdict, rep.compile_output = "compile_error", compile_err
        rep.message = compile_err.splitlines()[-1] if compile_err else "compilation failed"
        rep.elapsed_s = time.monotonic() - t0
        return rep
    rep.stage = "ran"
    _finish(rep, results, cases)
    if kind == "repo":
        from codegym.tasks import repo as swe
        swe.annotate_report(rep, task)  # "resolution FULL|PARTIAL|NO: ..." (hidden split)
    if timing and rep.verdict == "accepted":
        _measure(rep, task, files, cases, list(rep.cases), sandbox, lang, build)
    rep.elapsed_s = time.monotonic() - t0
    return rep


@dataclass
class PerfRuns:
    """How a program is timed on test cases (`perf_runs`).

    language   the language of `build` (python for function tasks: the driver)
    build      what runs: the program's build, or the launcher / driver that loads its files
    inputs     one `RunRequest` per timed input (per case for stdio; one request holding
               every case for function tasks)
    limits     the task's limits (requests carry per-case ones where a case has them)
    verify     ``verify(input_index, result)`` -> None when the run's output is right, else
               ``(status, message)``; a `codegym.timing.measurement.Verifier`
    files_key  content hash of the program's files: the build alone does not identify the
               program when it is the shared launcher or driver
    cases      the cases timed
    failure    (position in `cases`, status, message) of the last run `verify` rejected
    """

    language: str
    build: Any
    inputs: list
    limits: Limits
    verify: Any
    files_key: str
    cases: list = field(default_factory=list)
    failure: tuple[int, str, str] | None = None


def perf_runs(task, files: Mapping[str, Any], sandbox, language: str | None = None,
              cases: Sequence[Case] | None = None, build=None) -> PerfRuns:
    """The runs that time `files` on `cases` (default: the task's perf split, or its hidden
    split when it has no perf cases), and a verifier of their outputs.

    The runs are launched as `judge` launches the cases (stdio: the same request per
    case, Python programs through the launcher with their files as extra files, so a
    timed run cannot be told from a judged one; function tasks: the same driver, with
    every case in one run), and every timed run's output is checked with the case's
    checker (stdio) or the driver's values against the expected ones (function;
    identical outputs are checked once): a program that answers wrongly when timed is
    caught, whatever it detects.
    `build` reuses the judge's build of the program. Raises ValueError for kinds without
    a timed form (script, repo)."""
    import hashlib
    import threading

    from codegym.sandbox import RunRequest
    from codegym.tasks.schema import canonical_language
    lang = canonical_language(language) if language else task.language
    main_file = task.main_file_for(lang) or ""
    if cases is None:
        cases = materialize(task, "perf", sandbox) or materialize(task, "hidden", sandbox)
    cases = list(cases)
    lim = task.limits
    digest = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        data = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + str(len(data)).encode() + b"\0" + data)
    files_key = digest.hexdigest()
    lock = threading.Lock()
    if task.kind == "stdio":
        argv, extra = _stdio_launch(lang, files, main_file)
        if build is None:
            build = (sandbox.build(lang, {"main.py": harness.LAUNCHER}) if extra is not None
                     else sandbox.build(lang, dict(files)))
        inputs = [RunRequest(stdin=c.stdin or "", argv=argv, extra_files=extra,
                             limits=_case_limits(task, c) if c.time_s else None) for c in cases]
        checker_for = _checker_cache(task)
        seen: dict[tuple[int, bytes], tuple[str, str] | None] = {}

        def verify(i: int, res) -> tuple[str, str] | None:
            case = cases[i]
            if res.stdout_truncated:
                return _reject(runs, i, case, "output_limit", "the output was truncated")
            key = (i, hashlib.blake2b(res.stdout.encode("utf-8", "surrogateescape"), digest_size=16).digest())
            with lock:
                if key in seen:
                    return seen[key]
            chk = checker_for(case)
            if isinstance(chk, ProgramChecker):
                r = chk.check_many(sandbox, [(case.stdin or "", case.expected, res.stdout)])[0]
                if r.failed:  # the checker, not the program: not a verdict, not remembered
                    raise RuntimeError(f"the checker program failed: {r.message}")
            else:
                r = chk.check(case.expected, res.stdout, case.stdin or "")
            out = None if r.ok else _reject(runs, i, case, "wrong_answer", r.message or r.diff or "wrong answer")
            with lock:
                seen[key] = out
            return out
    elif task.kind == "function":
        if build is None:
            build = sandbox.build("python", {"main.py": harness.FUNCTION_DRIVER})
        nonce = harness.new_nonce()
        per_case = [_case_limits(task, c) for c in cases]
        body = harness.function_request(
            nonce, main_file, task.entry_point,
            [(i, list(c.args or []), dict(c.kwargs or {}), cl.time_s, cl.wall())
             for i, (c, cl) in enumerate(zip(cases, per_case))], import_time=lim.time_s, stop_on_error=True)
        inputs = [RunRequest(stdin=body, extra_files=harness.solution_files(dict(files)),
                             limits=lim.replace(time_s=sum(cl.time_s for cl in per_case) + lim.time_s,
                                                wall_s=lim.wall() * (len(cases) + 1)))]
        vchecker = _checker_cache(task, value=True)
        vseen: dict[tuple[int, bytes], str | None] = {}
        lang = "python"

        def verify(i: int, res) -> tuple[str, str] | None:
            frames = harness.parse_function_frames(res.stdout, nonce)
            if frames.import_error is not None:
                kind = frames.import_error.get("import")
                status = {"timeout": "timeout", "memory_limit": "memory_limit"}.get(kind, "runtime_error")
                return _reject(runs, 0, cases[0], status, f"import failed: {frames.import_error.get('e', '')}")
            for k, case in enumerate(cases):
                fr = frames.results.get(k)
                if fr is None:
                    return _reject(runs, k, case, "runtime_error", "the driver reported no result for this case")
                st = fr.get("s")
                if st != "ok":
                    status = st if st in ("runtime_error", "timeout", "memory_limit", "output_limit") \
                        else "runtime_error"
                    return _reject(runs, k, case, status, str(fr.get("e", ""))[:MESSAGE_MAX])
                raw = fr.get("v")
                key = (k, hashlib.blake2b(json.dumps(raw, sort_keys=True).encode(), digest_size=16).digest())
                with lock:
                    wrong = vseen.get(key, False)
                if wrong is False:  # not seen yet: decode and compare (identical values once)
                    try:
                        got = harness.decode_value(raw)
                    except (harness.DecodeError, ValueError, TypeError, KeyError, RecursionError) as e:
                        wrong = f"undecodable return value: {e}"
                    else:
                        r = vchecker(case).check_value(case.expected, got)
                        wrong = None if r.ok else (r.message or r.diff or "wrong answer")
                    with lock:
                        vseen[key] = wrong
                if wrong is not None:
                    return _reject(runs, k, case, "wrong_answer", wrong)
            return None
    else:
        raise ValueError(f"timing is not supported for {task.kind} tasks")
    runs = PerfRuns(language=lang, build=build, inputs=inputs, limits=lim, verify=verify, files_key=files_key,
                    cases=cases)
    return runs


def _reject(runs: PerfRuns, k: int, case: Case, status: str, message: str) -> tuple[str, str]:
    msg = f"case {case.index} ({case.name}): {_clip(message, 300)}"
    runs.failure = (k, status, msg)
    return status, msg


def _measure(rep: JudgeReport, task, files, cases: list[Case], results: list, sandbox, lang: str,
             build) -> None:
    """Measure an accepted program on its perf cases (``timing=True``). A timed run that
    fails -- its output is wrong, or it does not end ok -- fails its case like a judged run."""
    try:
        from codegym.timing import measurement as timing_mod
    except ImportError as e:
        rep.timing_error = f"codegym.timing.measurement is not available: {e}"
        return
    pos = [k for k, c in enumerate(cases) if c.split == "perf"] or list(range(len(cases)))
    try:
        runs = perf_runs(task, files, sandbox, lang, [cases[k] for k in pos],
                         build=build if task.kind == "stdio" else None)
    except ValueError as e:
        rep.timing_error = str(e)
        return
    p = task.perf
    try:
        m = timing_mod.measure(sandbox, runs.build, runs.inputs, metric=p.metric, warmups=p.warmups,
                               repeats=p.repeats, limits=task.limits, verify=runs.verify)
    except Exception as e:  # noqa: BLE001 -- an unsupported metric must not lose the verdict
        rep.timing_error = f"{type(e).__name__}: {e}"
        return
    rep.timing = m
    if m.ok or m.failure in (None, "sandbox_error"):
        return
    # the program failed a timed run: that case fails, as if the judged run had
    if runs.failure is not None:
        k, status, msg = runs.failure
    else:  # the run itself ended badly (status); stdio inputs are cases in order
        k, status, msg = 0, m.failure, m.reason
        if task.kind == "stdio":
            idx = re.match(r"input (\d+)", m.reason or "")
            k = int(idx.group(1)) if idx else 0
    i = pos[min(k, len(pos) - 1)]
    c = cases[i]
    results[i] = CaseResult(c.index, c.name, status, c.split, message=_clip(f"in a timed run: {msg}"),
                            weight=c.weight)
    _finish(rep, results, cases)


__all__ = ["judge", "JudgeReport", "CaseResult", "PerfRuns", "perf_runs", "VERDICTS", "CASE_STATUSES", "STAGES", "is_blank_code",
           "python_compile_error"]
