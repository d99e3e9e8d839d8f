"""Judge throughput of the sandbox backends: local, docker and ray, on 1 and 2 workers.

One *judge* is `codegym.judge.run.judge` of a task's reference solution on its hidden
split (no timing) -- real judge-bound work: generated tests, a build, one run per
case, checks. The same fixed list of tasks is judged by every configuration, with
as many judges in flight as the configuration has workers:

=============  ==============================================================
local-W        LocalSandbox(workers=W); W judges at once (threads)
docker-W       DockerSandbox(workers=W), its warm pool; W judges at once
ray-W          RaySandbox on a local Ray cluster: one actor whose local sandbox
               has W slots (local-W's shape: the difference is Ray's), each
               judge whole on the actor (``judge_remote``); W in flight
ray-Wx1        W actors of one slot each (the scale-out shape: a judge runs
               its cases on one slot, so a round's tail is slower)
ray-exec-W     one actor of W slots used as an execution backend: judges run
               in this process, every execution is a call to the actor
=============  ==============================================================

After a warm-up pass (test generation, builds, container and actor start; every
task once per worker), the configurations of one worker count judge the list
`--rounds` times each, their rounds interleaved in rotating order so that the
load of a shared machine hits them alike; the table gives the median judges/s
over rounds and the ratio to local with the same number of workers.
Ray's overhead on judge-bound work is ``1 - ratio`` (target: <= 10 %).

    python benchmarks/scaling.py [--tasks 16] [--rounds 3] [--suites lcb,dmcoptim] [--no-docker]

The machine's load average is printed before and after: on a shared, loaded
machine the absolute numbers move a lot between runs; the ratios measured in the
same run are the meaningful part.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from codegym import load_suite
from codegym.agents.base import task_language_files
from codegym.judge.run import judge


@dataclass
class Row:
    name: str
    workers: int
    judges: int = 0
    rates: list[float] = field(default_factory=list)   # judges/s of each round
    verdicts: dict[str, int] = field(default_factory=dict)
    note: str = ""

    @property
    def rate(self) -> float:
        return statistics.median(self.rates) if self.rates else float("nan")


def _work(suites: list[str], n: int) -> list[tuple]:
    """(task, language, files) of the first `n` tasks of `suites` (round robin over suites)."""
    per = [list(load_suite(s)) for s in suites]
    out: list[tuple] = []
    i = 0
    while len(out) < n and any(per):
        lst = per[i % len(per)]
        if lst:
            task = lst.pop(0)
            if task.kind != "repo":
                lang, files = task_language_files(task, None, task.reference_name or "reference")
                out.append((task, lang, files))
        i += 1
    return out


class Config:
    """One backend configuration: a sandbox, how to judge one item on it, and its row."""

    def __init__(self, row: Row, judge_one: Callable[[tuple], object], close: Callable[[], None]):
        self.row, self.judge_one, self.close = row, judge_one, close
        self.pool = ThreadPoolExecutor(row.workers)

    def warm(self, work: list[tuple]) -> None:
        # every item once per worker, so that every slot / actor has its caches warm
        list(self.pool.map(self.judge_one, work * self.row.workers))

    def round(self, work: list[tuple]) -> None:
        t0 = time.perf_counter()
        reps = list(self.pool.map(self.judge_one, work))
        dt = time.perf_counter() - t0
        self.row.rates.append(len(work) / dt)
        self.row.judges += len(work)
        for r in reps:
            self.row.verdicts[r.verdict] = self.row.verdicts.get(r.verdict, 0) + 1

    def shutdown(self) -> None:
        self.pool.shutdown()
        self.close()


def _judge_on(sb) -> Callable[[tuple], object]:
    return lambda it: judge(it[0], it[2], sandbox=sb, split="hidden", language=it[1])


def make_local(w: int) -> Config:
    from codegym.sandbox.local import LocalSandbox
    sb = LocalSandbox(workers=w)
    return Config(Row(f"local-{w}", w, note=sb.isolation), _judge_on(sb), sb.close)


def make_docker(w: int) -> Config:
    from codegym.sandbox import make_sandbox
    sb = make_sandbox("docker", workers=w)
    probe = sb.execute("python", {"main.py": "print(1)"})
    if probe.status != "ok":
        sb.close()
        raise RuntimeError(probe.message)
    return Config(Row(f"docker-{w}", w, note="warm pool"), _judge_on(sb), sb.close)


def make_ray(w: int, mode: str) -> Config:
    """mode "remote": one actor with w local slots (the local-w sandbox shape, so the
    difference is Ray's); "split": w actors of one slot (the scale-out shape; a judge
    then runs its cases on one slot); "exec": one actor of w slots as an execution backend."""
    from codegym.sandbox.ray import RaySandbox
    actors, slots = (w, 1) if mode == "split" else (1, w)
    # a CPU share per actor so that all pools fit on a 2-CPU cluster
    sb = RaySandbox(num_actors=actors, backend_kw={"workers": slots}, max_in_flight=2 * w,
                    actor_options={"num_cpus": 0.25})
    shape = f"{actors} actor(s) x {slots} slot(s)"
    if mode == "exec":
        return Config(Row(f"ray-exec-{w}", w, note=f"{shape}, remote executions"), _judge_on(sb), sb.close)
    fn = lambda it: sb.remote_call(judge, it[0], it[2], split="hidden", language=it[1])  # noqa: E731
    name = f"ray-{w}" if mode == "remote" else f"ray-{w}x1"
    return Config(Row(name, w, note=f"{shape}, judge_remote"), fn, sb.close)


def ray_round_trip_ms(n: int = 50) -> float:
    """Median latency of an empty actor call (the floor of Ray's per-call overhead here)."""
    import ray

    from codegym.sandbox.ray import RaySandbox
    sb = RaySandbox(num_actors=1, actor_options={"num_cpus": 0.25})
    try:
        h = sb._members[0].handle
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            ray.get(h.info.remote())
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts) * 1000
    finally:
        sb.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=16, help="tasks in the fixed list")
    ap.add_argument("--rounds", type=int, default=5, help="timed passes over the list (median reported)")
    ap.add_argument("--suites", default="lcb,dmcoptim,perfcode", help="suites the tasks come from")
    ap.add_argument("--no-docker", action="store_true")
    ap.add_argument("--no-ray", action="store_true")
    ap.add_argument("--workers", default="1,2", help="worker counts to measure")
    args = ap.parse_args()

    work = _work(args.suites.split(","), args.tasks)
    counts = [int(x) for x in args.workers.split(",")]
    print(f"{len(work)} tasks ({', '.join(sorted({t.id.split('/')[0] for t, _, _ in work}))}), "
          f"{args.rounds} rounds; cpus {os.cpu_count()}; load average before {os.getloadavg()}")
    rows: list[Row] = []
    skipped: list[str] = []
    ray_mod = None
    if not args.no_ray:
        try:
            import ray as ray_mod
            ray_mod.init(num_cpus=max(2, os.cpu_count() or 2), include_dashboard=False, log_to_driver=False)
        except ImportError as e:
            skipped.append(f"ray: {e}")
            ray_mod = None

    for w in counts:
        # all configurations of one worker count are alive at once and their timed rounds
        # interleave (rotating order), so load changes of a shared machine hit them alike
        makers: list[tuple[str, Callable[[], Config]]] = [(f"local-{w}", lambda w=w: make_local(w))]
        if not args.no_docker:
            makers.append((f"docker-{w}", lambda w=w: make_docker(w)))
        if ray_mod is not None:
            makers.append((f"ray-{w}", lambda w=w: make_ray(w, "remote")))
            if w > 1:
                makers.append((f"ray-{w}x1", lambda w=w: make_ray(w, "split")))
            makers.append((f"ray-exec-{w}", lambda w=w: make_ray(w, "exec")))
        configs: list[Config] = []
        for label, make in makers:
            try:
                c = make()
                c.warm(work)
                configs.append(c)
            except Exception as e:  # an absent tool is reported, not fatal
                skipped.append(f"{label}: {type(e).__name__}: {str(e)[:200]}")
                print(f"  {label}: skipped ({skipped[-1]})", flush=True)
        try:
            for k in range(args.rounds):
                for c in configs[k % len(configs):] + configs[:k % len(configs)]:
                    c.round(work)
        finally:
            for c in configs:
                c.shutdown()
        for c in configs:
            rows.append(c.row)
            print(f"  {c.row.name}: {c.row.rate:.2f} judges/s", flush=True)
    rtt = None
    if ray_mod is not None:
        rtt = ray_round_trip_ms()
        ray_mod.shutdown()

    base = {r.workers: r.rate for r in rows if r.name.startswith("local-")}
    print()
    print(f"{'backend':<12} {'workers':>7} {'judges':>7} {'judges/s':>9} {'min..max':>13} "
          f"{'vs local':>9}  verdicts / notes")
    for r in rows:
        ratio = r.rate / base[r.workers] if r.workers in base else float("nan")
        spread = f"{min(r.rates):.2f}..{max(r.rates):.2f}"
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(r.verdicts.items()))
        print(f"{r.name:<12} {r.workers:>7} {r.judges:>7} {r.rate:>9.2f} {spread:>13} {ratio:>9.2f}  "
              f"{verdicts}; {r.note}")
    for s in skipped:
        print(f"skipped {s}")
    if rtt is not None:
        print(f"ray: median round trip of an empty actor call {rtt:.1f} ms")
    print(f"load average after {os.getloadavg()}")
    if any(set(r.verdicts) - {"accepted"} for r in rows):
        print("WARNING: some reference judges were not accepted (see verdicts): the machine may be "
              "too loaded for the tasks' limits", file=sys.stderr)


if __name__ == "__main__":
    main()
