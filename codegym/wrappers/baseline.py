"""The baseline kept per task, and the looks that stop a near-tie against it.

`kept_passes` is the task's baseline on its perf split in concurrent passes, as the judge
runs a split (`codegym.timing.kept.pass_taker`), kept per sandbox and task by
`codegym.timing.kept.keep`: measured once, reused by every later submission of the task
(the envs of a vector env, `collect`, `codegym eval`, `codegym serve` share the process's
sandbox), taken again when the machine's speed moved beyond what the probe corrects or
after `MAX_AGE_S`. `look_at` puts a correct candidate's first passes -- its judged perf
split, then up to `MAX_LOOKS` concurrent passes -- against it (`codegym.timing.kept.NearTie`):
the slow bound and the futility rule stop a candidate whose first passes rule out a
speedup worth rewarding, before any measurement. Both reward wrappers use it;
docs/rewards.md ("Near-ties") and docs/timing.md ("Kept measurements") give the rules.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from codegym.judge.perf import PerfRuns, Unscorable, perf_workload
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task
from codegym.timing.calibration import calibration_factor
from codegym.timing.kept import (
    FUTILITY_ALPHA,
    KEPT_PASSES,
    LOOK_PASSES,
    MAX_LOOKS,
    KeptPasses,
    NearTie,
    PassFailed,
    Reference,
    pass_taker,
)
from codegym.timing.measurement import Sampler
from codegym.timing.probe import SpeedTrack, slowness_now
from codegym.timing.probe import reference as probe_reference
from codegym.wrappers.bound import BoundReached, SlowBound, bound_failure, bounded_workload, judged_seconds
from codegym.wrappers.measure import (
    PROGRAM_FAILURES,
    TimedRunFailed,
    TimingSettings,
    recorded_runtimes,
    solution_files,
)

#: a judged perf split this many times faster than the recorded baseline is no near-tie
#: (the calibration workload carries recorded times to within ~1.1-1.4x: StagedReward's
#: ANCHOR_BELOW makes the same margin)
CLEAR_FACTOR = 2.0


def kept_passes(task: Task, sandbox: Sandbox, settings: TimingSettings, speed_now: float | None = None,
                *, target: int = KEPT_PASSES, track: SpeedTrack | None = None) -> KeptPasses:
    """The task's baseline on its perf split in concurrent passes, kept per sandbox and task
    (`codegym.timing.kept.KeptPasses`): what is kept now (possibly fewer than `target`
    passes, or none), and `grow` to add one (raises `Unscorable` when the baseline cannot
    be timed); its passes read the machine's slowness with `track` (shared with the
    candidate's looks)."""
    metric = settings.metric_for(task)
    name = task.baseline_name
    key = ("passes", task.content_hash, name, metric)
    taker: list[Callable[[], tuple[float, float | None]]] = []  # made at the first pass (builds the baseline)

    def take() -> tuple[float, float | None]:
        if not taker:
            lang, files = solution_files(task, name)
            wl = perf_workload(task, files, lang, sandbox)
            taker.append(pass_taker(sandbox, wl.build, wl.inputs, metric, wl.limits, wl.verify, track=track))
        try:
            return taker[0]()
        except PassFailed as e:  # the task's own baseline failed: a broken task, not a verdict
            raise Unscorable(f"the task's {name!r} solution failed a timed run: {e}") from e

    return KeptPasses(sandbox, key, metric, take, speed_now=speed_now or slowness_now(sandbox, metric),
                      target=target, recheck=lambda: slowness_now(sandbox, metric))


@dataclass
class Looks:
    """What `look_at` found: the bound to cap the candidate's later runs at (seconds now),
    the near-tie state to go on with (its reference for sequential samples is the kept
    measurement, `NearTie.observe`), and how the kept baseline was had."""

    bound: SlowBound
    tie: NearTie
    kept: dict = field(default_factory=dict)
    #: the kept baseline the last look was put against
    ref: Reference | None = None


def look_at(task: Task, sandbox: Sandbox, wl: PerfRuns, settings: TimingSettings, factor: float | None,
            perf_report: Mapping[str, Any] | None, futility: bool = True,
            max_looks: int = MAX_LOOKS) -> Looks | None:
    """Look at a correct candidate's first passes against the kept baseline.

    Its judged perf split (`perf_report`, when it covers every perf case) is the first
    look, then up to `max_looks` - 1 concurrent passes of `wl`, every run capped at the
    bound and every output checked, each divided by the machine's slowness read by the
    probe right after it. Raises `BoundReached` (``rule`` "slow_bound" or "futility") when
    a look stops the candidate, `TimedRunFailed` when a run of it fails; returns the
    `Looks` to go on with, or None where no kept baseline applies (instruction counts,
    neither a bound nor futility, a baseline that cannot be timed: the caller's older rules)."""
    metric = settings.metric_for(task)
    if metric == "instructions" or (factor is None and not futility):
        return None
    judged = judged_seconds(perf_report, metric)
    if judged is not None and clearly_faster(task, sandbox, metric, judged):
        return None  # no near-tie: nothing to look at, no kept baseline needed (the older rules)
    track = SpeedTrack(sandbox, metric)  # the machine's slowness over the baseline's passes and the candidate's
    speed = track.start()
    slow = speed or 1.0
    base = kept_passes(task, sandbox, settings, speed, track=track)
    try:
        if base.n == 0:  # nothing kept: the baseline's first pass, before the candidate's look
            base.grow()
    except Unscorable:
        return None
    ref = base.reference()
    tie = NearTie(alpha=FUTILITY_ALPHA if futility else None, bound=factor, metric=metric)
    looks = Looks(_kept_bound(ref, slow, factor, metric), tie, base.details(), ref)
    n, spent = 0, base.added
    if judged is not None:
        n += 1
        _stop(looks, tie.observe(judged / slow, ref), judged, "the judged perf split")
    s = None
    while n < max_looks and not tie.clear():  # (a clearly faster candidate is measured at once)
        if base.short and n >= 1:  # undecided on a short kept baseline: one more baseline pass before the look
            try:
                base.grow()
                spent += 1
            except Unscorable:
                base.target = base.n  # (the baseline stopped passing: look against what is kept)
            ref = looks.ref = base.reference()
            looks.bound, looks.kept, s = _kept_bound(ref, slow, factor, metric), base.details(), None
        if spent >= LOOK_PASSES and tie.leans_tie(ref):
            break  # the cost bound: scored from its looks (`undecided`)
        n += 1
        if s is None:
            capped = bounded_workload(wl, looks.bound)
            s = Sampler(sandbox, capped.build, capped.inputs, metric, wl.limits, wl.verify)
        v = s.concurrent_pass()
        spent += 1
        if v is None:
            _failed(s, looks, wl, capped)
        sp = track.after() or slow
        _stop(looks, tie.observe(v / sp, ref), v, f"concurrent pass {n}")
    return looks


def undecided(looks: Looks) -> bool:
    """Whether the looks ended without deciding a candidate that leans toward a tie
    (`NearTie.leans_tie`; neither stopped -- they raise -- nor clearly faster): it is scored
    from its looks. One that leans toward a speedup is measured."""
    return (looks.ref is not None and bool(looks.tie.looks) and not looks.tie.clear()
            and looks.tie.leans_tie(looks.ref))


def _kept_bound(ref: Reference, slow: float, factor: float | None, metric: str) -> SlowBound:
    """The slow bound of a kept reference, in seconds at the machine's slowness `slow` now."""
    return SlowBound(seconds=factor * ref.median * slow if factor is not None else None,
                     baseline_s=ref.median * slow, factor=factor, metric=metric, source="kept")


def clearly_faster(task: Task, sandbox: Sandbox, metric: str, judged: float) -> bool:
    """Whether a judged perf split of `judged` seconds is at least CLEAR_FACTOR times faster
    than the baseline's recorded time carried to this sandbox by the calibration workload
    (which carries it to within ~1.1-1.4x, see `ANCHOR_BELOW`): such a candidate is no
    near-tie, and is measured without looks (a cost rule: it decides nothing)."""
    rt, cal = recorded_runtimes(task, metric)
    tb = rt.get(task.baseline_name)
    if not (tb and cal):
        return False
    try:
        here = float(tb) / cal * calibration_factor(sandbox, metric)
    except Exception:  # noqa: BLE001 -- no calibration: look
        return False
    return judged * CLEAR_FACTOR < here


def sample_look(sandbox: Sandbox, metric: str, tie: NearTie, ref: Reference):
    """The `look` of `codegym.timing.measurement.measure` that puts every sample of a
    measurement before `tie` against `ref` (each raw sample divided by the median slowness
    of its own and the two earlier probes, as far as they are known at that sample)."""
    try:
        probe_ref = probe_reference(sandbox, metric)[0]
    except Exception:  # noqa: BLE001 -- no probe: raw seconds
        probe_ref = None

    def look(raw: list[float], probes: list[float | None]) -> bool:
        ps = [p for p in probes[-3:] if p]
        slow = statistics.median(ps) / probe_ref if ps and probe_ref else 1.0
        return bool(tie.observe(raw[-1] / slow, ref))
    return look


def stop_looks(looks: Looks, spent: float, what: str) -> None:
    """Raise the `BoundReached` of the looks' decision (nothing when they go on)."""
    _stop(looks, looks.tie.stopped, spent, what)


def _stop(looks: Looks, why: str, spent: float, what: str) -> None:
    if not why:
        return
    b, tie = looks.bound, looks.tie
    lk = tie.looks[-1]
    if why == "slow_bound":
        how = (f"{what} took {lk.seconds:.3g} s at the reference speed, at least {tie.bound:g} x the kept "
               f"baseline's {lk.seconds * math.exp(lk.x):.3g} s")
    else:
        how = (f"{what}: after {len(tie.looks)} look(s) a speedup of {tie.worth:.0%} or more is ruled out "
               f"(log wealth {lk.log_wealth:.2f} >= log(1/{tie.alpha:g}))")
    raise BoundReached(b, spent, how, rule=why, looks=tie.details(), kept=looks.kept)


def _failed(s: Sampler, looks: Looks, wl: PerfRuns, capped: PerfRuns) -> NoReturn:
    """A concurrent pass's run failed: stopped by the bound, the program's failure, or the sandbox's."""
    if s.failure in PROGRAM_FAILURES:
        e = TimedRunFailed(s.failure, s.error or "a run failed")
        stopped = bound_failure(looks.bound, wl, capped, e)
        if stopped is not None:
            stopped.looks, stopped.kept = looks.tie.details(), looks.kept
            raise stopped from e
        raise e
    raise Unscorable(f"a timed run failed: {s.error}")


