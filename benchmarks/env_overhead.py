"""Step and reset overhead of CodeEnv excluding the sandbox, and memory per env instance.

The judge is replaced by a stub for the measurement (the sandbox's cost is
measured by benchmarks/sandbox_throughput.py), so what is timed is: parsing the
action, applying it to the workspace, the step's unified diff and cumulative
diff, splitting into syntax-aware diff units with action spans, and building
the observation and info. The file edited is a 500-line Python module; each
step changes one function (a search/replace block), as an agent would.

Prints a table: median of several repetitions, and ratios against a plain
difflib unified diff of the same file pair measured in the same run.

    python benchmarks/env_overhead.py [--steps 200] [--reps 5]
"""

from __future__ import annotations

import argparse
import difflib
import gc
import statistics
import time
import tracemalloc

from codegym.core.limits import Limits
from codegym.envs.code_env import CodeEnv
from codegym.tasks.schema import Task


def make_module(n_funcs: int = 50) -> str:
    parts = []
    for i in range(n_funcs):
        parts.append(
            f"def f{i}(xs):\n"
            f"    total = 0\n"
            f"    for x in xs:\n"
            f"        if x % {i + 2} == 0:\n"
            f"            total += x * {i}\n"
            f"        else:\n"
            f"            total -= 1\n"
            f"    return total\n"
            f"\n"
        )
    return "".join(parts)  # 9 lines per function: 450 lines + main below


def make_task(src: str) -> Task:
    return Task(id="bench/overhead", statement="Benchmark task.", kind="stdio", language="python",
                starter={"main.py": src}, tests={"public": [{"stdin": "1\n", "expected": "1\n"}]},
                solutions={"reference": {"language": "python", "files": {"main.py": src}}},
                limits=Limits())


class _NoJudge(CodeEnv):
    """CodeEnv with the judge stubbed out: the overhead of everything else."""

    def _judge(self, split, early_exit, timing=False):
        return {"verdict": "accepted", "passed": 1, "total": 1, "cases": [], "split": split,
                "progress": 1.0, "stage": "accepted"}


def action_for(step: int, n_funcs: int) -> str:
    i = step % n_funcs
    k = step + 1000  # always a real change
    return (f"<<<<<<< SEARCH\n"
            f"def f{i}(xs):\n"
            f"=======\n"
            f"def f{i}(xs):\n"
            f"    # revision {k}\n"
            f">>>>>>> REPLACE\n")


def measure(steps: int, reps: int) -> dict[str, float]:
    src = make_module() + "import sys\nprint(sum(f0([int(x) for x in sys.stdin.read().split()]) for _ in [0]))\n" * 50
    n_lines = src.count("\n")
    task = make_task(src)
    env = _NoJudge(tasks=[task], max_turns=steps + 1, feedback="public")
    step_ms, reset_ms, diff_ms = [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        env.reset(seed=0)
        reset_ms.append((time.perf_counter() - t0) * 1e3)
        per = []
        for s in range(steps):
            t0 = time.perf_counter()
            _, _, term, trunc, info = env.step(action_for(s, 50))
            per.append((time.perf_counter() - t0) * 1e3)
            assert info["error"] is None and info["diff_units"], info["error"]
        step_ms.append(statistics.median(per))
        # baseline in the same run: a bare difflib unified diff of one edit of the same file
        a = src.splitlines(keepends=True)
        b = list(a)
        b[1] = "    total = 1\n"
        per = []
        for _s in range(steps):
            t0 = time.perf_counter()
            "".join(difflib.unified_diff(a, b, "a/main.py", "b/main.py"))
            per.append((time.perf_counter() - t0) * 1e3)
        diff_ms.append(statistics.median(per))
    env.close()
    # memory per env instance after reset (tracemalloc: Python allocations)
    gc.collect()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    envs = []
    for _ in range(20):
        e = _NoJudge(tasks=[task], max_turns=4)
        e.reset(seed=0)
        envs.append(e)
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    mem = sum(s.size_diff for s in snap1.compare_to(snap0, "filename")) / len(envs) / 1024
    for e in envs:
        e.close()
    return {"lines": n_lines, "step_ms": statistics.median(step_ms), "reset_ms": statistics.median(reset_ms),
            "difflib_ms": statistics.median(diff_ms), "mem_kib": mem}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    r = measure(args.steps, args.reps)
    print(f"CodeEnv overhead without the sandbox: {r['lines']}-line file, {args.steps} steps x {args.reps} reps (medians)")
    print(f"{'what':<44} {'ms':>9} {'ratio vs difflib':>17}")
    print(f"{'bare difflib.unified_diff (baseline)':<44} {r['difflib_ms']:>9.3f} {1.0:>17.2f}")
    print(f"{'env.step (parse+apply+diffs+units+obs)':<44} {r['step_ms']:>9.3f} {r['step_ms'] / r['difflib_ms']:>17.2f}")
    print(f"{'env.reset':<44} {r['reset_ms']:>9.3f} {r['reset_ms'] / r['difflib_ms']:>17.2f}")
    print(f"{'memory per env instance (after reset)':<44} {r['mem_kib']:>8.0f} KiB")
    print("target: <= 1 ms per step on a 500-line file")


if __name__ == "__main__":
    main()
