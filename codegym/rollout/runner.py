"""Running agents on environments for `codegym run`: one episode, many episodes, as plain records.

`run_episode(env, agent, ...)` plays one episode (the loop of
`codegym.rollout.episode.play`) and returns a JSON-able record (task, actions,
rewards, final verdict, timings); `run_episodes` plays N per agent with a progress
bar, appending each record to a JSONL file as soon as it is done. Every agent plays
the same tasks with the same seeds (episode i uses seed S+i). A record carries the
model tokens of each step and of the episode (`sum_usage` of the agent's ``last_turn``),
the wall time, and a scaffold agent's run summary. The command itself is `codegym.cli.run`.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
from rich.progress import Progress

from codegym.rollout.episode import play
from codegym.rollout.records import jsonable

_STEP_INFO_KEYS = ("turn", "diff", "diff_units", "edits", "error", "submitted", "reward_components")


def sum_usage(turns: Iterable[Mapping[str, Any] | None]) -> dict[str, int]:
    """The model tokens of an episode: each numeric field of the turns' ``usage`` added up."""
    out: dict[str, int] = defaultdict(int)
    for t in turns:
        for k, v in ((t or {}).get("usage") or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out[k] += int(v)
    return dict(out)


def run_episode(env: gym.Env, agent: Any, seed: int | None = None,
                options: dict[str, Any] | None = None, keep_observations: bool = True) -> dict[str, Any]:
    """Play one episode; returns its record."""
    t0 = time.perf_counter()
    played = play(env, agent, seed, options)
    info, last_info = played.info, played.last_info
    steps: list[dict[str, Any]] = []
    turns = [t.turn if isinstance(t.turn, Mapping) else None for t in played.transitions]
    for t, turn in zip(played.transitions, turns):
        step = {"action": t.action, "reward": float(t.reward), **{k: t.info.get(k) for k in _STEP_INFO_KEYS}}
        if turn is not None:  # an LLM or scaffold agent's turn: its model tokens
            step["usage"], step["finish_reason"] = turn.get("usage"), turn.get("finish_reason")
        if keep_observations:
            step["observation"] = t.observation
        steps.append(step)
    last = played.transitions[-1] if played.transitions else None
    judge = last_info.get("judge") or {}
    record = {
        "env_id": getattr(getattr(env, "spec", None), "id", None),
        "agent": getattr(agent, "name", type(agent).__name__),
        "task_id": info.get("task_id"),
        "task_hash": info.get("task_hash"),
        "seed": seed,
        "language": info.get("language"),
        "turns": len(steps),
        "return": sum((s["reward"] for s in steps), 0.0),
        "final_reward": steps[-1]["reward"] if steps else 0.0,
        "verdict": judge.get("verdict"),
        "passed": judge.get("passed"),
        "total": judge.get("total"),
        "timing": judge.get("timing"),
        "cumulative_diff": last_info.get("cumulative_diff"),
        "final_observation": played.observation if keep_observations else None,
        "terminated": bool(last and last.terminated),
        "truncated": bool(last and last.truncated),
        "episode_s": time.perf_counter() - t0,
        "usage": sum_usage(turns),
        "steps": steps,
    }
    summary = getattr(agent, "scaffold_summary", None)  # scaffold agents: turns, model calls, tokens, time
    if callable(summary):
        record["scaffold"] = summary()
    mutation = getattr(agent, "last_mutation", None)
    if mutation:
        record["mutation"] = dict(mutation)
    # what the episode-deciding reward wrappers saw (staged: stage, times, bound; timed: speedup ...)
    details = {k: last_info[k] for k in ("staged", "timing") if isinstance(last_info.get(k), dict)}
    if details:
        record["reward_details"] = details
    return jsonable(record)


def run_episodes(env_id: str, agents: Sequence[Any], episodes: int, seed: int = 0,
                 out: str | Path | None = None, env_kwargs: dict[str, Any] | None = None,
                 progress: bool = True, task_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Play `episodes` episodes per agent on `env_id` (same seeds for every agent).

    With `task_ids`, episode i plays task ``task_ids[i % len(task_ids)]``; otherwise the
    env samples a task from the seed."""
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
