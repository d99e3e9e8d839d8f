"""Recorded episodes as the reward simulator reads them (`codegym rewards simulate`).

`Recording` is one episode: its GRPO group, the final judge report, the steps the shaping
wrappers look at, and per timing metric the measured times with their intervals
(`MetricTimes`: the final program and the task's solutions). `load_recordings` reads
``codegym eval`` directories or ``results.jsonl``, ``collect`` trajectory JSONL and the
recording files `save_recordings` writes; `measure_recordings` measures what a recording
lacks (the final program and the task's solutions on the perf split, through the
wrappers' own measurements); `synthetic_variants` adds seeded programs at known
speedups. docs/simulate.md describes the file format and where timings come from.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from codegym.core.jsonl import DataError, json_lines
from codegym.edits.parse import apply_changes, parse_action
from codegym.judge.perf import Unscorable, perf_workload
from codegym.rollout.records import Trajectory, state_hash
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task
from codegym.wrappers.measure import (
    TimedRunFailed,
    TimingSettings,
    measure_workload,
    measurement_field,
    solution_files,
    solution_measurement,
)

#: how episodes form GRPO groups: as recorded (collect's group id; eval: the task), per task,
#: or per task and agent
GROUP_BY = ("recorded", "task", "task_agent")
RECORDING_KIND = "recording"


class RecordingError(ValueError):
    """A recording cannot be read or completed (the message names the file and line)."""


@dataclass(frozen=True)
class Interval:
    """A measured value with its confidence interval (same unit)."""

    value: float
    lo: float
    hi: float

    @classmethod
    def of(cls, v: Any) -> Interval:
        if isinstance(v, Interval):
            return v
        if isinstance(v, Mapping):
            return cls(float(v["value"]), float(v.get("lo", v["value"])), float(v.get("hi", v["value"])))
        value, lo, hi = (float(x) for x in v)
        return cls(value, lo, hi)

    @property
    def rel(self) -> float:
        """Relative half-width of the interval (0 for an exact value)."""
        return (self.hi - self.lo) / 2.0 / self.value if self.value > 0 else 0.0

    @property
    def log_sigma(self) -> float:
        """Standard deviation on the log scale implied by a 95 % interval."""
        if not (self.lo > 0 and self.hi > 0 and math.isfinite(self.hi)):
            return 0.0
        return (math.log(self.hi) - math.log(self.lo)) / (2 * 1.959964)

    def scaled(self, factor: float) -> Interval:
        return Interval(self.value * factor, self.lo * factor, self.hi * factor)

    def to_list(self) -> list[float]:
        return [self.value, self.lo, self.hi]


@dataclass
class MetricTimes:
    """One metric's times of a recorded program and of its task's solutions (one unit).

    candidate     the final program (None when it was not measured)
    solutions     name -> interval of the task's accepted solutions (the runtime distribution)
    baseline, reference   names of the task's baseline and reference among `solutions`
    identical_to  the solution whose program the candidate is (its speedup is exactly 1)
    perf_failed   (status, message) when a timed run of the candidate failed: not correct
    """

    unit: str
    candidate: Interval | None = None
    solutions: dict[str, Interval] = field(default_factory=dict)
    baseline: str | None = None
    reference: str | None = None
    identical_to: str | None = None
    perf_failed: tuple[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"unit": self.unit, "candidate": self.candidate.to_list() if self.candidate else None,
                "solutions": {k: v.to_list() for k, v in self.solutions.items()},
                "baseline": self.baseline, "reference": self.reference, "identical_to": self.identical_to,
                "perf_failed": list(self.perf_failed) if self.perf_failed else None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MetricTimes:
        cand = d.get("candidate")
        pf = d.get("perf_failed")
        return cls(unit=str(d.get("unit") or "s"), candidate=Interval.of(cand) if cand else None,
                   solutions={k: Interval.of(v) for k, v in (d.get("solutions") or {}).items()},
                   baseline=d.get("baseline"), reference=d.get("reference"), identical_to=d.get("identical_to"),
                   perf_failed=(str(pf[0]), str(pf[1])) if pf else None)


@dataclass
class Recording:
    """One recorded episode (see the module docstring)."""

    key: str
    group: str
    task_id: str
    agent: str
    report: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, MetricTimes] = field(default_factory=dict)
    default_metric: str | None = None
    true_speedup: float | None = None
    synthetic: bool = False
    language: str | None = None
    task_hash: str = ""
    final_files: dict[str, str] | None = None
    final_state: str = ""
    source: str = ""

    @property
    def submitted(self) -> bool:
        return any(s.get("submitted") for s in self.steps) or bool(self.report.get("verdict"))

    @property
    def correct(self) -> bool:
        """Accepted, and no timed run failed on the perf split."""
        mt = self.times()
        return self.report.get("verdict") == "accepted" and not (mt is not None and mt.perf_failed)

    def times(self, metric: str | None = None) -> MetricTimes | None:
        return self.timings.get(metric or self.default_metric or "")

    def speedup(self) -> float | None:
        """The true speedup over the baseline when known (synthetic), else the measured one."""
        if self.true_speedup is not None:
            return self.true_speedup
        mt = self.times()
        if mt is None or mt.candidate is None or mt.baseline not in mt.solutions:
            return None
        return mt.solutions[mt.baseline].value / mt.candidate.value

    def to_dict(self) -> dict[str, Any]:
        return {"kind": RECORDING_KIND, "key": self.key, "group": self.group, "task_id": self.task_id,
                "agent": self.agent, "report": self.report, "steps": self.steps,
                "timings": {m: t.to_dict() for m, t in self.timings.items()},
                "default_metric": self.default_metric, "true_speedup": self.true_speedup,
                "synthetic": self.synthetic, "language": self.language, "task_hash": self.task_hash,
                "final_files": self.final_files, "final_state": self.final_state, "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Recording:
        return cls(key=d["key"], group=d["group"], task_id=d["task_id"], agent=d.get("agent", ""),
                   report=dict(d.get("report") or {}), steps=list(d.get("steps") or []),
                   timings={m: MetricTimes.from_dict(t) for m, t in (d.get("timings") or {}).items()},
                   default_metric=d.get("default_metric"), true_speedup=d.get("true_speedup"),
                   synthetic=bool(d.get("synthetic")), language=d.get("language"),
                   task_hash=d.get("task_hash", ""), final_files=d.get("final_files"),
                   final_state=d.get("final_state", ""), source=d.get("source", ""))


# --------------------------------------------------------------------------- reading


def _slim_report(rep: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the rewards read of a judge report (no outputs, no messages)."""
    if not rep:
        return {}
    out = {k: rep.get(k) for k in ("verdict", "passed", "total", "split", "progress", "stage", "message")}
    out["cases"] = [{"status": c.get("status"), "split": c.get("split")} for c in rep.get("cases") or ()]
    return out


def _times_block(t: Mapping[str, Any]) -> MetricTimes:
    """A `StagedReward` / eval ``times`` dict (t, t_baseline, t_reference with relative noise)."""
    def iv(v: float, noise: float) -> Interval:
        return Interval(v, v * (1 - noise), v * (1 + noise))
    return MetricTimes(unit=str(t.get("unit") or "s"), candidate=iv(t["t"], float(t.get("noise") or 0)),
                       solutions={"baseline": iv(t["t_baseline"], float(t.get("noise_baseline") or 0)),
                                  "reference": iv(t["t_reference"], float(t.get("noise_reference") or 0))},
                       baseline="baseline", reference="reference")


def _from_eval(d: Mapping[str, Any]) -> Recording:
    verdict = d.get("verdict")
    report = {"verdict": None if verdict == "no_submission" else verdict, "passed": d.get("passed"),
              "total": d.get("total"), "split": "hidden", "cases": []}
    steps = [{"action": s.get("action") or "", "diff": s.get("diff") or "", "error": s.get("error"),
              "submitted": bool(s.get("submitted")), "judge": None} for s in d.get("steps") or ()]
    rec = Recording(key=d["key"], group=f"{d['suite']}:{d['task_id']}", task_id=d["task_id"], agent=d["agent"],
                    report=report, steps=steps, language=d.get("language"), task_hash=d.get("task_hash", ""),
                    final_files=dict(d.get("final_files") or {}), source="eval")
    perf = d.get("perf") or {}
    if isinstance(perf.get("times"), Mapping):
        rec.default_metric = perf.get("metric") or "cpu"
        rec.timings[rec.default_metric] = _times_block(perf["times"])
    if perf and perf.get("correct_runnable") is False:
        mt = rec.timings.setdefault(perf.get("metric") or "cpu", MetricTimes(unit="s"))
        mt.perf_failed = ("wrong_answer", "; ".join(perf.get("notes") or []) or "not correct on the perf split")
        rec.default_metric = rec.default_metric or perf.get("metric") or "cpu"
    return rec


def _from_trajectory(t: Trajectory) -> Recording:
    steps, final = [], {}
    for s in t.steps:
        info = s.info or {}
        steps.append({"action": s.action, "diff": s.diff or "", "error": s.error,
                      "submitted": bool(info.get("submitted")), "judge": _slim_report(s.judge) if s.judge else None})
        if info.get("submitted") and s.judge:
            final = s.judge
        staged = info.get("staged")
        if isinstance(staged, Mapping) and isinstance(staged.get("times"), Mapping):
            tb = staged["times"]
            metric = "instructions" if tb.get("unit") == "instructions" else "cpu"
            steps[-1]["times"] = {"metric": metric, **tb}
    rec = Recording(key=t.episode_key, group=t.group_id, task_id=t.task_id, agent=t.agent,
                    report=_slim_report(final), steps=steps, language=(t.metadata or {}).get("language"),
                    task_hash=t.task_hash, final_state=str((t.metadata or {}).get("final_state") or ""),
                    source="collect")
    for s in steps:
        if "times" in s:
            tb = s.pop("times")
            rec.default_metric = rec.default_metric or tb["metric"]
            rec.timings[tb["metric"]] = _times_block(tb)
    return rec


def _files_of(path: Path) -> list[Path]:
    if path.is_dir():
        res = path / "results.jsonl"
        if not res.is_file():
            raise RecordingError(f"{path}: no results.jsonl (not a codegym eval directory)")
        return [res]
    return [path]


def load_recordings(sources: Iterable[str | Path], group_by: str = "recorded") -> list[Recording]:
    """Every episode of `sources` (eval dirs, eval results.jsonl, collect JSONL, recordings)."""
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {GROUP_BY}, not {group_by!r}")
    out: list[Recording] = []
    for src in sources:
        for f in _files_of(Path(src)):
            try:
                for n, d in json_lines(f, error=RecordingError):
                    rec = _read_one(d, f, n)
                    if rec is not None:
                        out.append(rec)
            except DataError as e:
                raise RecordingError(str(e)) from None
    seen: set[str] = set()
    for r in out:
        if r.key in seen:
            raise RecordingError(f"episode {r.key!r} is recorded twice (give each source once)")
        seen.add(r.key)
        if group_by == "task":
            r.group = r.task_id
        elif group_by == "task_agent":
            r.group = f"{r.task_id}|{r.agent}"
    return out


def _read_one(d: Any, f: Path, n: int) -> Recording | None:
    if not isinstance(d, Mapping):
        raise RecordingError(f"{f}:{n}: not a JSON object")
    try:
        if d.get("kind") == RECORDING_KIND:
            return Recording.from_dict(d)
        if d.get("kind") == "episode":
            return _from_eval(d)
        if d.get("kind") is not None:  # eval's speed comparisons and other records
            return None
        if "group_id" in d and "steps" in d:
            return _from_trajectory(Trajectory.from_dict(d))
    except (KeyError, TypeError, ValueError) as e:
        raise RecordingError(f"{f}:{n}: not a readable episode record: {type(e).__name__}: {e}") from None
    raise RecordingError(f"{f}:{n}: neither an eval episode, a collect trajectory nor a recording")


def save_recordings(path: str | Path, recs: Sequence[Recording]) -> int:
    """Write recordings as JSONL (readable by `load_recordings`); returns the count."""
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for r in recs:
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n")
    tmp.replace(p)
    return len(recs)


# --------------------------------------------------------------------------- measuring


def final_files(task: Task, rec: Recording, actions: Sequence[str]) -> dict[str, str]:
    """A collect episode's final files: its actions replayed on the starter, checked
    against the recorded final state hash when there is one."""
    files = dict(task.starter_files())
    main = task.main_file_for(rec.language or task.language) or ""
    for a in actions:
        parsed = parse_action(a, files, main)
        if parsed.error is None and parsed.changes:
            files = apply_changes(files, parsed.changes)
    if rec.final_state and state_hash(files) != rec.final_state:
        raise RecordingError(f"{rec.key}: replaying the actions does not give the recorded final files "
                             "(the env used other edit formats?)")
    return files


def _interval(m) -> Interval | None:
    """A measurement's median and CI (raw units: every program of a task is measured in
    the same sandbox, and only ratios are used)."""
    med, ci = measurement_field(m, "median"), measurement_field(m, "ci")
    if med is None or not med > 0:
        return None
    lo, hi = ci if ci else (None, None)
    if not (lo and hi and lo > 0 and math.isfinite(hi)):  # too few samples for a CI: 2 CVs
        cv = measurement_field(m, "cv")
        w = 2.0 * cv if cv is not None and math.isfinite(cv) else 0.0
        lo, hi = med * max(1e-3, 1.0 - w), med * (1.0 + w)
    return Interval(float(med), float(lo), float(hi))


def _solution_times(task: Task, sandbox: Sandbox, settings: TimingSettings) -> dict[str, Interval]:
    out: dict[str, Interval] = {}
    for name, sol in task.solutions.items():
        if getattr(sol, "expect", "accepted") != "accepted":
            continue
        try:
            iv = _interval(solution_measurement(task, name, sandbox, settings))
        except Unscorable:
            continue
        if iv is not None:
            out[name] = iv
    return out


def measure_recordings(recs: Sequence[Recording], tasks: Mapping[str, Any], sandbox: Sandbox, metric: str | None = None,
                       settings: TimingSettings | None = None, progress=None) -> int:
    """Measure every accepted recording lacking `metric` (None: each task's own) on its
    task's perf split, with the task's solutions; returns the number measured.

    `tasks`: task id -> Task. A collect episode's final files are rebuilt from its
    actions (`final_files`). A timed run that fails marks the program ``perf_failed``
    (not correct), as the wrappers would; `progress(rec)` is called after each."""
    settings = settings or TimingSettings(repeats=5, max_pairs=5)
    done = 0
    for rec in recs:
        if rec.synthetic or rec.report.get("verdict") != "accepted":
            continue
        task = tasks.get(rec.task_id)
        if task is None:
            raise RecordingError(f"{rec.key}: task {rec.task_id!r} not found (pass its suite)")
        if rec.task_hash and rec.task_hash != task.content_hash:
            raise RecordingError(f"{rec.key}: task {rec.task_id} changed since the episode was recorded "
                                 f"(hash {rec.task_hash[:12]} != {task.content_hash[:12]})")
        m = metric or task.perf.metric
        if m in rec.timings and rec.timings[m].candidate is not None:
            continue
        files = rec.final_files or final_files(task, rec, [s.get("action") or "" for s in rec.steps])
        rec.timings[m] = _measure_one(task, files, rec.language or task.language, sandbox,
                                      replace(settings, metric=m), m)
        rec.default_metric = rec.default_metric or m
        done += 1
        if progress is not None:
            progress(rec)
    return done


def _measure_one(task: Task, files: Mapping[str, str], language: str, sandbox: Sandbox, settings: TimingSettings,
                 metric: str) -> MetricTimes:
    sols = _solution_times(task, sandbox, settings)
    mt = MetricTimes(unit="instructions" if metric == "instructions" else "s", solutions=sols,
                     baseline=None if task.baseline_is_starter else task.baseline_name, reference=task.reference_name)
    for name in sols:
        lang, sfiles = solution_files(task, name)
        if lang == language and dict(sfiles) == dict(files):
            mt.identical_to, mt.candidate = name, sols[name]
            return mt
    try:
        m = measure_workload(sandbox, perf_workload(task, files, language, sandbox), settings, metric)
    except TimedRunFailed as e:
        mt.perf_failed = (e.status, str(e))
        return mt
    except Unscorable:
        return mt
    mt.candidate = _interval(m)
    return mt


# --------------------------------------------------------------------------- synthetic variants


def synthetic_variants(recs: Sequence[Recording], speedups: Sequence[float], seed: int = 0,
                       metric: str | None = None) -> list[Recording]:
    """Seeded correct programs at known speedups over each group's baseline.

    For every group with a measured accepted program, one variant per speedup s: its
    true time is t_baseline / s, its recorded value that time with the log-normal noise
    of the group's own measurements (seeded), its interval as wide as theirs."""
    rng = random.Random(seed)
    out: list[Recording] = []
    groups: dict[str, list[Recording]] = {}
    for r in recs:
        groups.setdefault(r.group, []).append(r)
    for gid in sorted(groups):
        measured = [r for r in groups[gid] if r.correct and (mt := r.times(metric)) is not None
                    and mt.candidate is not None and mt.baseline in mt.solutions]
        if not measured:
            continue
        proto = measured[0]
        m = metric or proto.default_metric
        base = proto.timings[m]
        sigma = max(r.timings[m].candidate.log_sigma for r in measured) or 0.01
        tb = base.solutions[base.baseline].value
        for j, s in enumerate(speedups):
            true = tb / float(s)
            measured_v = true * math.exp(rng.gauss(0.0, sigma))
            half = math.exp(1.959964 * sigma)
            mt = MetricTimes(unit=base.unit, candidate=Interval(measured_v, measured_v / half, measured_v * half),
                             solutions=dict(base.solutions), baseline=base.baseline, reference=base.reference)
            out.append(Recording(key=f"{gid}/synthetic-{j}", group=gid, task_id=proto.task_id,
                                 agent=f"synthetic x{float(s):g}", report=dict(proto.report),
                                 steps=[{"diff": "", "error": None, "submitted": True, "judge": None}],
                                 timings={m: mt}, default_metric=m, true_speedup=float(s), synthetic=True,
                                 language=proto.language, task_hash=proto.task_hash, source="synthetic"))
    return out

