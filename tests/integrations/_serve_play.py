"""Helpers of the `codegym serve` tests: codegym's reference agents played in-process and over the wire.

`in_process` plays an agent on ``gym.make(env_id, **options)`` (the reference); `play_openenv`
plays it through an openenv ``SyncEnvClient`` (the agent's text as the action) and
`play_ors` through an ``ors.client`` session (the ``act`` tool); `tool_calls_of` turns an
oracle's ``tool_call``-format action into (tool, arguments) pairs for the tool routes.
"""

from __future__ import annotations

import json
import os
from typing import Any

# ORS' server loggers read the level when ors is first imported: keep test output quiet
os.environ.setdefault("ORS_LOG_LEVEL", "WARNING")

import gymnasium as gym  # noqa: E402

import codegym  # noqa: E402,F401  (registers the ids)
from codegym.rollout.runner import run_episode  # noqa: E402
from codegym.tasks.suite import load_suite  # noqa: E402

SEED = 0


def task_of(task_id: str):
    return load_suite(task_id.split("/")[0]).get(task_id)


def in_process(env_id: str, task_id: str, agent: Any, options: dict[str, Any] | None = None) -> dict[str, Any]:
    env = gym.make(env_id, **(options or {}))
    try:
        rec = run_episode(env, agent, seed=SEED, options={"task_id": task_id})
    finally:
        env.close()
    return {"reward": rec["final_reward"], "verdict": rec["verdict"], "turns": rec["turns"],
            "first_observation": rec["steps"][0]["observation"] if rec["steps"] else None}


def play_openenv(client: Any, agent: Any, env_id: str, task_id: str, options: dict[str, Any] | None = None):
    from codegym.integrations.openenv import CodegymAction

    r = client.reset(env_id=env_id, task_id=task_id, seed=SEED, **(options or {}))
    first = r.observation.text
    agent.reset(task=task_of(task_id), seed=SEED)
    turns = 0
    while not r.done:
        action = agent.act(r.observation.text, r.observation.info)
        r = client.step(CodegymAction(action=action))
        turns += 1
    judge = r.observation.judge or {}
    return {"reward": r.reward, "verdict": judge.get("verdict"), "turns": turns, "first_observation": first,
            "last": r}


def play_ors(session: Any, agent: Any, task_id: str) -> dict[str, Any]:
    prompt = session.get_prompt()[0]
    info = prompt.detail["info"]
    agent.reset(task=task_of(task_id), seed=SEED)
    observation, turns, out = prompt.text, 0, None
    while out is None or not out.finished:
        out = session.call_tool("act", {"text": agent.act(observation, info)})
        observation, info, turns = out.blocks[0].text, out.metadata["info"], turns + 1
    judge = out.metadata.get("judge") or {}
    return {"reward": out.reward, "verdict": judge.get("verdict"), "turns": turns, "first_observation": prompt.text,
            "last": out}


def tool_calls_of(action: str) -> list[tuple[str, dict[str, Any]]]:
    """The (tool, arguments) pairs of an oracle action written in the ``tool_call`` format."""
    text = action.strip()
    if text == "submit":
        return [("submit", {})]
    start = min(i for i in (text.find("["), text.find("{")) if i >= 0)
    value, _ = json.JSONDecoder().raw_decode(text[start:])
    calls = []
    for call in value if isinstance(value, list) else [value]:
        fn = call.get("function", call)
        args = fn.get("arguments", {})
        calls.append((fn["name"], json.loads(args) if isinstance(args, str) else args))
    if text.rstrip("`\n ").endswith("submit") and calls[-1][0] != "submit":
        calls.append(("submit", {}))
    return calls
