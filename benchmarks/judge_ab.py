"""The judge's and the env's speed in two checkouts of codegym, measured in one run (before / after).

Each round runs, for each checkout in turn (alternating which goes first), a fresh child
process with that checkout first on ``PYTHONPATH``; the child judges, through
`codegym.judge.run.judge` on `LocalSandbox(workers=2)` with 2 threads, the workloads of
`benchmarks/docker_judge.py` (``one-test``: 200 one-test tasks; ``stdio``: 10 x 100 tests;
tasks and programs made afresh each round) and ``early``: 2,000 judgements decided in the
host (no code, compile error; nothing runs); ``step``: 40 steps (with a reset when an
episode ends) of ``gym.make("codegym/PerfCode-v0")`` on perfcode/py-sum-numbers, each
writing main.py (a fenced block) and running the public tests; ``submit``: 4 episodes of the
same env, each submitting the starter (a baseline-like candidate) for the suite's default
timed reward (the first is the task's cold submission in the child process). Printed per
checkout and workload: tests (or judgements, steps, submits) per second and the host
process's CPU milliseconds per judgement (less sensitive to the machine's load than the wall
clock), medians over the rounds, and after / before. The load average is printed with each
round.

    python benchmarks/judge_ab.py --before ../main-before --after . [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKLOADS = ("one-test", "stdio", "early", "step", "submit")
TASK = "perfcode/py-sum-numbers"
EDIT = """```python path=main.py
import sys
total = 0
for line in sys.stdin:
    total = sum(int(x) for x in line.split() if x.lstrip("-").isdigit())  # v{}
    sys.stdout.write(f"{{total}}\\n")
```"""


def env_workload(w: str) -> tuple[float, float]:
    """(steps or submits per second, host CPU ms per step or submit) through gym.make."""
    import gymnasium as gym  # noqa: PLC0415

    import codegym  # noqa: F401, PLC0415

    env = gym.make("codegym/PerfCode-v0")
    try:
        n = 40 if w == "step" else 4
        c0, t0 = time.process_time(), time.perf_counter()
        if w == "step":
            done = True
            for i in range(n):
                if done:
                    env.reset(options={"task_id": TASK})
                _obs, _reward, term, trunc, _info = env.step(EDIT.format(i))
                done = term or trunc
        else:
            for _ in range(n):
                env.reset(options={"task_id": TASK})
                _obs, reward, _term, _trunc, _info = env.step("submit")
                assert reward > 0, reward
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        env.close()
    return n / wall, 1000 * cpu / n


def child(workloads: list[str]) -> dict:
    """{workload: (per second, host CPU ms per judgement)} in this process's checkout."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    from docker_judge import run, workload  # noqa: PLC0415

    from codegym.judge.run import judge  # noqa: PLC0415
    from codegym.sandbox.local import LocalSandbox  # noqa: PLC0415

    out = {}
    sb = LocalSandbox(workers=2)
    try:
        with tempfile.TemporaryDirectory() as d:
            folder = Path(d)
            run(sb, workload("one-test", "warm", folder)[:8])
            for w in workloads:
                if w in ("step", "submit"):
                    out[w] = env_workload(w)
                    continue
                if w == "early":
                    items = workload("one-test", "early", folder)[:10]
                    progs = [{"main.py": "# nothing yet\n"}, {"main.py": "print(1\n"}]
                    jobs = [(items[i % 10][0], progs[i % 2]) for i in range(2000)]
                    c0, t0 = time.process_time(), time.perf_counter()
                    with ThreadPoolExecutor(2) as ex:
                        reps = list(ex.map(lambda j: judge(j[0], j[1], sandbox=sb), jobs))
                    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                    assert {r.verdict for r in reps} == {"no_code", "compile_error"}
                    out[w] = (len(jobs) / wall, 1000 * cpu / len(jobs))
                    continue
                items = workload(w, f"r{os.getpid()}", folder)
                c0 = time.process_time()
                wall, tests, _p50, verdicts = run(sb, items)
                cpu = time.process_time() - c0
                assert set(verdicts) == {"accepted"}, verdicts
                out[w] = (tests / wall, 1000 * cpu / len(items))
    finally:
        sb.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="checkout measured as 'before'")
    ap.add_argument("--after", required=True, help="checkout measured as 'after'")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    if args.child:
        print(json.dumps(child(names)))
        return 0
    trees = {"before": str(Path(args.before).resolve()), "after": str(Path(args.after).resolve())}
    got: dict[tuple[str, str], list[tuple[float, float]]] = {}
    print(f"judge A/B, {args.rounds} rounds, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}", flush=True)
    for k in range(args.rounds):
        for which in (("before", "after") if k % 2 == 0 else ("after", "before")):
            env = {**os.environ, "PYTHONPATH": trees[which]}
            proc = subprocess.run([sys.executable, __file__, "--before", "-", "--after", "-", "--child",
                                   "--workloads", ",".join(names)], env=env, cwd=trees[which],
                                  capture_output=True, text=True, check=True)
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            for w in names:
                got.setdefault((which, w), []).append(tuple(res[w]))
            print(f"  round {k + 1} {which:6s} " + "  ".join(f"{w} {res[w][0]:.3g}/s {res[w][1]:.3f} ms"
                                                             for w in names)
                  + f"  load {os.getloadavg()[0]:.1f}", flush=True)
    print("\n| workload | before /s | after /s | after / before | before host CPU ms per judge "
          "| after host CPU ms per judge | after / before |")
    print("|---|---|---|---|---|---|---|")
    for w in names:
        b = [statistics.median(x) for x in zip(*got[("before", w)])]
        a = [statistics.median(x) for x in zip(*got[("after", w)])]
        print(f"| {w} | {b[0]:.3g} | {a[0]:.3g} | {a[0] / b[0]:.2f} | {b[1]:.3f} | {a[1]:.3f} | {a[1] / b[1]:.2f} |")
    print(f"medians of {args.rounds} rounds; load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
