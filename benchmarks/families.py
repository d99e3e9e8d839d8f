"""Per benchmark family: task count, languages, oracle pass rate, median judge time.

Plays every bundled task of each family once with the oracle agent (one submit of the
task's reference solution; hidden tests, no timing) through the family's registered env
and prints a table. Judge time = the wall time of the submitting step (parse, apply,
build, run the hidden tests, check), median over the family's tasks. The imported
HumanEval+ / MBPP+ suites have their own table: ``benchmarks/evalplus_fidelity.py``.

    python benchmarks/families.py [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import gymnasium as gym
from rich.console import Console
from rich.table import Table

import codegym  # noqa: F401
from codegym.agents import OracleAgent
from codegym.sandbox import get_language
from codegym.tasks.suite import load_suite

FAMILIES = [("PerfCode", "codegym/PerfCode-v0", "perfcode"),
            ("DMC-Optim", "codegym/DMCOptim-v0", "dmcoptim"),
            ("LCB", "codegym/LCB-v0", "lcb"),
            ("MultiPL-E Julia", "codegym/MultiPLE-Julia-v0", "multiple_julia"),
            ("SWE repos", "codegym/SWE-v0", "swe"),
            ("examples", "codegym/Suite-v0", "examples")]


def _family_row(name: str, env_id: str, suite, limit: int | None) -> list[str]:
    tasks = list(suite)[:limit] if limit else list(suite)
    kw = {"suite": str(suite.root)} if env_id == "codegym/Suite-v0" else {}
    env = gym.make(env_id, reward="pass_fraction", **kw)  # untimed: the judge's own time
    langs: set[str] = set()
    accepted, verdicts, times = 0, {}, []
    for task in tasks:
        langs.update([s.language or task.language for s in task.solutions.values()] or [task.language])
        obs, info = env.reset(options={"task_id": task.id})
        agent = OracleAgent()
        agent.reset(task=env.unwrapped.task)
        t0 = time.perf_counter()
        obs, r, term, trunc, info = env.step(agent.act(obs, info))
        while not (term or trunc):  # an oracle that needs more than one turn (tool formats)
            obs, r, term, trunc, info = env.step(agent.act(obs, info))
        times.append(time.perf_counter() - t0)
        v = (info.get("judge") or {}).get("verdict")
        verdicts[v] = verdicts.get(v, 0) + 1
        accepted += v == "accepted"
    env.close()
    note = ""
    if "julia" in langs and not get_language("julia").available():
        note = " (julia not installed: " + ", ".join(f"{k} {n}" for k, n in verdicts.items()) + ")"
    return [name, str(len(tasks)), ", ".join(sorted(langs)),
            f"{accepted}/{len(tasks)} = {accepted / max(1, len(tasks)):.0%}{note}",
            f"{statistics.median(times) * 1000:.0f} ms" if times else "-"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="at most N tasks per family")
    args = ap.parse_args(argv)
    table = Table(title="codegym families: oracle on hidden tests (one submit per task)")
    for col in ("family", "tasks", "languages", "oracle accepted", "median judge time"):
        table.add_column(col)
    for name, env_id, suite in FAMILIES:
        table.add_row(*_family_row(name, env_id, load_suite(suite), args.limit))
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
