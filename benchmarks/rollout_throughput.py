"""Rollout throughput: episodes/s of `codegym.rollout.collect` with 1 and 2 workers.

The oracle agent plays every task of a suite (hidden tests judged, no perf
timing), so the time is the env plus the judge: compile (cached after the
warm-up pass, as in training where the same programs recur) and test runs in
the sandbox. For each suite and worker count the collection is repeated and
the median episodes/s reported, with the ratio of 2 workers to 1 (target for
judge-bound suites: >= 1.8x on 2 cores).

The machine's load average is printed: on a shared machine the numbers are
only comparable within one run.

    python benchmarks/rollout_throughput.py [--suites perfcode lcb] [--runs 7]
        [--group-size 4] [--tasks N]

Two sandbox configurations are measured: the default (every env shares the
process-wide sandbox, one slot per core, so a single env's judge already runs
its cases on all cores) and one slot per env (each env has its own one-slot
sandbox, so each worker gets one core's worth of test runs: the setting where
env-level parallelism is what scales; builds are still compiled once, the build
store is process-wide). Envs are built before timing; the time is the collection
itself.

This VM's speed drifts by 20-30 % within a minute (the CPU time of the same
episodes changes that much), so each round measures every worker count back to
back; the table gives the ratio of the medians and the range of the per-round
ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium as gym

import codegym  # noqa: F401  (registers the ids)
from codegym.agents import OracleAgent
from codegym.rollout import collect
from codegym.sandbox import make_sandbox
from codegym.tasks.suite import load_suite


def run_once(envs: list, tasks: int | None, group_size: int) -> tuple[float, int, list[str]]:
    """(episodes/s, episodes, verdicts other than accepted) of one collection on pre-built
    envs (env construction is not timed). The oracle is correct, so a rejection means the
    machine was so loaded that a test hit its time limit: reported, not hidden."""
    t0 = time.perf_counter()
    trajs = collect(envs, OracleAgent(), tasks=tasks, group_size=group_size, progress=False)
    dt = time.perf_counter() - t0
    bad = [f"{t.task_id}:{t.verdict}" for t in trajs if t.verdict != "accepted"]
    return len(trajs) / dt, len(trajs), bad


def measure(suite_tasks: list, sandbox_for: dict, num_envs: list[int], runs: int, tasks: int | None,
            group_size: int) -> tuple[dict[int, list[float]], int, list[str]]:
    """Episodes/s of every run per worker count (runs interleaved: round k measures every
    count once); `sandbox_for[n]` is the sandbox the n envs share, or a list of n
    sandboxes, one per env."""
    def sandbox(n: int, i: int):
        sb = sandbox_for[n]
        return sb[i] if isinstance(sb, list) else sb
    envs = {n: [gym.make("codegym/Suite-v0", tasks=suite_tasks, sandbox=sandbox(n, i)) for i in range(n)]
            for n in num_envs}
    try:
        for n in num_envs:  # warm-up: builds cached (per sandbox), slots started, tests generated
            run_once(envs[n], tasks, group_size)
        rates: dict[int, list[float]] = {n: [] for n in num_envs}
        count = 0
        rejected: list[str] = []
        for _ in range(runs):
            for n in num_envs:  # interleaved, so a load change on the machine hits all counts alike
                r, count, bad = run_once(envs[n], tasks, group_size)
                rates[n].append(r)
                rejected += bad
        return rates, count, rejected
    finally:
        for es in envs.values():
            for e in es:
                e.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suites", nargs="+", default=["perfcode", "lcb"])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--group-size", type=int, default=4,
                    help="episodes per task and run (short runs make the ratio noisy on a VM)")
    ap.add_argument("--tasks", type=int, default=None, help="tasks per suite (default: all)")
    ap.add_argument("--num-envs", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()

    from rich.console import Console
    from rich.table import Table

    console = Console() if Console().is_terminal else Console(width=120)
    load_before = os.getloadavg()
    cpus = os.cpu_count() or 1
    table = Table(title=f"collect throughput (episodes/s), oracle agent, thread workers, "
                        f"median of {args.runs}, {cpus} cpus")
    table.add_column("suite")
    table.add_column("sandbox slots")
    table.add_column("episodes/run", justify="right")
    for n in args.num_envs:
        table.add_column(f"{n} env(s)", justify="right")
    base = args.num_envs[0]
    for n in args.num_envs[1:]:
        table.add_column(f"ratio {n}/{base}", justify="right")
        table.add_column(f"per-round {n}/{base} (min-max)", justify="right")
    table.add_column("not accepted", justify="right")
    shared = make_sandbox("local")
    own = {n: [make_sandbox("local", workers=1) for _ in range(n)] for n in args.num_envs}
    try:
        for suite in args.suites:
            suite_tasks = list(load_suite(suite))
            configs = [(f"shared, {shared.workers} (default)", {n: shared for n in args.num_envs}),
                       ("one per env", own)]
            for label, sandbox_for in configs:
                rates, count, rejected = measure(suite_tasks, sandbox_for, args.num_envs, args.runs, args.tasks,
                                                 args.group_size)
                medians = {n: statistics.median(v) for n, v in rates.items()}
                row = [suite, label, str(count)] + [f"{medians[n]:.2f}" for n in args.num_envs]
                for n in args.num_envs[1:]:
                    rounds = [a / b for a, b in zip(rates[n], rates[base])]
                    row += [f"{medians[n] / medians[base]:.2f}x", f"{min(rounds):.2f}-{max(rounds):.2f}"]
                table.add_row(*row, str(len(rejected)))
                if rejected:
                    console.print(f"[yellow]{suite}, {label}: oracle episodes not accepted "
                                  f"(load-induced timeouts?): {sorted(set(rejected))}")
    finally:
        for sbs in own.values():
            for sb in sbs:
                sb.close()
    console.print(table)
    load_after = os.getloadavg()
    console.print(f"load average (1 min) before {load_before[0]:.2f}, after {load_after[0]:.2f} on {cpus} cpus "
                  "(other work on the machine lowers the ratios)")


if __name__ == "__main__":
    main()
