"""``codegym run``: play episodes of an environment with agents and print a summary table.

    codegym run codegym/PerfCode-v0 --agent oracle --agent baseline --episodes 10 \\
        --seed 0 --out rollouts.jsonl

With several ``--agent`` flags every agent plays the same tasks with the same seeds
(`codegym.rollout.runner.run_episodes`), and the table puts them side by side. A bad env
id, option, agent spec or task id is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from rich.console import Console
from rich.table import Table

from codegym.agents import make_agent
from codegym.envs.registration import ENV_IDS, register_envs
from codegym.rollout.runner import run_episodes
from codegym.tasks.suite import list_suites


def summary_table(records: Sequence[dict[str, Any]], title: str = "codegym run") -> Table:
    """A rich Table: one row per task, agents side by side (verdict, reward, turns, time)."""
    agents = list(dict.fromkeys(r["agent"] for r in records))
    tasks = list(dict.fromkeys(r["task_id"] for r in records))
    table = Table(title=title)
    table.add_column("task", no_wrap=True)
    for a in agents:
        table.add_column(f"{a}\nverdict", no_wrap=True)
        table.add_column(f"{a}\nreward", justify="right")
        table.add_column(f"{a}\nturns", justify="right")
        table.add_column(f"{a}\nperf time", justify="right", no_wrap=True)
    for t in tasks:
        row = [t]
        for a in agents:
            row += _cells([r for r in records if r["task_id"] == t and r["agent"] == a])
        table.add_row(*row)
    return table


def _cells(rs: Sequence[dict[str, Any]]) -> list[str]:
    """Verdicts, mean reward, mean turns and mean perf time of one agent on one task."""
    if not rs:
        return ["", "", "", ""]
    times = [r["timing"]["median"] for r in rs if isinstance(r.get("timing"), dict)
             and r["timing"].get("median") is not None]
    return ["/".join(sorted({str(r["verdict"]) for r in rs})),
            f"{sum(r['final_reward'] for r in rs) / len(rs):.3f}",
            f"{sum(r['turns'] for r in rs) / len(rs):.1f}",
            f"{sum(times) / len(times) * 1000:.1f} ms" if times else "-"]


def parse_key_values(pairs) -> dict[str, Any]:
    """``KEY=VALUE`` arguments (``--env-arg``) as a dict; a VALUE is parsed as JSON when it is JSON."""
    out: dict[str, Any] = {}
    for kv in pairs or ():
        k, _, v = kv.partition("=")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def _env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    env_kwargs = parse_key_values(args.env_arg)
    if args.suite:
        env_kwargs["suite"] = args.suite
    if args.timing:
        env_kwargs["timing"] = True
    return env_kwargs


def _setup(args: argparse.Namespace, env_kwargs: dict[str, Any]) -> tuple[list[Any], list[str] | None]:
    """The agents and the task ids to play; raises ValueError (one line) for a bad id, option,
    agent spec or task id."""
    if args.env_id not in ENV_IDS:
        raise ValueError(f"unknown env id {args.env_id!r}; registered: {', '.join(ENV_IDS)}")
    if args.env_id == "codegym/Suite-v0" and "suite" not in env_kwargs and "tasks" not in env_kwargs:
        raise ValueError(f"{args.env_id} plays the tasks of a suite: give --suite NAME_OR_DIR "
                         f"(bundled: {', '.join(list_suites())})")
    try:
        probe = gym.make(args.env_id, **env_kwargs)
    except (ValueError, KeyError, OSError, TypeError) as e:
        raise ValueError(f"cannot make {args.env_id} with {env_kwargs}: {_one_line(e)}") from None
    try:
        known = [t.id for t in probe.unwrapped.tasks]
    finally:
        probe.close()
    unknown = [t for t in args.task or () if t not in known]
    if unknown:
        raise ValueError(f"unknown task id(s) {unknown} in {args.env_id}"
                         + (f" ({env_kwargs['suite']})" if "suite" in env_kwargs else ""))
    task_ids = list(args.task) if args.task else (known if args.all_tasks else None)
    try:
        agents = [make_agent(spec, seed=args.seed) for spec in (args.agent or ["oracle"])]
    except (ValueError, KeyError, OSError) as e:
        raise ValueError(f"--agent: {_one_line(e)}") from None
    return agents, task_ids


def _one_line(e: BaseException) -> str:
    text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    return " / ".join(line.strip() for line in text.splitlines() if line.strip()) or type(e).__name__


def _cmd_run(args: argparse.Namespace) -> int:
    register_envs()
    env_kwargs = _env_kwargs(args)
    try:
        agents, task_ids = _setup(args, env_kwargs)
    except ValueError as e:
        print(f"codegym run: {e}", file=sys.stderr)
        return 2
    if args.all_tasks and task_ids:
        args.episodes = len(task_ids)
    records = run_episodes(args.env_id, agents, args.episodes, seed=args.seed, out=args.out,
                           env_kwargs=env_kwargs, progress=not args.quiet, task_ids=task_ids)
    console = Console() if Console().is_terminal else Console(width=200)
    console.print(summary_table(records, title=f"{args.env_id}: {args.episodes} episode(s) per agent"))
    if args.out:
        console.print(f"wrote {len(records)} episode records to {args.out}")
    return 0


def register(subparsers) -> None:
    """Add ``codegym run``."""
    p = subparsers.add_parser("run", help="run agents on an environment",
                              description="Play episodes of an environment with reference agents.")
    p.add_argument("env_id", help="e.g. codegym/PerfCode-v0")
    p.add_argument("--agent", action="append",
                   help="oracle[:FORMAT] | baseline | mutant[:KINDS] | replay:FILE | llm:SPEC (repeatable)")
    p.add_argument("--episodes", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="append episode records to this JSONL file")
    p.add_argument("--all-tasks", action="store_true", help="one episode per task of the env (overrides --episodes)")
    p.add_argument("--task", action="append", help="play this task id (repeatable; episodes cycle through them)")
    p.add_argument("--suite", help="suite name or path (for codegym/Suite-v0)")
    p.add_argument("--timing", action="store_true", help="measure the perf tests of accepted submissions")
    p.add_argument("--env-arg", action="append", metavar="KEY=VALUE",
                   help="extra env constructor argument (VALUE parsed as JSON when possible)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_run)
