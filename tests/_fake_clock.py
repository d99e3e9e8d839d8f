"""A sandbox whose clock is fake: real runs, deterministic times (timing tests that load cannot flip).

`FakeClock(sandbox, costs)` runs every program in the real `sandbox` (statuses, outputs,
verdicts are real), then replaces the CPU and wall seconds of each run that ended ok by a
nominal time of its build: the seconds of the first `costs` entry whose text occurs in
the build's sources or the run's extra files, else `default_s`, times a small seeded jitter (log-normal, `jitter`
relative; a comparison needs some spread). A test of a timed reward then asserts on
significance, speedups and rewards that the machine's load cannot change, while the
reward's whole path (judge, builds, kept baseline, sequential comparison) still runs.

It is not a `ServerSandbox`, so the speed probe and the host's load counters do not apply
to it (`codegym.timing.load.runs_here`): every time a measurement sees is a fake one.

    sb = FakeClock(make_sandbox("local"), {"for i in range(n)": 0.030}, default_s=0.002)
    env = TimedReward(gym.make("codegym/Suite-v0", tasks=[task], sandbox=sb))
"""

from __future__ import annotations

import dataclasses
import math
import random
import threading

from codegym.sandbox.types import Sandbox


class FakeClock(Sandbox):
    """`sandbox` with the times of its ok runs replaced by each build's nominal seconds."""

    def __init__(self, sandbox: Sandbox, costs: dict[str, float], default_s: float = 0.002,
                 jitter: float = 0.01, seed: int = 0):
        self.inner = sandbox
        self.isolation = sandbox.isolation
        self.costs, self.default_s, self.jitter = dict(costs), float(default_s), float(jitter)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.runs = 0

    def __getattr__(self, name):  # the backend's other abilities (workers, ...) are the real one's
        return getattr(self.__dict__["inner"], name)

    def nominal(self, build, extra_files=None) -> float:
        """The build's nominal seconds (its sources, and the run's extra files: a Python
        program judged by a launcher comes as an extra file)."""
        text = "\n".join(v.decode(errors="replace") if isinstance(v, bytes) else str(v)
                         for v in [*build.files.values(), *(extra_files or {}).values()])
        return next((s for needle, s in self.costs.items() if needle in text), self.default_s)

    def _timed(self, build, r, extra_files=None):
        if r is None or r.status != "ok":
            return r
        nominal = self.nominal(build, extra_files)
        with self._lock:
            self.runs += 1
            t = nominal * math.exp(self._rng.gauss(0.0, self.jitter))
        return dataclasses.replace(r, cpu_s=t, wall_s=t)

    def build(self, language, files, limits=None):
        return self.inner.build(language, files, limits)

    def run(self, build, stdin="", limits=None, argv=(), extra_files=None, wrapper=None,
            randomize_layout=False):
        return self._timed(build, self.inner.run(build, stdin=stdin, limits=limits, argv=argv,
                                                 extra_files=extra_files, wrapper=wrapper,
                                                 randomize_layout=randomize_layout), extra_files)

    def run_many(self, build, requests, limits=None, stop=None):
        results = self.inner.run_many(build, requests, limits, stop)
        return [self._timed(build, r, q.extra_files) for r, q in zip(results, requests)]

    def close(self) -> None:  # the real sandbox is the caller's
        pass
