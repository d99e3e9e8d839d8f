"""Running agents on environments: one episode, many episodes, and `codegym run`.

`run_episode(env, agent, ...)` plays one episode and returns a plain JSON-able
record (task, actions, rewards, final verdict, timings); `run_episodes` plays N
with a rich progress bar and appends each record to a JSONL file as soon as it
is done; `register(subparsers)` adds the ``codegym run`` command:

    codegym run codegym/PerfCode-v0 --agent oracle --agent baseline --episodes 10 \
        --seed 0 --out rollouts.jsonl

With several ``--agent`` flags, every agent plays the same tasks with the same
seeds (episode i of each agent uses seed S+i), and the summary table puts them
side by side.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym

_STEP_INFO_KEYS = ("turn", "diff", "diff_units", "edits", "error", "submitted", "reward_components")


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=lambda o: getattr(o, "to_dict", lambda: repr(o))()))


def run_episode(env: gym.Env, agent: Any, seed: int | None = None,
                options: dict[str, Any] | None = None, keep_observations: bool = True) -> dict[str, Any]:
    """Play one episode; returns its record."""
    t0 = time.perf_counter()
    obs, info = env.reset(seed=seed, options=options)
    base = env.unwrapped
    agent.reset(task=getattr(base, "task", None), seed=seed)
    steps: list[dict[str, Any]] = []
    total = 0.0
    terminated = truncated = False
    last_info = info
    while not (terminated or truncated):
        action = agent.act(obs, last_info)
        prev_obs = obs
        obs, reward, terminated, truncated, last_info = env.step(action)
        total += float(reward)
        step = {"action": action, "reward": float(reward),
                **{k: last_info.get(k) for k in _STEP_INFO_KEYS}}
        if keep_observations:
            step["observation"] = prev_obs
        steps.append(step)
    judge = last_info.get("judge") or {}
    record = {
        "env_id": getattr(getattr(env, "spec", None), "id", None),
        "agent": getattr(agent, "name", type(agent).__name__),
        "task_id": info.get("task_id"),
        "task_hash": info.get("task_hash"),
        "seed": seed,
        "language": info.get("language"),
        "turns": len(steps),
        "return": total,
        "final_reward": steps[-1]["reward"] if steps else 0.0,
        "verdict": judge.get("verdict"),
        "passed": judge.get("passed"),
        "total": judge.get("total"),
        "timing": judge.get("timing"),
        "cumulative_diff": last_info.get("cumulative_diff"),
        "final_observation": obs if keep_observations else None,
        "terminated": terminated,
        "truncated": truncated,
        "episode_s": time.perf_counter() - t0,
        "steps": steps,
    }
    mutation = getattr(agent, "last_mutation", None)
    if mutation:
        record["mutation"] = dict(mutation)
    return _jsonable(record)


def run_episodes(env_id: str, agents: Sequence[Any], episodes: int, seed: int = 0,
                 out: str | Path | None = None, env_kwargs: dict[str, Any] | None = None,
                 progress: bool = True, task_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Play `episodes` episodes per agent on `env_id` (same seeds for every agent).

    With `task_ids`, episode i plays task ``task_ids[i % len(task_ids)]``; otherwise the
    env samples a task from the seed."""
    from rich.progress import Progress

    records: list[dict[str, Any]] = []
    fh = open(out, "a", encoding="utf-8") if out else None
    try:
        with Progress(disable=not progress, transient=True) as bar:
            job = bar.add_task(f"{env_id}", total=episodes * len(agents))
            for agent in agents:
                env = gym.make(env_id, **(env_kwargs or {}))
                try:
                    for i in range(episodes):
                        opts = {"task_id": task_ids[i % len(task_ids)]} if task_ids else None
                        rec = run_episode(env, agent, seed=seed + i, options=opts)
                        records.append(rec)
                        if fh:
                            fh.write(json.dumps(rec) + "\n")
                            fh.flush()
                        bar.advance(job)
                finally:
                    env.close()
    finally:
        if fh:
            fh.close()
    return records


def summary_table(records: Sequence[dict[str, Any]], title: str = "codegym run"):
    """A rich Table: one row per task, agents side by side (verdict, reward, turns, time)."""
    from rich.table import Table

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
            rs = [r for r in records if r["task_id"] == t and r["agent"] == a]
            if not rs:
                row += ["", "", "", ""]
                continue
            verdicts = sorted({str(r["verdict"]) for r in rs})
            row.append("/".join(verdicts))
            row.append(f"{sum(r['final_reward'] for r in rs) / len(rs):.3f}")
            row.append(f"{sum(r['turns'] for r in rs) / len(rs):.1f}")
            times = [r["timing"]["median"] for r in rs if isinstance(r.get("timing"), dict)
                     and r["timing"].get("median") is not None]
            row.append(f"{sum(times) / len(times) * 1000:.1f} ms" if times else "-")
        table.add_row(*row)
    return table


def _cmd_run(args: argparse.Namespace) -> int:
    import codegym  # noqa: F401  (registers the ids)
    from codegym.agents import make_agent
    from rich.console import Console

    env_kwargs: dict[str, Any] = {}
    for kv in args.env_arg or ():
        k, _, v = kv.partition("=")
        try:
            env_kwargs[k] = json.loads(v)
        except json.JSONDecodeError:
            env_kwargs[k] = v
    if args.suite:
        env_kwargs["suite"] = args.suite
    if args.timing:
        env_kwargs["timing"] = True
    agents = [make_agent(spec, seed=args.seed) for spec in (args.agent or ["oracle"])]
    task_ids = None
    if args.all_tasks or args.task:
        if args.task:
            task_ids = list(args.task)
        else:
            probe = gym.make(args.env_id, **env_kwargs)
            task_ids = [t.id for t in probe.unwrapped.tasks]
            probe.close()
        if args.all_tasks:
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
