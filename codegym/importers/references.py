"""Running imported references in the sandbox: expected outputs and import proofs.

`run_reference` runs trusted reference functions on many inputs *in the sandbox*
(never on the host; the program is `reference_driver`, `ORACLE_PROGRAM` its text), in
parallel over the sandbox's slots, and reads back each return value and its CPU time
(`RefResult`). `judge_references` judges every task's reference in parallel: the proof
that an import is right; `verify_references` does it after an import, raising the
limits a reference needs and reporting the references still not accepted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from codegym.core.limits import Limits
from codegym.importers.yamlout import write_suite_file
from codegym.judge import judge
from codegym.judge.checkers.values import Repr
from codegym.judge.protocol import DecodeError, decode_value, encode_value
from codegym.sandbox import RunRequest, make_sandbox
from codegym.sandbox.types import Sandbox
from codegym.tasks.load import load_task
from codegym.tasks.schema import Task

#: how far `verify_references` raises limits for a reference that needs more
MAX_FIX_MEMORY_MB = 8192
MAX_FIX_TIME_S = 60.0

#: the program `run_reference` runs (`codegym/importers/reference_driver.py`, exact text)
ORACLE_PROGRAM = (resources.files("codegym.importers") / "reference_driver.py").read_bytes().decode("utf-8")


@dataclass
class RefResult:
    """Outcome of one reference run over a list of inputs.

    values   decoded return value per input; None where it failed (see errors) or was
             larger than `send_max` (see sizes)
    times    CPU seconds of each call (0.0 where unknown)
    sizes    about the size of each value as JSON, in characters
    plain    each value is plain data (None/bool/int/float/str, lists, tuples, str-keyed dicts)
    floats   each value is a float or a non-empty list/tuple of floats (EvalPlus's is_floats)
    none     each value is None
    unserialisable  each value (or a part of it) is of a type the wire cannot carry
    errors   input index -> message (an exception, or the run ended before it)
    message  what went wrong with the run as a whole ("" when it completed)
    """

    values: list[Any]
    times: list[float]
    sizes: list[int] = field(default_factory=list)
    plain: list[bool] = field(default_factory=list)
    floats: list[bool] = field(default_factory=list)
    none: list[bool] = field(default_factory=list)
    unserialisable: list[bool] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)
    message: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors and not self.message


def run_reference(sandbox: Sandbox, jobs: Sequence[dict], limits=None, send_max: int = 1 << 16,
                  measure_max: int = 1 << 20) -> list[RefResult]:
    """Run reference functions on inputs in the sandbox, jobs in parallel over its slots.

    Each job: ``{"code": source, "entry": "f" or "Class.method", "inputs": [argument
    lists], "kwargs": [dicts] or None}`` (values may hold tuples, sets, bytes,
    complex ...: they travel tagged). Values larger than `send_max` characters are
    not sent back (only their size and kind); sizes are counted up to just past
    `measure_max`. Returns one `RefResult` per job, in order.
    """
    lim = limits or Limits(time_s=300.0, wall_s=900.0, memory_mb=2048, output_bytes=256 << 20,
                           file_size_mb=16)
    build = sandbox.build("python", {"main.py": ORACLE_PROGRAM})
    if not build.ok:
        msg = build.result.message if build.result is not None else "build failed"
        return [RefResult([None] * len(j["inputs"]), [0.0] * len(j["inputs"]), message=msg) for j in jobs]
    reqs = []
    for j in jobs:
        body = {"code": j["code"], "entry": j["entry"], "inputs": [encode_value(list(a)) for a in j["inputs"]],
                "kwargs": [encode_value(dict(k)) for k in j["kwargs"]] if j.get("kwargs") else None,
                "send_max": send_max, "measure_max": measure_max}
        reqs.append(RunRequest(stdin=json.dumps(body, allow_nan=False), limits=lim))
    results = sandbox.run_many(build, reqs) if reqs else []
    return [_read_frames(len(j["inputs"]), res) for j, res in zip(jobs, results)]


def _read_frames(n: int, res) -> RefResult:
    """The `RefResult` of one run of `n` inputs, from its stdout frames."""
    rr = RefResult([None] * n, [0.0] * n, [0] * n, [False] * n, [False] * n, [False] * n, [False] * n)
    seen: set[int] = set()
    done = False
    for line in (res.stdout if res is not None else "").splitlines():
        try:
            fr = json.loads(line)
        except ValueError:
            continue
        if fr.get("done") is True:
            done = True
            continue
        i = fr.get("i")
        if not isinstance(i, int) or not 0 <= i < n:
            continue
        seen.add(i)
        rr.times[i] = float(fr.get("t") or 0.0)
        if "e" in fr:
            rr.errors[i] = str(fr["e"]).strip()
            continue
        rr.sizes[i] = int(fr.get("n") or 0)
        rr.plain[i] = bool(fr.get("p"))
        rr.floats[i] = bool(fr.get("f"))
        if "v" in fr:
            v = fr["v"]
            rr.none[i] = v is None
            try:
                rr.values[i] = decode_value(v)
            except (DecodeError, ValueError, TypeError, KeyError) as e:
                rr.errors[i] = f"undecodable return value: {e}"
                continue
            if _has_repr(rr.values[i]):
                rr.plain[i], rr.unserialisable[i], rr.values[i] = False, True, None
    if not done:
        status = res.status if res is not None else "not run"
        err = (res.stderr or "").strip()[-800:] if res is not None else ""
        rr.message = f"the reference run ended early ({status})" + (f": {err}" if err else "")
        for i in range(n):
            if i not in seen:
                rr.errors[i] = rr.message
    return rr


def _has_repr(v: Any, depth: int = 0) -> bool:
    if isinstance(v, Repr):
        return True
    if depth > 1000:
        return False
    if isinstance(v, (list, tuple, set, frozenset)):
        return any(_has_repr(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return any(_has_repr(k, depth + 1) or _has_repr(x, depth + 1) for k, x in v.items())
    return False


def judge_references(tasks: Iterable[Any], solution: str = "reference", sandbox: Sandbox | None = None,
                     split: str = "hidden", workers: int | None = None) -> list[tuple[str, Any]]:
    """Judge each task's `solution` on `split`, tasks in parallel over the sandbox's slots
    (a thread per slot; each judge spreads its own cases too). Returns ``[(task id,
    JudgeReport)]`` in task order; a task without that solution is skipped. Used to
    prove an import: every reference of a benchmark must be accepted."""
    if sandbox is None:
        sandbox = make_sandbox()
    todo = [t for t in tasks if solution in t.solutions]

    def one(task: Task):
        sol = task.solution(solution)
        return task.id, judge(task, dict(sol.files), sandbox=sandbox, split=split,
                              language=sol.language or task.language)

    n = workers or max(1, int(sandbox.workers or 1))
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="codegym-verify") as ex:
        return list(ex.map(one, todo))


def verify_references(tasks: list[dict], out_dir: str | os.PathLike, report: Any, sandbox: Sandbox | None = None,
                      rounds: int = 2) -> None:
    """Judge the reference of every written task (`tasks`: the mappings just written to
    `out_dir`) on its hidden split. A reference stopped by a limit gets it raised -- the
    memory doubled (up to `MAX_FIX_MEMORY_MB`), the time limit of each timed-out case
    doubled (up to `MAX_FIX_TIME_S`) -- its file rewritten and judged again (`rounds`
    times at most); the raises and the references still not accepted go to `report`
    (notes, counts ``references_accepted`` / ``references_failed`` / ``limits_raised``)."""
    out = Path(out_dir)
    by_id = {t["id"]: t for t in tasks if t.get("solutions", {}).get("reference")}
    todo = list(by_id)
    sb = sandbox if sandbox is not None else make_sandbox()
    failed: dict[str, Any] = {}
    for _ in range(rounds + 1):
        if not todo:
            break
        loaded = [load_task(out / f"{tid.rsplit('/', 1)[-1]}.yaml") for tid in todo]
        results = judge_references(loaded, sandbox=sb)
        failed = {tid: rep for tid, rep in results if rep.verdict != "accepted"}
        todo = [tid for tid in failed if _raise_limits(by_id[tid], failed[tid], report)]
        for tid in todo:
            write_suite_file(out, by_id[tid])
    report.count("references_accepted", len(by_id) - len(failed))
    for tid, rep in failed.items():
        report.count("references_failed")
        report.notes.append(f"the reference of {tid} is not accepted: {rep.verdict}: {rep.message[:300]}")


def _raise_limits(task: dict, rep: Any, report: Any) -> bool:
    """Raise the limit `rep` (a failed reference's report) ran into; False when none can be."""
    limits = task.setdefault("limits", {})
    if rep.verdict == "memory_limit":
        mem = int(limits.get("memory_mb") or Limits.memory_mb)
        if mem >= MAX_FIX_MEMORY_MB:
            return False
        limits["memory_mb"] = min(MAX_FIX_MEMORY_MB, 2 * mem)
        report.notes.append(f"{task['id']}: memory limit raised to {limits['memory_mb']} MB "
                            f"(its reference needs more than {mem} MB)")
        report.count("limits_raised")
        return True
    if rep.verdict != "timeout":
        return False
    slow = {c.name for c in rep.cases if c.status == "timeout"}
    raised = []
    for split in task.get("tests", {}).values():
        for case in split:
            if case.get("name") in slow:
                old = float(case.get("time_s") or limits.get("time_s") or Limits.time_s)
                if old < MAX_FIX_TIME_S:
                    case["time_s"] = min(MAX_FIX_TIME_S, round(2 * old, 3))
                    raised.append(case["name"])
    if not raised:
        return False
    report.notes.append(f"{task['id']}: time limit doubled for {len(set(raised))} case(s) its reference "
                        f"exceeded ({', '.join(sorted(set(raised))[:5])})")
    report.count("limits_raised")
    return True
