"""Repeated measurement of one build: the `Measurement` record and `measure`.

`Sampler` runs a build over its inputs and turns each run into a metric value (every
run must end ok and pass `verify`); `measure` takes samples, each divided by the speed a
co-scheduled probe saw (`codegym.timing.probe`), until the distribution-free CI of the
median is narrow enough; `summarize` and `noise_floor` are the statistics of a
Measurement. How and why: docs/timing.md.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from codegym.core.limits import Limits
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox
from codegym.timing.calibration import calibration_after, sample_calibration
from codegym.timing.load import preempted
from codegym.timing.metrics import (
    check_metric,
    instructions_limits,
    instructions_of,
    passes_per_sample,
    valgrind_wrapper,
)
from codegym.timing.probe import probe_applies, probe_run, reference, speeds
from codegym.timing.stats import LEVEL, median_ci

#: ``verify(input_index, result)``: None when the run's output is right, else
#: ``(status, message)`` (status as a judge case's: wrong_answer, runtime_error, ...);
#: an exception means the check itself failed (``failure`` "sandbox_error")
Verifier = Callable[[int, ExecResult], "tuple[str, str] | None"]


# =========================================================================== record

def _finite(x):
    """JSON has no NaN/inf: undefined numbers become None."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def jsonable(obj):
    """`obj` (dicts, lists, numbers) with numpy numbers as Python ones and NaN/inf as None."""
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return _finite(obj.item())
    return _finite(obj)


@dataclass
class Measurement:
    """Repeated measurement of one build on a list of inputs.

    metric       "cpu" | "wall" | "instructions"
    samples      one value per sample (seconds, or instructions), warm-ups excluded; when
                 `probed`, each divided by the machine's speed at that sample (seconds at
                 the sandbox's reference speed, see `codegym.timing.probe`)
    raw_samples  the samples as timed (empty unless `probed`)
    probes       per sample, the probe's time (empty unless `probed`)
    speed        the machine's slowness during the measurement: median probe time over its
                 reference (1.05: 5 % slower than at the reference); None unless `probed`
    stopped      "look" when the caller's `look` ended it early (see `measure`), else ""
    n            len(samples)
    min, median, mean   of the samples; `median` is the estimate to use
    mad          median absolute deviation (unscaled)
    cv           standard deviation / mean of the samples (ddof=1)
    ci           (lo, hi) distribution-free CI of the median at `confidence`
    rel_ci       half-width of `ci` relative to the median (the precision reached)
    converged    rel_ci <= the target with at least the requested samples and CI level
    calibration  seconds of the calibration workload in the same sandbox: when `probed`, at
                 the reference speed the samples are in; else the median of its recent
                 samples, refreshed just before and after this measurement
                 (see `calibration_factor`; None if not measured)
    normalized   median / calibration (None for instructions or without calibration)
    ok           False when a run failed or the metric could not be read; then `reason` says why
    failure      when a run failed, how: the status `verify` gave its output (e.g.
                 ``wrong_answer``), or the run's own status (``runtime_error``,
                 ``timeout``, ``memory_limit``, ``output_limit``); ``sandbox_error``
                 when the sandbox or the output check failed, not the program
    confidence   coverage of `ci` (below LEVEL only when n is too small to reach it)
    runs         executions made, warm-ups included
    min_of       passes per sample (per-input minimum over them)
    elapsed_s    wall time spent measuring
    """

    metric: str
    samples: list[float] = field(default_factory=list)
    n: int = 0
    min: float | None = None
    median: float | None = None
    mean: float | None = None
    mad: float | None = None
    cv: float | None = None
    ci: tuple[float, float] | None = None
    rel_ci: float | None = None
    converged: bool = False
    calibration: float | None = None
    normalized: float | None = None
    ok: bool = True
    reason: str = ""
    failure: str | None = None
    confidence: float | None = None
    runs: int = 0
    min_of: int = 1
    elapsed_s: float = 0.0
    probed: bool = False
    raw_samples: list[float] = field(default_factory=list)
    probes: list[float] = field(default_factory=list)
    speed: float | None = None
    stopped: str = ""

    @property
    def unit(self) -> str:
        return "instructions" if self.metric == "instructions" else "s"

    def to_dict(self) -> dict:
        return jsonable(asdict(self))

    @classmethod
    def from_dict(cls, d: dict) -> Measurement:
        d = dict(d)
        if d.get("ci") is not None:
            d["ci"] = tuple(d["ci"])
        return cls(**d)



def normalize(m: Measurement, calibration: float | None) -> None:
    """Record `calibration` on `m`, and its normalised median (not for instructions)."""
    m.calibration = calibration
    if calibration and m.metric != "instructions" and m.median is not None:
        m.normalized = m.median / calibration


# =========================================================================== statistics

def summarize(samples: Sequence[float], metric: str = "cpu", level: float = LEVEL,
              target_rel_ci: float = 0.02, min_n: int = 2) -> Measurement:
    """A Measurement (statistics only, no calibration) of `samples`."""
    x = [float(v) for v in samples]
    m = Measurement(metric=metric, samples=x, n=len(x))
    if not x:
        m.ok, m.reason = False, "no samples"
        return m
    arr = np.asarray(x)
    med = float(np.median(arr))
    m.min, m.median, m.mean = float(arr.min()), med, float(arr.mean())
    m.mad = float(np.median(np.abs(arr - med)))
    m.cv = float(arr.std(ddof=1) / m.mean) if len(x) > 1 and m.mean > 0 else (0.0 if len(x) > 1 else None)
    lo, hi, cov = median_ci(x, level)
    m.ci, m.confidence = (lo, hi), cov
    m.rel_ci = (hi - lo) / 2.0 / med if med > 0 else (0.0 if hi == lo else math.inf)
    exact = len(x) >= 2 and lo == hi == float(arr.min()) == float(arr.max())
    m.converged = len(x) >= min_n and m.rel_ci <= target_rel_ci and (cov >= level or exact)
    return m


def noise_floor(measurement: Measurement) -> float:
    """Smallest relative difference `measurement` resolves: the relative half-width of its CI.

    Taken as the smaller of two estimates of that half-width: the exact
    order-statistic interval (`rel_ci`), and the asymptotic one from the
    median absolute deviation, ``1.96 * 1.2533 * 1.4826 * MAD / (median * sqrt(n))``.
    At small n the order-statistic interval is the whole range of the samples,
    so one preempted sample would set the floor; the MAD ignores it. Falls back
    to the CV when neither applies; 0 for exactly repeatable values; inf for a
    failed or empty measurement.
    """
    m = measurement
    if not m.ok or not m.n:
        return math.inf
    if m.n >= 2 and m.min == max(m.samples):
        return 0.0
    cands = []
    if m.rel_ci is not None and m.confidence is not None and m.confidence >= LEVEL - 1e-12:
        cands.append(float(m.rel_ci))
    if m.n >= 5 and m.mad is not None and m.median:
        z = statistics.NormalDist().inv_cdf(0.5 + LEVEL / 2)
        cands.append(z * 1.2533 * 1.4826 * m.mad / (m.median * math.sqrt(m.n)))
    if cands:
        return min(cands)
    return float(m.cv) if m.cv is not None else math.inf




# =========================================================================== running

def as_requests(inputs: Iterable[RunRequest | str | bytes] | None) -> list[RunRequest]:
    """The inputs of a measurement as run requests (stdin text or bytes becomes a request)."""
    if inputs is None:
        return [RunRequest()]
    if isinstance(inputs, (str, bytes, RunRequest)):
        inputs = [inputs]
    out = []
    for x in inputs:
        if isinstance(x, RunRequest):
            out.append(x)
        elif isinstance(x, (str, bytes)):
            out.append(RunRequest(stdin=x))
        else:
            raise TypeError(f"an input is a RunRequest or stdin text/bytes, not {type(x).__name__}")
    return out or [RunRequest()]


def build_problem(build: Build) -> str | None:
    """Why `build` cannot be measured (it failed to build), or None."""
    if build.ok:
        return None
    r = build.result
    detail = (r.message or r.stderr.strip()[-300:]) if r else ""
    return f"build failed ({r.status if r else 'unknown'})" + (f": {detail}" if detail else "")


class Sampler:
    """Runs one build over the inputs and turns results into metric values.

    The first failed run sets `error` (what happened) and `failure` (how, see
    `Measurement.failure`) and makes `run_one` / `sample` return None. `preempted` holds,
    per run since `take_preempted`, the fraction of its wall time it waited for a CPU.
    """

    def __init__(self, sandbox: Sandbox, build: Build, reqs: list[RunRequest], metric: str,
                 limits: Limits | None, verify: Verifier | None = None):
        self.sb, self.build, self.reqs, self.metric = sandbox, build, reqs, metric
        self.limits = limits
        self.verify = verify
        self.runs = 0
        self.error: str | None = None
        self.failure: str | None = None
        self.preempted: list[float] = []

    def _limits_for(self, req: RunRequest) -> Limits:
        lim = req.limits or self.limits or Limits()
        return instructions_limits(lim, self.build.language) if self.metric == "instructions" else lim

    def take_preempted(self) -> list[float]:
        out, self.preempted = self.preempted, []
        return out

    def run_one(self, req: RunRequest, index: int = 0) -> float | None:
        counted = self.metric == "instructions"
        wrapper = valgrind_wrapper(self.build.language) if counted else None
        # (timed runs get a random layout: a build must not be faster or slower run after
        # run by where its code and objects happen to land, see `Sandbox.run`; counted runs
        # keep valgrind's fixed one, so that a count repeats exactly)
        r: ExecResult = self.sb.run(self.build, stdin=req.stdin, limits=self._limits_for(req),
                                    argv=req.argv, extra_files=req.extra_files, wrapper=wrapper,
                                    randomize_layout=not counted)
        self.runs += 1
        if not self._accepted(r, index):
            return None
        self.preempted.append(preempted(r))
        if self.metric == "cpu":
            return r.cpu_s
        if self.metric == "wall":
            return r.wall_s
        count, error = instructions_of(r, self.build.language)
        if count is None:
            self.error = error
        return count

    def _accepted(self, r: ExecResult, index: int) -> bool:
        """False (with `error` and `failure` set) if the run did not end ok or `verify` rejects it."""
        if r.status != "ok":
            msg = r.message or (r.stderr.strip().splitlines() or [""])[-1]
            self.error = (f"input {index} (run {self.runs}) ended {r.status}"
                          + (f": {msg[:300]}" if msg else ""))
            self.failure = r.status
            return False
        if self.verify is None:
            return True
        # a timed run is a run like any other: its output must be right (a program
        # must not earn speed by answering wrongly when it is timed)
        try:
            wrong = self.verify(index, r)
        except Exception as e:  # noqa: BLE001 -- the check failed, not the program
            self.error = f"input {index} (run {self.runs}): checking the output failed: {e}"[:500]
            self.failure = "sandbox_error"
            return False
        if wrong:
            status, msg = wrong
            self.error = f"input {index} (run {self.runs}): {status}: {msg[:300]}"
            self.failure = status
            return False
        return True

    def sample(self, min_of: int = 1) -> float | None:
        """k passes over all inputs; the sum over inputs of each input's minimum."""
        return self.sample_probed(min_of, probe=False)[0]

    def sample_probed(self, min_of: int = 1, probe: bool = True) -> tuple[float | None, float | None]:
        """`sample`, with a run of the speed probe before each pass: (sample, the fastest
        probe run). The probe's time is None when it failed (a sandbox fault: the caller
        measures on without it)."""
        best = [math.inf] * len(self.reqs)
        probes: list[float] | None = []
        for _ in range(max(1, min_of)):
            if probe and probes is not None:
                try:
                    probes.append(probe_run(self.sb, self.metric))
                except RuntimeError as e:
                    probes, self.probe_error = None, str(e)
            for i, req in enumerate(self.reqs):
                v = self.run_one(req, i)
                if v is None:
                    return None, None
                best[i] = min(best[i], v)
        return float(sum(best)), (min(probes) if probes else None)

    probe_error: str | None = None

    def concurrent_pass(self) -> float | None:
        """One pass with every input started at once on the sandbox's slots, as the judge
        runs a split (`Sandbox.run_many`, each run with its own limits): the sum of the
        per-run metric (cpu or wall); None when a run failed (`error`, `failure`)."""
        if self.metric == "instructions":
            raise ValueError("a concurrent pass times cpu or wall seconds, not instructions")
        reqs = [RunRequest(stdin=r.stdin, argv=r.argv, extra_files=r.extra_files, limits=self._limits_for(r))
                for r in self.reqs]
        results = self.sb.run_many(self.build, reqs)
        total = 0.0
        for i, r in enumerate(results):
            self.runs += 1
            if r is None:
                self.error, self.failure = f"input {i} was not run", "sandbox_error"
                return None
            if not self._accepted(r, i):
                return None
            total += r.wall_s if self.metric == "wall" else r.cpu_s
        return float(total)


# =========================================================================== measure

def _invalid(metric: str, reason: str, **kw) -> Measurement:
    return Measurement(metric=metric, ok=False, reason=reason, **kw)


def measure(sandbox: Sandbox, build: Build, inputs: Iterable[RunRequest | str | bytes] | None = None,
            metric: str = "cpu", warmups: int = 1, repeats: int = 5, max_repeats: int = 30,
            target_rel_ci: float = 0.02, budget_s: float = 30.0, limits: Limits | None = None,
            min_of: int | None = None, calibrate: bool = True, verify: Verifier | None = None,
            probe: bool | str = "auto", look: Callable[[list[float], list[float | None]], bool] | None = None
            ) -> Measurement:
    """Measure `build` on `inputs` until the median is known to `target_rel_ci`.

    One sample is one pass over all inputs (sum of the per-run metric; with
    ``min_of=k`` > 1, k passes and the sum of per-input minima -- default 3 for
    time metrics, 1 for instructions). `warmups` passes come first and are
    discarded. Samples are added until the distribution-free 95 % CI of the
    median has a relative half-width <= `target_rel_ci` (at least `repeats`
    samples), or `max_repeats` samples or `budget_s` seconds are spent
    (`converged` False then). Instruction counts are exactly repeatable, so
    for them two equal samples end the measurement and warm-ups are skipped.

    `probe` ("auto": for time metrics in a sandbox that runs on this host): a short
    fixed program runs before each pass, and each sample is divided by the machine's
    speed then (`codegym.timing.probe`), so that a measurement taken while the machine
    is slow reads as one taken while it is fast (`raw_samples` keep the times as
    taken; `calibration` is then the reference one, and `normalized` drift-free too).

    `look(raw_samples, probes)` is called after every sample (the probe times None when
    not probed); when it returns True the measurement ends there (``stopped="look"``):
    a caller that has decided from the samples so far (`codegym.timing.kept.NearTie`)
    does not pay for the rest.

    Any run that does not end "ok", or whose output `verify` rejects, makes the
    measurement invalid (``ok=False``, `reason`, `failure`), never a silently
    included sample. Raises `UnsupportedMetricError` for an unknown metric, or
    instructions of a language valgrind cannot count repeatably (or without valgrind).
    """
    t0 = time.monotonic()
    check_metric(build, metric)
    problem = build_problem(build)
    if problem:
        return _invalid(metric, problem)
    reqs = as_requests(inputs)
    k = passes_per_sample(metric, min_of)
    if metric == "instructions":
        warmups, repeats = 0, min(repeats, 2)
    s = Sampler(sandbox, build, reqs, metric, limits, verify)
    ref, note = _probe_reference(sandbox, metric, probe)
    cal_before = sample_calibration(sandbox, metric) if calibrate and ref is None else None
    warm = all(s.sample(1) is not None for _ in range(max(0, warmups)))
    m = _sample_until_converged(s, k, target_rel_ci, repeats, max_repeats, budget_s, t0, ref,
                                look) if warm else None
    if m is None:
        return _invalid(metric, s.error or "run failed", runs=s.runs, min_of=k, failure=s.failure,
                        elapsed_s=time.monotonic() - t0)
    m.runs, m.min_of = s.runs, k
    if calibrate and m.probed:
        assert ref is not None  # (only samples probed against a reference are: `_probed`)
        normalize(m, ref[1])
    elif calibrate:
        cal, note2 = calibration_after(sandbox, metric, cal_before)
        normalize(m, cal)
        note = note or note2
    if s.probe_error:
        note = note or f"speed probe failed, samples not corrected: {s.probe_error}"
    m.reason = note
    m.elapsed_s = time.monotonic() - t0
    return m


def _probe_reference(sandbox: Sandbox, metric: str, probe: bool | str) -> tuple[tuple[float, float] | None, str]:
    """The probe's and the calibration's reference seconds when this measurement probes, and a
    note when it cannot."""
    if probe not in (True, False, "auto"):
        raise ValueError(f"probe must be True, False or 'auto', not {probe!r}")
    if metric == "instructions" or not (probe_applies(sandbox, metric) if probe == "auto" else probe):
        return None, ""
    try:
        return reference(sandbox, metric), ""
    except Exception as e:  # noqa: BLE001 -- a broken probe must not hide the measurement
        return None, f"speed probe failed, samples not corrected: {e}"


def _sample_until_converged(s: Sampler, k: int, target_rel_ci: float, repeats: int, max_repeats: int,
                            budget_s: float, t0: float, ref: tuple[float, float] | None = None,
                            look: Callable[[list[float], list[float | None]], bool] | None = None
                            ) -> Measurement | None:
    """Samples until converged, `max_repeats`, the budget or `look`; None when a run failed.
    With a probe reference `ref`, samples are divided by the speed the probe saw (`_probed`)."""
    t_samples = time.monotonic()
    raw: list[float] = []
    probes: list[float | None] = []
    while True:
        v, p = s.sample_probed(k, probe=ref is not None and s.probe_error is None)
        if v is None:
            return None
        raw.append(v)
        probes.append(p)
        # converged implies at least `repeats` samples (min_n)
        m = _probed(raw, probes, ref, s.metric, target_rel_ci, max(1, repeats))
        if look is not None and look(list(raw), list(probes)):
            m.stopped = "look"
            return m
        if m.converged or len(raw) >= max(1, max_repeats):
            return m
        # stop when the next sample would likely overrun the budget (a count is always
        # taken twice: the second is what shows it repeats exactly)
        now = time.monotonic()
        if now - t0 + (now - t_samples) / len(raw) > budget_s and (len(raw) >= 2 or s.metric != "instructions"):
            return m


def _probed(raw: list[float], probes: list[float | None], ref: tuple[float, float] | None, metric: str,
            target_rel_ci: float, min_n: int) -> Measurement:
    """The Measurement of `raw` samples, corrected by the speed their probes saw when every one has a probe."""
    known = [float(p) for p in probes if p is not None] if ref is not None else []
    if ref is None or len(known) < len(probes):
        return summarize(raw, metric, target_rel_ci=target_rel_ci, min_n=min_n)
    sp = speeds(known, ref[0])
    m = summarize([v / f for v, f in zip(raw, sp)], metric, target_rel_ci=target_rel_ci, min_n=min_n)
    m.probed, m.raw_samples, m.probes = True, list(raw), known
    m.speed = float(np.median(m.probes)) / ref[0]
    return m
