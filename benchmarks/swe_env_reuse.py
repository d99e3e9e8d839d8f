"""How long a repository task's episode takes to start: the first task of a repository (its
test environment built from the registry into a fresh environment folder) against the next
tasks of the same repository and version (environment found, base tree from the bundle).

    python benchmarks/swe_env_reuse.py [--suite swe_real] [--repeats 5]

Prints a table: median (and min/max) seconds of `SWEEnv.reset` per case, and the ratio of
a reused start to the cold one, measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import codegym  # noqa: F401
from codegym import load_suite
from codegym.envs.swe_env import SWEEnv
from codegym.tasks.repo import swe_data


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="swe_real")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    tasks = list(load_suite(args.suite))
    repo = swe_data(tasks[0]).extra.get("repo")
    same = [t for t in tasks if swe_data(t).extra.get("repo") == repo and t.repo.commit != tasks[0].repo.commit]
    rows = []
    # (not under /tmp: the sandbox mounts its own /tmp over it)
    with tempfile.TemporaryDirectory(prefix="codegym-envs-", dir="/var/tmp") as envs:
        os.environ["CODEGYM_ENVS"] = envs      # a cold start: nothing built yet
        env = SWEEnv(tasks=tasks, max_turns=2)
        t0 = time.perf_counter()
        env.reset(options={"task_id": tasks[0].id})
        cold = time.perf_counter() - t0
        rows.append(("first task of the repository (environment built)", [cold]))
        warm = []
        for k in range(args.repeats):
            t = same[k % len(same)]
            t0 = time.perf_counter()
            env.reset(options={"task_id": t.id})
            warm.append(time.perf_counter() - t0)
        rows.append((f"another task, same repository and version ({len(same)} others)", warm))
        again = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            env.reset(options={"task_id": tasks[0].id})
            again.append(time.perf_counter() - t0)
        rows.append(("the first task again", again))
        env.close()
    print(f"suite {args.suite}, repository {repo}, load {os.getloadavg()[0]:.1f}")
    print(f"{'case':62} {'median s':>9} {'min':>7} {'max':>7} {'x cold':>7}")
    for name, xs in rows:
        med = statistics.median(xs)
        print(f"{name:62} {med:9.3f} {min(xs):7.3f} {max(xs):7.3f} {med / cold:7.3f}")


if __name__ == "__main__":
    main()
