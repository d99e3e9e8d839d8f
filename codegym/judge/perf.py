"""Timed runs: how a program is timed on test cases, and every timed output checked.

`perf_runs` makes the runs as the judge launches the cases (stdio: the same request per
case, Python programs through the launcher; function tasks: the same driver, every case
in one run) with a verifier of their outputs, so a program that answers wrongly when
timed is caught, whatever it detects. `perf_workload` is that for a task's perf split
(the wrappers, calibration and evaluation time programs with it); `measure_report` is
``judge(timing=True)``'s measurement of an accepted program.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from codegym.core.limits import Limits
from codegym.judge.checkers.program import ProgramChecker
from codegym.judge.harness import FUNCTION_DRIVER
from codegym.judge.kinds.common import case_checkers, case_limits
from codegym.judge.kinds.function import DECODE_ERRORS, FRAME_STATUSES
from codegym.judge.kinds.stdio import stdio_build, stdio_launch
from codegym.judge.protocol import (
    decode_value,
    function_request,
    new_nonce,
    parse_function_frames,
    solution_files,
    value_cap,
)
from codegym.judge.report import MESSAGE_MAX, CaseResult, JudgeReport, clip, finish_report
from codegym.judge.testgen import Case, TestgenError, materialize
from codegym.sandbox import RunRequest
from codegym.sandbox.types import Sandbox
from codegym.tasks.fields import canonical_language
from codegym.tasks.schema import Task
from codegym.timing.measurement import measure


class Unscorable(Exception):
    """A program's speed cannot be scored; the message says why. `record`: the last
    (too noisy or failed) comparison, when there was one, for ``info["timing"]``."""

    def __init__(self, message: str, record: Any = None):
        super().__init__(message)
        self.record = record
        #: the speed score at the pessimistic end of the speedup's interval, when the
        #: mode has a score of the speedup (set by TimedReward; None: nothing is known)
        self.lower_bound: float | None = None


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

    A sample (see `codegym.timing.measurement.measure`) is one pass of `build` over `inputs`.
    """

    language: str
    build: Any
    inputs: list
    limits: Limits
    verify: Any
    files_key: str
    cases: list = field(default_factory=list)
    failure: tuple[int, str, str] | None = None

    @property
    def key(self) -> str:
        """The program's content key: two runs with equal keys time the same program."""
        return f"{self.language}:{getattr(self.build, 'key', id(self.build))}:{self.files_key}"

    def reject(self, k: int, status: str, message: str) -> tuple[str, str]:
        """Record that the run of case `k` failed; returns what `verify` answers."""
        case = self.cases[k]
        msg = f"case {case.index} ({case.name}): {clip(message, 300)}"
        self.failure = (k, status, msg)
        return status, msg


def files_key(files: Mapping[str, Any]) -> str:
    """Content hash of a program's files (paths and contents)."""
    digest = hashlib.sha256()
    for rel in sorted(files):
        data = files[rel]
        data = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else bytes(data)
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


def perf_runs(task: Task, files: Mapping[str, Any], sandbox: Sandbox, language: str | None = None,
              cases: Sequence[Case] | None = None, build=None) -> PerfRuns:
    """The runs that time `files` on `cases` (default: the task's perf split, or its hidden
    split when it has no perf cases), and a verifier of their outputs: each run's output
    is checked with the case's checker (stdio) or the driver's values against the expected
    ones (function; identical outputs are checked once). `build` reuses the judge's build
    of the program. Raises ValueError for kinds without a timed form (script, repo)."""
    lang = canonical_language(language) if language else task.language
    if lang is None:
        raise ValueError(f"unknown language {language!r}")
    main_file = task.main_file_for(lang) or ""
    if cases is None:
        cases = materialize(task, "perf", sandbox) or materialize(task, "hidden", sandbox)
    runs = PerfRuns(language=lang, build=build, inputs=[], limits=task.limits, verify=None,
                    files_key=files_key(files), cases=list(cases))
    if task.kind == "stdio":
        _stdio_runs(runs, task, files, sandbox, main_file)
    elif task.kind == "function":
        _function_runs(runs, task, files, sandbox, main_file)
    else:
        raise ValueError(f"timing is not supported for {task.kind} tasks")
    return runs


def _stdio_runs(runs: PerfRuns, task: Task, files: Mapping[str, Any], sandbox: Sandbox, main_file: str) -> None:
    cases, lock = runs.cases, threading.Lock()
    argv, extra = stdio_launch(runs.language, files, main_file, task.preamble)
    if runs.build is None:
        runs.build = stdio_build(sandbox, runs.language, files, extra)
    runs.inputs = [RunRequest(stdin=c.stdin or "", argv=argv, extra_files=extra,
                              limits=case_limits(task, c) if c.time_s else None) for c in cases]
    checker_for = case_checkers(task)
    seen: dict[tuple[int, bytes], tuple[str, str] | None] = {}

    def verify(i: int, res) -> tuple[str, str] | None:
        case = cases[i]
        if res.stdout_truncated:
            return runs.reject(i, "output_limit", "the output was truncated")
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
        out = None if r.ok else runs.reject(i, "wrong_answer", r.message or r.diff or "wrong answer")
        with lock:
            seen[key] = out
        return out
    runs.verify = verify


def _function_runs(runs: PerfRuns, task: Task, files: Mapping[str, Any], sandbox: Sandbox, main_file: str) -> None:
    cases, lim, lock = runs.cases, task.limits, threading.Lock()
    if runs.build is None:
        runs.build = sandbox.build("python", {"main.py": FUNCTION_DRIVER})
    runs.language = "python"
    nonce = new_nonce()
    per_case = [case_limits(task, c) for c in cases]
    assert task.entry_point is not None  # (a function task has one: `codegym.tasks.checks`)
    body = function_request(
        nonce, main_file, task.entry_point,
        [(i, list(c.args or []), dict(c.kwargs or {}), cl.time_s, cl.wall())
         for i, (c, cl) in enumerate(zip(cases, per_case))], import_time=lim.time_s, stop_on_error=True,
        cap=value_cap(lim), preamble=task.preamble)
    runs.inputs = [RunRequest(stdin=body, extra_files=solution_files(dict(files)),
                              limits=lim.replace(time_s=sum(cl.time_s for cl in per_case) + lim.time_s,
                                                 wall_s=lim.wall() * (len(cases) + 1)))]
    vchecker = case_checkers(task, value=True)
    vseen: dict[tuple[int, bytes], str | None] = {}

    def wrong_value(k: int, raw: Any) -> str | None:
        """Why case `k`'s returned value is wrong (None: right); identical values once."""
        key = (k, hashlib.blake2b(json.dumps(raw, sort_keys=True).encode(), digest_size=16).digest())
        with lock:
            if key in vseen:
                return vseen[key]
        # not seen yet: decode and compare
        wrong: str | None
        try:
            got = decode_value(raw)
        except DECODE_ERRORS as e:
            wrong = f"undecodable return value: {e}"
        else:
            r = vchecker(cases[k]).check_value(cases[k].expected, got, cases[k].args, cases[k].kwargs)
            wrong = None if r.ok else (r.message or r.diff or "wrong answer")
        with lock:
            vseen[key] = wrong
        return wrong

    def verify(i: int, res) -> tuple[str, str] | None:
        frames = parse_function_frames(res.stdout, nonce)
        if frames.import_error is not None:
            kind = frames.import_error.get("import")
            status = kind if kind in ("timeout", "memory_limit") else "runtime_error"
            return runs.reject(0, status, f"import failed: {frames.import_error.get('e', '')}")
        for k in range(len(cases)):
            fr = frames.results.get(k)
            if fr is None:
                return runs.reject(k, "runtime_error", "the driver reported no result for this case")
            st = fr.get("s")
            if st != "ok":
                status = st if st in FRAME_STATUSES else "runtime_error"
                return runs.reject(k, status, str(fr.get("e", ""))[:MESSAGE_MAX])
            wrong = wrong_value(k, fr.get("v"))
            if wrong is not None:
                return runs.reject(k, "wrong_answer", wrong)
        return None
    runs.verify = verify


def perf_workload(task: Task, files: Mapping[str, Any], language: str, sandbox: Sandbox) -> PerfRuns:
    """The runs that time `files` on the task's perf split (hidden split if it has no perf
    cases), every timed output checked (`perf_runs`). Raises `Unscorable` for task kinds
    that have no timed form (script, repo), a split that cannot be materialised or is
    empty, or a build that fails."""
    split = "perf" if task.cases("perf") else "hidden"
    try:
        cases = materialize(task, split, sandbox)
    except TestgenError as e:
        raise Unscorable(f"perf tests could not be materialised: {e}") from e
    if not cases:
        raise Unscorable("the task has no perf or hidden cases to time")
    try:
        runs = perf_runs(task, files, sandbox, language, cases)
    except ValueError as e:
        raise Unscorable(str(e)) from e
    if not runs.build.ok:
        res = runs.build.result
        raise Unscorable(f"the program does not build: {(res.message if res else '') or 'build failed'}")
    return runs


def measure_report(rep: JudgeReport, task: Task, files, cases: list[Case], results: list, sandbox: Sandbox, lang: str,
                   build) -> None:
    """Measure an accepted program on its perf cases (``timing=True``) into ``rep.timing``.
    A timed run that fails -- its output is wrong, or it does not end ok -- fails its case
    like a judged run, and the verdict is made again."""
    pos = [k for k, c in enumerate(cases) if c.split == "perf"] or list(range(len(cases)))
    try:
        runs = perf_runs(task, files, sandbox, lang, [cases[k] for k in pos],
                         build=build if task.kind == "stdio" else None)
    except ValueError as e:
        rep.timing_error = str(e)
        return
    p = task.perf
    try:
        m = measure(sandbox, runs.build, runs.inputs, metric=p.metric, warmups=p.warmups,
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
    results[i] = CaseResult(c.index, c.name, status, c.split, message=clip(f"in a timed run: {msg}"),
                            weight=c.weight)
    finish_report(rep, results, cases)


