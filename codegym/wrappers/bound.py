"""The slow bound: a timed run of a program no faster than the baseline is stopped.

`SlowBound` is ``slow_bound`` times the baseline's calibrated time per pass over the
perf inputs (recorded in ``runtimes.json`` and rescaled by this sandbox's calibration,
or measured here and cached); `baseline_bound` computes it. `probe` decides before the
full measurement: from the perf split's judged runs when they already reach the bound,
else from one sequential pass whose runs get only the time left under it.
`bounded_workload` caps every later timed run at the bound (the probe's runs are the
sandbox's own, one each: a pass is not a measurement). `BoundReached` says the
program was stopped: the rewards score it as the baseline (no improvement), so one
slow candidate costs about two baseline passes, not a full measurement.
docs/rewards.md ("The slow bound") gives the rule.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from codegym.judge.perf import PerfRuns, Unscorable
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task
from codegym.timing.calibration import calibration_factor
from codegym.wrappers.measure import (
    PROGRAM_FAILURES,
    TimedRunFailed,
    TimingSettings,
    recorded_runtimes,
    solution_measurement,
)

#: shortest CPU limit a bounded run gets (the sandbox's limits are whole-second rlimits
#: plus an exact check of the CPU time used; a run is never given less than this)
MIN_RUN_S = 0.05


class BoundReached(Exception):
    """The candidate was stopped as no faster than the baseline: a timed pass reached the
    slow bound (``rule`` "slow_bound"), or its first passes ruled out a speedup worth
    rewarding (``rule`` "futility", `codegym.wrappers.baseline.look_at`); `spent_s` the
    time its last pass had used, `looks` the near-tie looks that decided (if any)."""

    def __init__(self, bound: SlowBound, spent_s: float, how: str, rule: str = "slow_bound",
                 looks: dict | None = None, kept: dict | None = None):
        where = (f"the slow bound ({bound.seconds:.3g} s = {bound.factor:g} x the baseline's "
                 f"{bound.baseline_s:.3g} s)" if rule == "slow_bound" and bound.seconds is not None
                 else f"no speedup worth rewarding over the baseline's {bound.baseline_s:.3g} s")
        super().__init__(f"stopped: {where}: {how}")
        self.bound, self.spent_s, self.how, self.rule = bound, float(spent_s), how, rule
        self.looks, self.kept = looks, kept

    def details(self) -> dict:
        """``info[...]["bound"]`` of a stopped program."""
        out = {**self.bound.to_dict(), "reached": True, "spent_s": self.spent_s, "how": self.how,
               "rule": self.rule}
        if self.looks is not None:
            out["looks"] = self.looks
        if self.kept is not None:
            out["kept"] = self.kept
        return out


@dataclass(frozen=True)
class SlowBound:
    """The time per pass at which a candidate's timed runs are stopped.

    seconds     factor * baseline_s, in the metric's seconds (cpu or wall), here (None: no
                bound, only the futility rule stops)
    baseline_s  the baseline's time per pass in this sandbox now: its kept concurrent
                passes at the machine's speed now (``kept``, `codegym.wrappers.baseline`),
                or recorded and rescaled by the calibration (``recorded``), or measured
                here (``measured``)
    """

    seconds: float | None
    baseline_s: float
    factor: float | None
    metric: str
    source: str

    def to_dict(self) -> dict:
        return asdict(self)


def baseline_bound(task: Task, sandbox: Sandbox, settings: TimingSettings, factor: float | None) -> SlowBound | None:
    """The slow bound of `task` in `sandbox` (None: no factor, instruction counts, or a
    baseline whose time is unknown)."""
    metric = settings.metric_for(task)
    if factor is None or metric == "instructions":
        return None
    name = task.baseline_name
    rt, cal = recorded_runtimes(task, metric)
    if name in rt and rt[name] > 0:
        tb, source = float(rt[name]), "recorded"
        if cal:  # recorded seconds -> seconds of this sandbox, as measurements are normalised
            try:
                tb = tb / cal * calibration_factor(sandbox, metric)
            except Exception:  # noqa: BLE001 -- no calibration: no bound, the measurement decides
                return None
    else:
        try:
            tb, source = float(solution_measurement(task, name, sandbox, settings).median), "measured"
        except (Unscorable, TypeError):
            return None
    if not (tb > 0 and math.isfinite(tb)):
        return None
    return SlowBound(seconds=factor * tb, baseline_s=tb, factor=float(factor), metric=metric, source=source)


def _run_limits(wl: PerfRuns, i: int):
    req = wl.inputs[i]
    return req.limits or wl.limits


def _capped(limits, seconds: float):
    """`limits` with the CPU limit (and the wall limit derived from it) at most `seconds`."""
    cap = max(MIN_RUN_S, seconds)
    if cap >= limits.time_s:
        return limits
    wall = min(limits.wall(), limits.wall_factor * cap + 1.0)
    return limits.replace(time_s=cap, wall_s=wall)


def bounded_workload(wl: PerfRuns, bound: SlowBound | None) -> PerfRuns:
    """`wl` with every run's limits capped at the bound (unchanged without one). Only the
    runs carry the cap: `wl.limits`, which a comparison also gives the comparand's runs,
    stays the task's."""
    if bound is None or bound.seconds is None:
        return wl
    inputs = [dataclasses.replace(r, limits=_capped(_run_limits(wl, i), bound.seconds))
              for i, r in enumerate(wl.inputs)]
    return dataclasses.replace(wl, inputs=inputs)


def judged_seconds(perf_report: Mapping[str, Any] | None, metric: str) -> float | None:
    """The time the perf split's judged runs took in all (the sum over its cases), or None
    when the report has no complete set of timed cases."""
    cases = [c for c in (perf_report or {}).get("cases") or () if c.get("split") == "perf"]
    if not cases or any(c.get("status") != "passed" for c in cases):
        return None
    key = "wall_s" if metric == "wall" else "time_s"
    return float(sum(float(c.get(key) or 0.0) for c in cases))


def _input_index(reason: str) -> int | None:
    m = re.match(r"input (\d+)", reason or "")
    return int(m.group(1)) if m else None


def probe(sandbox: Sandbox, wl: PerfRuns, bound: SlowBound, metric: str,
          perf_report: Mapping[str, Any] | None = None) -> float:
    """Stop a candidate that is no faster than the baseline, before its measurement.

    When the perf split's judged runs (`perf_report`) already took the bound or more, the
    candidate is stopped without another run. Otherwise it makes one pass over the
    inputs, in order, each run limited to what is left of the bound; a run that is
    stopped there, or a pass that ends at or beyond the bound, raises `BoundReached`.
    Every output is checked (`TimedRunFailed`, as in a measurement; a failure of the
    sandbox or of the check itself is `Unscorable`). Returns the pass's time (it is the
    measurement's warm-up)."""
    limit = bound.seconds
    if limit is None:
        raise ValueError("a probe pass needs a bound in seconds (`baseline_bound`'s)")
    judged = judged_seconds(perf_report, metric)
    if judged is not None and judged >= limit:
        raise BoundReached(bound, judged, f"the perf split's judged runs took {judged:.3g} s in all")
    spent = 0.0
    for i, req in enumerate(wl.inputs):
        left = limit - spent
        if left <= 0:
            raise BoundReached(bound, spent, f"the pass took {spent:.3g} s before input {i}")
        own = _run_limits(wl, i)
        lim = _capped(own, left)
        r = sandbox.run(wl.build, stdin=req.stdin, limits=lim, argv=req.argv, extra_files=req.extra_files,
                        randomize_layout=True)
        if r.status == "timeout" and lim.time_s < own.time_s:
            raise BoundReached(bound, spent + lim.time_s, f"input {i} was stopped at the {lim.time_s:.3g} s left")
        if r.status in PROGRAM_FAILURES:
            raise TimedRunFailed(r.status, f"input {i} ended {r.status}: {r.message}"[:400])
        if r.status != "ok":
            raise Unscorable(f"a timed run failed ({r.status}): {r.message}")
        try:
            wrong = wl.verify(i, r) if wl.verify is not None else None
        except Exception as e:  # noqa: BLE001 -- the check failed, not the program
            raise Unscorable(f"checking a timed run's output failed: {e}") from e
        if wrong:
            raise TimedRunFailed(wrong[0], f"input {i}: {wrong[1]}"[:400])
        spent += float(r.wall_s if metric == "wall" else r.cpu_s)
    if spent >= limit:
        raise BoundReached(bound, spent, f"the pass took {spent:.3g} s")
    return spent


def bound_failure(bound: SlowBound | None, wl: PerfRuns, capped: PerfRuns, e: TimedRunFailed) -> BoundReached | None:
    """The `BoundReached` a timed run's timeout in the measurement of `capped` means (its
    run was stopped by the bound, not by the task's own limit), else None."""
    if bound is None or bound.seconds is None or e.status != "timeout":
        return None
    i = _input_index(str(e).split(": ", 1)[-1]) or 0
    i = min(i, len(wl.inputs) - 1)
    own, lim = _run_limits(wl, i), _run_limits(capped, i)
    if lim.time_s < own.time_s:
        return BoundReached(bound, bound.seconds, f"a run of input {i} reached the bound in the measurement")
    return None


