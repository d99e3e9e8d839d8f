"""What a reward sees of a program: `FinalProgram` and its `Bench`, handed by the env.

A reward wrapper is a function of the step's outputs and of the program the env holds
(`codegym.envs.episode.EpisodeEnv.program`): its task, files and language, the typed
`JudgeReport` of the step (``judged``; with the perf split judged too when the reward
asks, `codegym.wrappers.base.FinalReward.final_program`), and a `Bench`, the handle that judges and times programs
of the task in the env's sandbox with the task's timing rules (the kept baseline, the
slow bound, calibrated comparisons). No wrapper reaches into the env for its sandbox,
task or workspace (tests/architecture/test_layers.py checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from codegym.judge.perf import PerfRuns, perf_workload
from codegym.judge.report import JudgeReport
from codegym.judge.run import judge
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task
from codegym.timing.kept import NearTie, Reference, looked_times, pass_prior
from codegym.timing.measurement import Measurement
from codegym.wrappers.baseline import Looks, look_at, sample_look
from codegym.wrappers.bound import SlowBound, baseline_bound, probe
from codegym.wrappers.measure import (
    ComparisonRecord,
    TimingSettings,
    calibrated_compare,
    measure_workload,
    runtime_distribution,
    solution_files,
    solution_measurement,
)


class Bench:
    """Judges and times programs of one task in one sandbox, with the task's timing rules.

    Every method is the named function of `codegym.wrappers` (or `codegym.judge`) bound to
    this task and sandbox: what a reward measures, it measures here."""

    __slots__ = ("task", "_sandbox")

    def __init__(self, task: Task, sandbox: Sandbox):
        self.task = task
        self._sandbox = sandbox

    def judge(self, files: Mapping[str, Any], split: str, language: str, early_exit: bool = True) -> JudgeReport:
        """`codegym.judge.judge` of `files` on one split of the task."""
        return judge(self.task, files, sandbox=self._sandbox, split=split, early_exit=early_exit, language=language)

    def workload(self, files: Mapping[str, Any], language: str) -> PerfRuns:
        """The timed runs of `files` on the task's perf split (`perf_workload`)."""
        return perf_workload(self.task, files, language, self._sandbox)

    def solution_workload(self, name: str) -> PerfRuns:
        """The timed runs of the task's solution `name`."""
        lang, files = solution_files(self.task, name)
        return perf_workload(self.task, files, lang, self._sandbox)

    def solution_measurement(self, name: str, settings: TimingSettings) -> Measurement:
        """The kept measurement of the task's solution `name` (`solution_measurement`)."""
        return solution_measurement(self.task, name, self._sandbox, settings)

    def measure(self, wl: PerfRuns, settings: TimingSettings, metric: str, look=None) -> Measurement:
        """A measurement of `wl` (`measure_workload`)."""
        return measure_workload(self._sandbox, wl, settings, metric, look=look)

    def compare(self, comparand: PerfRuns, candidate: PerfRuns, **kw: Any) -> ComparisonRecord:
        """A calibrated comparison of `candidate` with `comparand` (`calibrated_compare`)."""
        return calibrated_compare(self._sandbox, comparand, candidate, **kw)

    def distribution(self, settings: TimingSettings, source: str):
        """The task's runtime distribution (`runtime_distribution`)."""
        return runtime_distribution(self.task, self._sandbox, settings, source)

    def look(self, wl: PerfRuns, settings: TimingSettings, factor: float | None,
             perf_report: Mapping[str, Any] | None, futility: bool = True) -> Looks | None:
        """The looks at a correct candidate against the kept baseline (`look_at`)."""
        return look_at(self.task, self._sandbox, wl, settings, factor, perf_report, futility)

    def looked_times(self, looks: Looks) -> tuple[float, float, float, float]:
        """(t, t_baseline, noise, noise_baseline) of a near-tie its looks did not decide
        (`looked_times`, the looks' spread shrunk toward this sandbox's `pass_prior`)."""
        if looks.ref is None:
            raise ValueError("no kept baseline to score the looks against")
        return looked_times(looks.tie, looks.ref, *pass_prior(self._sandbox))

    def bound(self, settings: TimingSettings, factor: float | None) -> SlowBound | None:
        """The task's slow bound without a kept baseline (`baseline_bound`)."""
        return baseline_bound(self.task, self._sandbox, settings, factor)

    def probe(self, wl: PerfRuns, bound: SlowBound, metric: str, perf_report: Mapping[str, Any] | None) -> float:
        """One bounded pass that stops a candidate no faster than the baseline (`probe`)."""
        return probe(self._sandbox, wl, bound, metric, perf_report)

    def sample_look(self, metric: str, tie: NearTie, ref: Reference) -> Callable:
        """The `look` that puts a measurement's samples before `tie` (`sample_look`)."""
        return sample_look(self._sandbox, metric, tie, ref)


@dataclass
class FinalProgram:
    """The program the env holds after a step, as a reward sees it.

    task, files, language  what was judged (the workspace's files after the step)
    judged      the typed `JudgeReport` of the step (None: the step judged nothing)
    perf_judged the perf split's own report, when the reward judged it
    bench       the handle that judges and times programs of the task (`Bench`)

    ``report`` is the judged report as the formulas read it (a dict of
    `JudgeReport.to_dict`, the perf split's cases merged in when it was judged), ``perf``
    the perf report's dict."""

    task: Task
    files: Mapping[str, Any]
    language: str
    judged: JudgeReport | None
    bench: Bench
    perf_judged: JudgeReport | None = None
    report: Mapping[str, Any] = field(default_factory=dict)
    perf: dict | None = None

    def __post_init__(self):
        if not self.report and self.judged is not None:
            self.report = self.judged.to_dict()

    @property
    def accepted(self) -> bool:
        return self.report.get("verdict") == "accepted"


