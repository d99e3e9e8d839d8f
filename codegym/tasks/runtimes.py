"""Recorded runtime distributions: the per-suite sidecar ``runtimes.json``.

Owns where and how measured runtimes are stored, so the timed rewards can use them
without re-measuring every solution: the file (`SIDECAR`, next to the suite's
``suite.yaml``; task YAMLs and their content hashes stay untouched), the records
(`SolutionRuntime`, `Threshold`, `TaskRuntimes`), `read_sidecar` / `write_sidecar` /
`update_sidecar` (atomic, merged per task id), the lookups for the reward wrappers
(`load_runtimes`: this exact task's distribution rescaled to this machine, or None;
`runtimes_problem`: why None; `perf_runtimes`: the shape of ``Task.perf.runtimes``),
and the DMC-Optim strict top-X% pivots (`percentile_rank`, `thresholds`). Units,
calibration and thresholds: docs/tasks.md.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codegym.core.paths import write_atomic
from codegym.sandbox import make_sandbox
from codegym.tasks.load import find_suite_file, suite_root
from codegym.timing.calibration import calibration_factor, calibration_workload
from codegym.timing.measurement import noise_floor

if TYPE_CHECKING:
    from codegym.sandbox.types import Sandbox
    from codegym.tasks.schema import Task

#: file name of the sidecar inside a suite folder
SIDECAR = "runtimes.json"
#: format of the sidecar (bump on incompatible changes; readers refuse other schemas)
SCHEMA = "codegym.runtimes/1"
#: strict top-X% thresholds stored per task (DMC-Optim reports 30 / 50 / 70)
PERCENTILES = (30, 50, 70)
#: entry of a ``perf.runtimes``-shaped mapping holding the recording calibration seconds
#: (the convention of codegym.wrappers.timed)
CALIBRATION_KEY = "_calibration"


def _sig(x: float | None, digits: int = 6) -> float | None:
    """`x` rounded to `digits` significant digits (keeps the JSON diff-friendly)."""
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return None
    if x == 0:
        return 0.0
    return float(f"{x:.{digits}g}")


def calibration_workload_hash() -> str:
    """First 16 hex of the sha256 of `codegym.timing.calibration_workload()`."""
    return hashlib.sha256(calibration_workload().encode("utf-8")).hexdigest()[:16]


# =========================================================================== records


@dataclass
class SolutionRuntime:
    """One solution's measurement on the perf split.

    language     the solution's language
    median_s     median sample (seconds; instruction count for metric instructions)
    normalized   median_s / calibration (None for instructions or without calibration)
    calibration  seconds of the calibration workload around this measurement
    cv           coefficient of variation of the samples; n: number of samples
    ci           distribution-free 95 % CI of the median (lo, hi); rel_ci its relative
                 half-width
    noise        `codegym.timing.measurement.noise_floor` of the measurement (relative)
    min_s        fastest sample
    min_of       passes per sample (per-input minimum over them)
    """

    language: str
    median_s: float
    normalized: float | None = None
    calibration: float | None = None
    cv: float | None = None
    n: int = 0
    ci: tuple[float, float] | None = None
    rel_ci: float | None = None
    noise: float | None = None
    min_s: float | None = None
    min_of: int | None = None

    @classmethod
    def from_measurement(cls, language: str, m: Any) -> SolutionRuntime:
        """From an ok `codegym.timing.measurement.Measurement`."""
        nf = noise_floor(m)
        return cls(language=language, median_s=float(m.median), normalized=m.normalized,
                   calibration=m.calibration, cv=m.cv, n=int(m.n),
                   ci=(float(m.ci[0]), float(m.ci[1])) if m.ci else None, rel_ci=m.rel_ci,
                   noise=nf if math.isfinite(nf) else None, min_s=m.min,
                   min_of=getattr(m, "min_of", None))

    def value(self, normalized: bool) -> float:
        return float(self.normalized) if normalized and self.normalized is not None else float(self.median_s)

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("median_s", "normalized", "calibration", "min_s"):
            d[k] = _sig(d[k])
        for k in ("cv", "rel_ci", "noise"):
            d[k] = _sig(d[k], 4)
        d["ci"] = [_sig(v) for v in self.ci] if self.ci else None
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SolutionRuntime:
        d = dict(d)
        if d.get("ci") is not None:
            d["ci"] = (float(d["ci"][0]), float(d["ci"][1]))
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class Threshold:
    """Strict top-X% pivot: the solution at nearest rank `rank` (1 = fastest) of `n`."""

    percentile: int
    rank: int
    n: int
    solution: str
    seconds: float
    normalized: float | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["seconds"], d["normalized"] = _sig(self.seconds), _sig(self.normalized)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Threshold:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


def percentile_rank(p: float, n: int) -> int:
    """Nearest rank (1-based, fastest first) of the p-th percentile of n runtimes: the
    smallest k with k / n >= p / 100."""
    if n < 1:
        raise ValueError("percentile_rank of an empty distribution")
    return min(n, max(1, math.ceil(p / 100.0 * n - 1e-9)))


def thresholds(solutions: Mapping[str, SolutionRuntime],
               percentiles: Iterable[int] = PERCENTILES) -> dict[str, Threshold]:
    """``{"top30": Threshold, ...}`` of a distribution (normalised values when every
    solution has one, else raw medians)."""
    if not solutions:
        return {}
    norm = all(s.normalized is not None for s in solutions.values())
    order = sorted(solutions.items(), key=lambda kv: (kv[1].value(norm), kv[0]))
    out: dict[str, Threshold] = {}
    for p in percentiles:
        k = percentile_rank(p, len(order))
        name, s = order[k - 1]
        out[f"top{p}"] = Threshold(percentile=int(p), rank=k, n=len(order), solution=name,
                                   seconds=s.median_s, normalized=s.normalized)
    return out


@dataclass
class TaskRuntimes:
    """The recorded runtime distribution of one task (one entry of the sidecar).

    task_id, content_hash  the exact task measured (`Task.content_hash`)
    metric         cpu | wall | instructions;  unit: "s" or "instructions"
    calibration    median of the solutions' calibration seconds (None for instructions)
    min_of, warmups, repeats  how the measurements were taken (see `codegym.timing.measurement.measure`);
                   min_of is the requested value (None: automatic, see codegym.judge.calibrate;
                   each solution records the value it got)
    baseline, reference       names of the task's baseline / reference in `solutions`
                              (None when not measured)
    solutions      name -> SolutionRuntime: every accepted solution (the distribution)
    thresholds     "top30" / "top50" / "top70" -> Threshold
    measured_at    ISO timestamp (UTC)
    """

    task_id: str
    content_hash: str
    metric: str
    unit: str = "s"
    calibration: float | None = None
    min_of: int | None = None
    warmups: int | None = None
    repeats: int | None = None
    baseline: str | None = None
    reference: str | None = None
    solutions: dict[str, SolutionRuntime] = field(default_factory=dict)
    thresholds: dict[str, Threshold] = field(default_factory=dict)
    measured_at: str = ""

    def __post_init__(self) -> None:
        if not self.thresholds and self.solutions:
            self.thresholds = thresholds(self.solutions)
        if not self.measured_at:
            self.measured_at = datetime.now(UTC).replace(microsecond=0).isoformat()

    @property
    def normalized_ok(self) -> bool:
        """True when every solution has a normalised value (cpu / wall with calibration)."""
        return bool(self.solutions) and all(s.normalized is not None for s in self.solutions.values())

    def sorted(self) -> list[tuple[str, SolutionRuntime]]:
        """Solutions fastest first."""
        norm = self.normalized_ok
        return sorted(self.solutions.items(), key=lambda kv: (kv[1].value(norm), kv[0]))

    @property
    def ratio(self) -> float | None:
        """median(baseline) / median(reference) (normalised when available: each solution
        divided by its own calibration, which cancels drift between the two)."""
        b, r = self.solutions.get(self.baseline or ""), self.solutions.get(self.reference or "")
        if b is None or r is None:
            return None
        norm = b.normalized is not None and r.normalized is not None
        rv = r.value(norm)
        return b.value(norm) / rv if rv > 0 else None

    @property
    def ratio_ci(self) -> tuple[float, float] | None:
        """Conservative range of the ratio from the two medians' CIs, in the ratio's units
        (each CI divided by its solution's calibration when the ratio is normalised)."""
        b, r = self.solutions.get(self.baseline or ""), self.solutions.get(self.reference or "")
        if b is None or r is None or not b.ci or not r.ci or r.ci[0] <= 0 or r.ci[1] <= 0:
            return None
        bc, rc = b.calibration, r.calibration
        norm = b.normalized is not None and r.normalized is not None
        kb, kr = (1.0 / bc, 1.0 / rc) if norm and bc and rc else (1.0, 1.0)
        return b.ci[0] * kb / (r.ci[1] * kr), b.ci[1] * kb / (r.ci[0] * kr)

    @property
    def noise(self) -> float | None:
        """Largest noise floor (relative) among the measured solutions."""
        vals = [s.noise for s in self.solutions.values() if s.noise is not None]
        return max(vals) if vals else None

    def to_dict(self) -> dict:
        order = [n for n, _ in self.sorted()]
        return {
            "content_hash": self.content_hash,
            "metric": self.metric,
            "unit": self.unit,
            "calibration": _sig(self.calibration),
            "min_of": self.min_of,
            "warmups": self.warmups,
            "repeats": self.repeats,
            "baseline": self.baseline,
            "reference": self.reference,
            "ratio": _sig(self.ratio, 4),
            "noise": _sig(self.noise, 4),
            "order": order,
            "solutions": {n: self.solutions[n].to_dict() for n in order},
            "thresholds": {k: v.to_dict() for k, v in sorted(self.thresholds.items(),
                                                             key=lambda kv: kv[1].percentile)},
            "measured_at": self.measured_at,
        }

    @classmethod
    def from_dict(cls, task_id: str, d: Mapping[str, Any]) -> TaskRuntimes:
        sols = {n: SolutionRuntime.from_dict(s) for n, s in (d.get("solutions") or {}).items()}
        ths = {k: Threshold.from_dict(v) for k, v in (d.get("thresholds") or {}).items()}
        return cls(task_id=task_id, content_hash=str(d["content_hash"]), metric=str(d["metric"]),
                   unit=str(d.get("unit") or "s"), calibration=d.get("calibration"),
                   min_of=d.get("min_of"), warmups=d.get("warmups"), repeats=d.get("repeats"),
                   baseline=d.get("baseline"), reference=d.get("reference"), solutions=sols,
                   thresholds=ths, measured_at=str(d.get("measured_at") or ""))


# =========================================================================== the file


def suite_dir_of(task: Task) -> Path | None:
    """The suite folder a loaded task belongs to (None for a task built in memory)."""
    src = getattr(task, "source_path", None)
    if not src:
        return None
    p = Path(src)
    return suite_root(p, find_suite_file(p))


def sidecar_path_for(task: Task) -> Path | None:
    """``<suite folder>/runtimes.json`` of a loaded task (None for a task built in memory)."""
    d = suite_dir_of(task)
    return d / SIDECAR if d is not None else None


_READ_LOCK = threading.Lock()
#: parsed sidecars by path, keyed by (inode, mtime, size): writes replace the file (new inode)
_READ_CACHE: dict[Path, tuple[tuple[int, int, int], dict]] = {}


def _empty(suite: str = "") -> dict:
    return {"schema": SCHEMA, "suite": suite, "calibration_workload": calibration_workload_hash(),
            "machine": {}, "tasks": {}}


def read_sidecar(path: str | os.PathLike) -> dict:
    """The parsed sidecar (an empty document when the file does not exist); cached by
    modification time. Raises ValueError for a file that is not a sidecar of this schema."""
    p = Path(path).resolve()
    try:
        st = p.stat()
    except FileNotFoundError:
        return _empty(p.parent.name)
    sig = (st.st_ino, st.st_mtime_ns, st.st_size)
    with _READ_LOCK:
        hit = _READ_CACHE.get(p)
    if hit is not None and hit[0] == sig:
        return hit[1]
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{p}: not a readable runtimes sidecar: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("tasks"), dict):
        raise ValueError(f"{p}: not a runtimes sidecar of schema {SCHEMA!r} "
                         f"(schema {doc.get('schema') if isinstance(doc, dict) else None!r})")
    with _READ_LOCK:
        _READ_CACHE[p] = (sig, doc)
    return doc


def write_sidecar(path: str | os.PathLike, doc: Mapping[str, Any]) -> None:
    """Write a sidecar atomically (temporary file + rename), keys sorted, tasks by id."""
    p = Path(path)
    body = dict(doc)
    body["tasks"] = {k: body["tasks"][k] for k in sorted(body.get("tasks") or {})}
    text = json.dumps(body, indent=1, sort_keys=False, ensure_ascii=False) + "\n"
    # 0644: the sidecar is data others read (mkstemp makes 0600)
    write_atomic(p, text, mode=0o644, prefix=".runtimes-", suffix=".tmp")
    with _READ_LOCK:
        _READ_CACHE.pop(p.resolve(), None)


def update_sidecar(path: str | os.PathLike, records: Iterable[TaskRuntimes], *, suite: str = "",
                   machine: Mapping[str, Any] | None = None,
                   keep_ids: Iterable[str] | None = None) -> dict:
    """Merge `records` into the sidecar at `path` (replacing entries of the same task id)
    and write it. With `keep_ids`, entries of other ids (tasks that no longer exist) are
    dropped. A file recorded with another calibration workload starts over: its normalised
    values are not comparable with the new ones. Returns the written document."""
    try:
        doc = dict(read_sidecar(path))
    except ValueError:
        doc = _empty(suite)
    cal_hash = calibration_workload_hash()
    if doc.get("calibration_workload") != cal_hash:
        doc = _empty(suite)
    tasks = dict(doc.get("tasks") or {})
    for rec in records:
        tasks[rec.task_id] = rec.to_dict()
    if keep_ids is not None:
        keep = set(keep_ids)
        tasks = {k: v for k, v in tasks.items() if k in keep}
    doc.update(schema=SCHEMA, suite=suite or doc.get("suite") or Path(path).parent.name,
               calibration_workload=cal_hash, tasks=tasks)
    if machine is not None:
        doc["machine"] = dict(machine)
    write_sidecar(path, doc)
    return doc


# =========================================================================== lookup


def task_entry(task: Task, path: str | os.PathLike | None = None) -> tuple[TaskRuntimes | None, str | None]:
    """(the recorded entry of this exact task, None) or (None, why there is none)."""
    p = Path(path) if path is not None else sidecar_path_for(task)
    if p is None:
        return None, "the task was not loaded from a file (no suite folder to look in)"
    if not p.is_file():
        return None, f"no {SIDECAR} in {p.parent} (run `codegym tasks calibrate --write`)"
    try:
        doc = read_sidecar(p)
    except ValueError as e:
        return None, str(e)
    if doc.get("calibration_workload") != calibration_workload_hash():
        return None, (f"{p} was recorded with another calibration workload: its normalised "
                      "runtimes are not comparable (recalibrate)")
    raw = doc["tasks"].get(task.id)
    if raw is None:
        return None, f"{p} has no entry for {task.id}"
    if raw.get("content_hash") != task.content_hash:
        return None, (f"{p}: the entry of {task.id} was measured on content hash "
                      f"{str(raw.get('content_hash'))[:12]}, the task is now "
                      f"{task.content_hash[:12]} (recalibrate)")
    try:
        rec = TaskRuntimes.from_dict(task.id, raw)
    except (KeyError, TypeError, ValueError) as e:
        return None, f"{p}: malformed entry for {task.id}: {e}"
    if not rec.solutions:
        return None, f"{p}: the entry of {task.id} has no measured solutions"
    return rec, None


def runtimes_problem(task: Task, metric: str | None = None,
                     path: str | os.PathLike | None = None) -> str | None:
    """Why `load_runtimes(task, metric=metric)` gives None (None when it gives a record)."""
    rec, why = task_entry(task, path)
    if rec is None:
        return why
    if metric is not None and metric != rec.metric:
        return f"the runtimes of {task.id} were recorded with metric {rec.metric!r}, not {metric!r}"
    return None


def load_runtimes(task: Task, *, metric: str | None = None, sandbox: Sandbox | None = None,
                  calibration: float | None = None, rescale: bool = True,
                  path: str | os.PathLike | None = None) -> dict | None:
    """The recorded runtime distribution of `task`, rescaled to this machine, or None.

    None when the task's suite has no sidecar, the sidecar has no entry for the task id,
    the entry was measured on another content hash (the task changed), `metric` is given
    and differs from the recorded one, or the calibration workload changed since
    (`runtimes_problem` says which).

    Rescaling: seconds here = normalized * the calibration factor here, which is
    `calibration` when given, else `codegym.timing.calibration_factor(sandbox, metric)`
    (`sandbox` default: ``make_sandbox()``; cached per process after its first ~1 s).
    With ``rescale=False`` (or metric instructions, or no recorded calibration) the
    recorded values are returned as they are.

    Returns a dict:

    task_id, content_hash, metric, unit ("s" | "instructions"), baseline, reference,
    order              solution names, fastest first
    runtimes           {name: seconds (or instructions) on this machine}
    normalized         {name: median / calibration} (empty for instructions)
    recorded           {name: median seconds on the recording machine}
    cv, n, noise       {name: ...} of the recorded measurements
    thresholds         {"top30": seconds here, "top50": ..., "top70": ...}
    thresholds_normalized  the same, normalised
    pivots             {"top30": solution name, ...} (the nearest-rank solution)
    ratio              baseline / reference (None without both)
    calibration        calibration seconds of the recording machine (None: instructions)
    local_calibration  calibration seconds here (None when not rescaled)
    scale              local_calibration / calibration (1.0 when not rescaled)
    rescaled           whether `runtimes` were rescaled
    min_of             {name: passes per sample of its measurement}
    warmups, repeats, measured_at, source (the sidecar's path)
    """
    p = Path(path) if path is not None else sidecar_path_for(task)
    rec, _ = task_entry(task, p)
    if rec is None or (metric is not None and metric != rec.metric):
        return None
    norm = {n: s.normalized for n, s in rec.solutions.items() if s.normalized is not None}
    can_rescale = (rescale and rec.metric != "instructions" and rec.normalized_ok
                   and rec.calibration is not None)
    local = None
    if can_rescale:
        if calibration is not None:
            local = float(calibration)
        else:
            if sandbox is None:
                sandbox = make_sandbox()
            local = float(calibration_factor(sandbox, rec.metric))
    if local is not None:
        here = {n: norm[n] * local for n in rec.solutions}
    else:
        here = {n: s.median_s for n, s in rec.solutions.items()}
    ths = {k: here[t.solution] for k, t in rec.thresholds.items() if t.solution in here}
    ths_norm = {k: t.normalized for k, t in rec.thresholds.items() if t.normalized is not None}
    return {
        "task_id": rec.task_id,
        "content_hash": rec.content_hash,
        "metric": rec.metric,
        "unit": rec.unit,
        "baseline": rec.baseline,
        "reference": rec.reference,
        "order": [n for n, _ in rec.sorted()],
        "runtimes": here,
        "normalized": norm,
        "recorded": {n: s.median_s for n, s in rec.solutions.items()},
        "cv": {n: s.cv for n, s in rec.solutions.items()},
        "n": {n: s.n for n, s in rec.solutions.items()},
        "noise": {n: s.noise for n, s in rec.solutions.items()},
        "thresholds": ths,
        "thresholds_normalized": ths_norm,
        "pivots": {k: t.solution for k, t in rec.thresholds.items()},
        "ratio": rec.ratio,
        "calibration": rec.calibration,
        "local_calibration": local,
        "scale": (local / rec.calibration) if local is not None and rec.calibration else 1.0,
        "rescaled": local is not None,
        "min_of": {n: s.min_of for n, s in rec.solutions.items()},
        "warmups": rec.warmups,
        "repeats": rec.repeats,
        "measured_at": rec.measured_at,
        "source": str(p),
    }


def perf_runtimes(task: Task, metric: str | None = None,
                  path: str | os.PathLike | None = None) -> dict[str, float] | None:
    """The recorded distribution in the shape of ``Task.perf.runtimes``: ``{solution:
    seconds on the recording machine, "_calibration": its calibration seconds}`` (no
    ``_calibration`` entry for instructions), or None as for `load_runtimes`.

    Seconds are given on the task's recording calibration, so that ``value /
    _calibration`` is exactly each solution's normalised value (each solution was
    normalised by the calibration sampled around its own measurement)."""
    rec = load_runtimes(task, metric=metric, rescale=False, path=path)
    if rec is None:
        return None
    cal = rec["calibration"]
    norm = rec["normalized"]
    if rec["metric"] == "instructions" or not cal or set(norm) != set(rec["recorded"]):
        return dict(rec["recorded"])
    out = {n: v * cal for n, v in norm.items()}
    out[CALIBRATION_KEY] = float(cal)
    return out
