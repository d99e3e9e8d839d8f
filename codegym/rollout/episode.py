"""Playing one episode: the agent-env loop, and the `Trajectory` of a job.

`play` runs reset / act / step until the episode ends and returns the reset's info
and one `Transition` per step (the observation the agent answered, its action, the
step's result and the agent's optional ``last_turn``). `play_episode` plays an
`EpisodeJob` and builds its `Trajectory`: token ids, log-probs and messages come
from ``last_turn``, ``pre_state`` hashes the files the step started from. It is a
module-level function so that process and Ray workers can call it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from codegym.rollout.jobs import EpisodeJob
from codegym.rollout.records import Step, Trajectory, jsonable, state_hash

#: info keys stored in their own `Step` fields (or too large to repeat every step)
_STEP_FIELD_KEYS = frozenset({"files", "diff", "diff_units", "error", "judge", "reward_components",
                              "cumulative_diff", "task_id", "task_hash", "language", "main_file"})
#: keys of an agent's `last_turn` stored in their own `Step` fields
_TURN_FIELD_KEYS = ("prompt_ids", "response_ids", "logprobs", "messages")


@dataclass
class Transition:
    """One step: what the agent saw and answered, what the env returned."""

    observation: str
    action: str
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    turn: Any = None  # the agent's ``last_turn`` after this act (None if it keeps none)


@dataclass
class Played:
    """A whole episode: the reset's info, the steps, the last observation."""

    info: dict[str, Any]
    transitions: list[Transition] = field(default_factory=list)
    observation: str = ""

    @property
    def last_info(self) -> dict[str, Any]:
        return self.transitions[-1].info if self.transitions else self.info


def _clear_last_turn(agent: Any) -> None:
    # a stale `last_turn` from the previous act() must not be attributed to this step
    if getattr(agent, "last_turn", None) is not None:
        try:
            agent.last_turn = None
        except AttributeError:
            pass


def play(env: gym.Env, agent: Any, seed: int | None = None, options: dict[str, Any] | None = None,
         check: Callable[[dict[str, Any]], None] | None = None) -> Played:
    """Reset `env` (`seed`, `options`) and `agent` (``reset(task=env.unwrapped.task, seed=seed)``),
    then step until the episode ends; `check(info)` may refuse the reset's info."""
    obs, info = env.reset(seed=seed, options=options)
    if check is not None:
        check(info)
    agent.reset(task=getattr(env.unwrapped, "task", None), seed=seed)
    played = Played(info)
    terminated = truncated = False
    last_info = info
    while not (terminated or truncated):
        _clear_last_turn(agent)
        action = agent.act(obs, last_info)
        turn = getattr(agent, "last_turn", None)
        next_obs, reward, terminated, truncated, last_info = env.step(action)
        played.transitions.append(Transition(obs, action, float(reward), terminated, truncated, last_info, turn))
        obs = next_obs
    played.observation = obs
    return played


def _make_step(index: int, t: Transition, pre_files: Any) -> Step:
    turn = t.turn if isinstance(t.turn, dict) else {}
    info = t.info
    other = {k: v for k, v in info.items() if k not in _STEP_FIELD_KEYS}
    for k, v in turn.items():
        if k not in _TURN_FIELD_KEYS:
            other[k] = v  # finish_reason, usage, ...
    judge = info.get("judge")
    return Step(
        index=index,
        observation=t.observation,
        action=t.action,
        reward=float(t.reward),
        prompt_ids=[int(x) for x in turn["prompt_ids"]] if turn.get("prompt_ids") is not None else None,
        response_ids=[int(x) for x in turn["response_ids"]] if turn.get("response_ids") is not None else None,
        logprobs=[float(x) for x in turn["logprobs"]] if turn.get("logprobs") is not None else None,
        messages=jsonable(turn["messages"]) if turn.get("messages") is not None else None,
        diff=info.get("diff") or "",
        diff_units=jsonable(info.get("diff_units") or []),
        error=info.get("error"),
        judge=jsonable(judge) if judge is not None else None,
        reward_components=jsonable(info["reward_components"]) if info.get("reward_components") is not None else None,
        pre_state=state_hash(pre_files),
        terminated=bool(t.terminated),
        truncated=bool(t.truncated),
        info=jsonable(other),
    )


#: replays of an episode whose final judge report was a sandbox_error (not a verdict)
INFRA_RETRIES = 2


def play_episode(env: gym.Env, agent: Any, job: EpisodeJob, env_id: str | None = None,
                 infra_retries: int = INFRA_RETRIES) -> Trajectory:
    """Play `job` on `env` with `agent` and return its `Trajectory`.

    The env is reset with ``seed=job.seed`` and ``options={"task_id": job.task_id}``;
    the agent with ``reset(task=env.unwrapped.task, seed=job.seed)``. An episode whose
    final verdict is ``sandbox_error`` (the infrastructure failed, not the program) is
    played again, up to `infra_retries` times; ``metadata["infra_retries"]`` counts the
    replays (when any) and ``metadata["no_sample"]`` is True when every play failed so (collect
    then drops it: it is no sample, see docs/rollout.md)."""
    replays = 0
    traj = _play_once(env, agent, job, env_id)
    while traj.verdict == "sandbox_error" and replays < max(0, int(infra_retries)):
        replays += 1
        traj = _play_once(env, agent, job, env_id)
    if replays:
        traj.metadata["infra_retries"] = replays
    if traj.verdict == "sandbox_error":
        traj.metadata["no_sample"] = True
    return traj


def _play_once(env: gym.Env, agent: Any, job: EpisodeJob, env_id: str | None) -> Trajectory:
    t0 = time.perf_counter()

    def check(info: dict[str, Any]) -> None:
        if info.get("task_id") not in (None, job.task_id):
            raise RuntimeError(f"env reset to task {info.get('task_id')!r}, expected {job.task_id!r}")
        if job.task_hash and info.get("task_hash") not in (None, job.task_hash):
            raise RuntimeError(f"task {job.task_id} changed since the jobs were made "
                               f"(hash {info.get('task_hash')} != {job.task_hash})")

    played = play(env, agent, job.seed, {"task_id": job.task_id}, check)
    info = played.info
    pre_files = info.get("files")
    steps: list[Step] = []
    for t in played.transitions:
        steps.append(_make_step(len(steps), t, pre_files))
        pre_files = t.info.get("files", pre_files)
    last_info = played.last_info
    judge = last_info.get("judge") or None
    final = bool(last_info.get("submitted")) or (judge is not None and judge.get("split") not in (None, "public"))
    last = played.transitions[-1] if played.transitions else None
    metadata: dict[str, Any] = {
        "language": info.get("language"),
        "main_file": info.get("main_file"),
        "turns": len(steps),
        "terminated": bool(last and last.terminated),
        "truncated": bool(last and last.truncated),
        "final_observation": played.observation,
        "cumulative_diff": last_info.get("cumulative_diff", ""),
        "final_state": state_hash(last_info.get("files", pre_files)),
        "episode_s": time.perf_counter() - t0,
    }
    mutation = getattr(agent, "last_mutation", None)
    if mutation:
        metadata["mutation"] = dict(mutation)
    if env_id is None:
        # the raw env's spec attribute: its id is all that is needed, and no copy is made
        env_id = getattr(getattr(getattr(env, "unwrapped", env), "spec", None), "id", None)
    return Trajectory(
        task_id=job.task_id,
        task_hash=str(info.get("task_hash") or job.task_hash or ""),
        group_id=job.group_id,
        sample_index=job.sample_index,
        env_id=env_id,
        agent=str(getattr(agent, "name", type(agent).__name__)),
        seed=job.seed,
        steps=steps,
        final_reward=steps[-1].reward if steps else 0.0,
        total_reward=float(sum(s.reward for s in steps)),
        reward_components=dict(steps[-1].reward_components or {}) if steps else {},
        verdict=judge.get("verdict") if (judge and final) else None,
        metadata=jsonable(metadata),
    )
