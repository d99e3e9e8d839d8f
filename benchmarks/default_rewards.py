"""The default reward of PerfCode and DMC-Optim, task by task: does plain `gym.make(id)` pay speed?

For every task of ``codegym/PerfCode-v0`` and ``codegym/DMCOptim-v0`` (their suites'
default reward: staged, timed, calibrated with runtimes.json, slow bound 1x), one
episode each of the oracle (the expert reference), the baseline (the unchanged slow
starter, or the slowest solution) and a wrong answer (the reference with its output
mutated), each submitted in one step. Prints per task the calibrated gap (baseline /
reference, runtimes.json), the three rewards, the oracle's measured speedup, whether
the baseline was stopped at the slow bound, and the wall time of each timed
submission; then the checks of issue #18 (oracle > baseline wherever the gap is
>= 1.5x, baseline < 1, wrong < both) and the wall time per timed submission (median,
p95, max) by family and agent. The machine's load average is printed with it.

    python benchmarks/default_rewards.py [--suite perfcode|dmcoptim] [--limit N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import gymnasium as gym
from rich.console import Console
from rich.table import Table

import codegym  # noqa: F401  (registers the ids)
from codegym.agents import BaselineAgent, MutantAgent, OracleAgent
from codegym.tasks.suite import load_suite

FAMILIES = {"perfcode": "codegym/PerfCode-v0", "dmcoptim": "codegym/DMCOptim-v0"}
#: the gap from which the oracle must out-earn the baseline (issue #18)
GAP = 1.5


def agents():
    return {"oracle": OracleAgent(), "baseline": BaselineAgent(), "wrong": MutantAgent(kinds=["output"], seed=0)}


def play(env, agent, task_id: str) -> dict:
    """One episode, the submission timed (wall seconds of the submitting step)."""
    obs, info = env.reset(options={"task_id": task_id})
    agent.reset(task=env.unwrapped.task)
    t0 = time.perf_counter()
    obs, r, term, trunc, info = env.step(agent.act(obs, info))
    while not (term or trunc):
        obs, r, term, trunc, info = env.step(agent.act(obs, info))
    wall = time.perf_counter() - t0
    staged = info.get("staged") or {}
    times = staged.get("times") or {}
    return {"reward": float(r), "verdict": (info.get("judge") or {}).get("verdict"), "stage": staged.get("stage"),
            "wall_s": wall, "timed": times != {}, "stopped": bool(staged.get("bound")),
            "speedup": (times["t_baseline"] / times["t"]) if times.get("t") else None,
            "source": times.get("source"), "reason": staged.get("reason", "")}


def gaps(suite: str) -> dict[str, float]:
    data = json.loads((Path(codegym.__file__).resolve().parent.parent / "tasks" / suite / "runtimes.json")
                      .read_text())
    return {tid: float(v["ratio"]) for tid, v in data["tasks"].items()}


def pctl(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", action="append", choices=sorted(FAMILIES), help="(repeatable; default both)")
    ap.add_argument("--limit", type=int, help="first N tasks of each suite")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    console = Console() if Console().is_terminal else Console(width=220)
    rows, failures = [], []
    load0 = os.getloadavg()
    t_start = time.monotonic()
    for suite in args.suite or list(FAMILIES):
        env = gym.make(FAMILIES[suite])   # plain: the suite's default reward
        gap = gaps(suite)
        tasks = list(load_suite(suite))[: args.limit or None]
        for i, task in enumerate(tasks):
            row = {"suite": suite, "task": task.id, "language": task.language, "gap": gap.get(task.id)}
            for name, agent in agents().items():
                row[name] = play(env, agent, task.id)
            o, b, w = row["oracle"], row["baseline"], row["wrong"]
            checks = []
            if row["gap"] and row["gap"] >= GAP and not o["reward"] > b["reward"]:
                checks.append("oracle <= baseline")
            if not b["reward"] < 1.0:
                checks.append("baseline >= 1")
            if not w["reward"] < min(o["reward"], b["reward"]):
                checks.append("wrong not below both")
            row["failed"] = checks
            failures += [f"{task.id}: {c}" for c in checks]
            rows.append(row)
            print(f"[{i + 1}/{len(tasks)}] {task.id}: oracle {o['reward']:.3f} ({o['wall_s']:.1f} s), baseline "
                  f"{b['reward']:.3f} ({b['wall_s']:.1f} s{', stopped' if b['stopped'] else ''}), wrong "
                  f"{w['reward']:.3f}" + (f"  FAILED: {', '.join(checks)}" if checks else ""), flush=True)
        env.close()
    load1 = os.getloadavg()

    table = Table(title="plain gym.make(id) + submit: the suites' default reward (staged, timed, slow bound 1x)")
    for col in ("task", "lang", "gap", "oracle", "baseline", "wrong", "oracle speedup", "baseline stopped",
                "oracle s", "baseline s", "ok"):
        table.add_column(col, justify="left" if col in ("task", "lang") else "right")
    for r in rows:
        o, b, w = r["oracle"], r["baseline"], r["wrong"]
        table.add_row(r["task"], r["language"], f"{r['gap']:.1f}x" if r["gap"] else "-", f"{o['reward']:.3f}",
                      f"{b['reward']:.3f}", f"{w['reward']:.3f}",
                      f"{o['speedup']:.1f}x" if o["speedup"] else "-", "yes" if b["stopped"] else "no",
                      f"{o['wall_s']:.1f}", f"{b['wall_s']:.1f}", "yes" if not r["failed"] else "NO")
    console.print(table)

    summary = Table(title="wall seconds per timed submission (the submitting step: judge, perf split, timing)")
    for col in ("family", "agent", "n", "median", "p95", "max"):
        summary.add_column(col, justify="left" if col in ("family", "agent") else "right")
    for suite in dict.fromkeys(r["suite"] for r in rows):
        for name in ("oracle", "baseline", "all"):
            walls = [r[a]["wall_s"] for r in rows if r["suite"] == suite for a in ("oracle", "baseline")
                     if (name == "all" or a == name) and r[a]["timed"]]
            if walls:
                summary.add_row(suite, name, str(len(walls)), f"{statistics.median(walls):.2f}",
                                f"{pctl(walls, 95):.2f}", f"{max(walls):.2f}")
    console.print(summary)
    gapped = [r for r in rows if r["gap"] and r["gap"] >= GAP]
    console.print(f"oracle > baseline on {sum(r['oracle']['reward'] > r['baseline']['reward'] for r in gapped)}"
                  f"/{len(gapped)} tasks with a gap >= {GAP}x; baseline < 1 on "
                  f"{sum(r['baseline']['reward'] < 1 for r in rows)}/{len(rows)}; wrong below both on "
                  f"{sum(r['wrong']['reward'] < min(r['oracle']['reward'], r['baseline']['reward']) for r in rows)}"
                  f"/{len(rows)}; baseline stopped at the bound on {sum(r['baseline']['stopped'] for r in rows)}"
                  f"/{len(rows)}")
    console.print(f"load average {load0[0]:.1f} before, {load1[0]:.1f} after; {os.cpu_count()} CPUs; "
                  f"{time.monotonic() - t_start:.0f} s in all")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "load": [load0, load1]}, indent=1))
    for f in failures:
        console.print(f"FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
