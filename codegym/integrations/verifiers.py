"""codegym as a verifiers environment (``verifiers >= 0.4``, the ``verifiers.v1`` stack).

verifiers loads an environment by its taskset id: the id names an installed module that
exports its `Taskset` (and here its `Env`) through ``__all__``. codegym's is the module
``codegym_verifiers`` (id ``codegym-verifiers``), which re-exports this module's classes:

- `CodegymTaskset` (config `CodegymConfig`: ``env_id``, ``suite``, ``tasks``, env options):
  one `CodegymTask` per codegym task, its prompt the env's first observation;
- `CodegymEnv`: the episode, played host-side -- each model reply is one ``env.step``
  action and the env's feedback is the next user turn, until the episode ends (a
  conversation that ends first is submitted as it stands);
- the rubric: `CodegymTask`'s ``codegym_reward`` (weight 1) is the env's final reward,
  metrics ``pass_fraction``, ``correct``, ``turns``; ``trace.info["codegym"]`` keeps the
  verdict, judge report and every step's reward.

The seat plays verifiers' ``null`` harness (a plain chat loop) in the local subprocess
runtime by default. `load_environment(env_id=..., **taskset_options)` builds the ``vf.Env``
(the call verifiers' loaders make from a config). docs/verifiers.md.

    vf-eval codegym-verifiers --env.taskset.env-id codegym/LCB-v0 -m MODEL --client.base-url URL
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.harnesses.null import NullHarnessConfig

from codegym.envs.registration import ENV_IDS, register_envs
from codegym.rollout.records import jsonable
from codegym.tasks.suite import load_suite

__all__ = ["TASKSET_ID", "CodegymData", "CodegymTask", "CodegymConfig", "CodegymTaskset", "CodegymEnvConfig",
           "CodegymEnv", "load_environment"]

#: the taskset id verifiers resolves to the ``codegym_verifiers`` module
TASKSET_ID = "codegym-verifiers"


class CodegymData(vf.TaskData):
    """One codegym episode: the env, the task, the seed and the env options."""

    env_id: str
    task_id: str
    seed: int = 0
    options: dict[str, Any] = Field(default_factory=dict)


def _outcome(trace: vf.Trace) -> dict[str, Any]:
    out = trace.info.get("codegym")
    if out is None:
        raise ValueError("the trace has no codegym outcome (the episode did not run)")
    return out


class CodegymTask(vf.Task[CodegymData]):
    """A codegym task; its rubric is the env's reward and the judge's components."""

    @property
    def key(self) -> str:
        return f"{self.data.env_id}:{self.data.task_id}:{self.data.seed}"

    @vf.reward(weight=1.0)
    async def codegym_reward(self, trace: vf.Trace) -> float:
        """The codegym env's final reward (its reward stack: pass fraction, staged, timed...)."""
        return float(_outcome(trace)["reward"])

    @vf.metric
    async def pass_fraction(self, trace: vf.Trace) -> float:
        return float(_outcome(trace)["reward_components"].get("pass_fraction", 0.0))

    @vf.metric
    async def correct(self, trace: vf.Trace) -> float:
        return 1.0 if _outcome(trace)["verdict"] == "accepted" else 0.0

    @vf.metric
    async def turns(self, trace: vf.Trace) -> float:
        return float(len(_outcome(trace)["steps"]))


class CodegymConfig(vf.TasksetConfig):
    """Which codegym tasks load (``--env.taskset.*``)."""

    env_id: str = "codegym/LCB-v0"
    """A registered codegym id (``codegym/Suite-v0`` needs ``suite``)."""
    suite: str | None = None
    """Suite name or path (default: the id's own suite)."""
    tasks: list[str] = Field(default_factory=list)
    """Task ids to load (default: every task of the suite)."""
    seed: int = 0
    """The reset seed of every episode."""
    max_turns: int | None = None
    """Env turns per episode (default: the id's)."""
    reward: Any = None
    """The env's reward (``gym.make(..., reward=...)``; default: the suite's)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Other ``gym.make`` options (``feedback``, ``formats``, ``language``, ``sandbox``...)."""

    def env_options(self) -> dict[str, Any]:
        opts = dict(self.options)
        for key in ("suite", "max_turns", "reward"):
            if getattr(self, key) is not None:
                opts[key] = getattr(self, key)
        return opts


def _make(env_id: str, options: dict[str, Any]) -> gym.Env:
    register_envs()
    return gym.make(env_id, **options)


class CodegymTaskset(vf.Taskset[CodegymTask, CodegymConfig]):
    """Every task of a codegym env as a verifiers task (prompt: the env's first observation)."""

    def load(self) -> Iterator[CodegymTask]:
        cfg = self.config
        if cfg.env_id not in ENV_IDS:
            raise ValueError(f"unknown codegym env {cfg.env_id!r}; registered: {list(ENV_IDS)}")
        options = cfg.env_options()
        suite = options.get("suite") or ENV_IDS[cfg.env_id].get("suite")
        if suite is None:
            raise ValueError(f"{cfg.env_id} needs a suite (--env.taskset.suite NAME)")
        ids = list(cfg.tasks) or load_suite(suite).ids
        env = _make(cfg.env_id, options)
        try:
            for task_id in ids:
                observation, _ = env.reset(seed=cfg.seed, options={"task_id": task_id})
                yield CodegymTask(CodegymData(id=task_id, name=task_id, prompt=observation, env_id=cfg.env_id,
                                              task_id=task_id, seed=cfg.seed, options=jsonable(options)),
                                  cfg.task)
        finally:
            env.close()


class CodegymEnvConfig(vf.EnvConfig):
    """The one seat: verifiers' ``null`` chat harness in the local subprocess runtime by default."""

    agent: vf.AgentConfig = vf.AgentConfig(harness=NullHarnessConfig(id="null"), runtime=vf.SubprocessConfig())


class CodegymEnv(vf.Env[CodegymEnvConfig]):
    """A codegym episode played host-side: the model's replies are the actions (see the module docstring)."""

    async def run(self, task: CodegymTask, agents: vf.Agents) -> None:
        data = task.data
        env = await asyncio.to_thread(_make, data.env_id, dict(data.options))
        try:
            observation, info = await asyncio.to_thread(env.reset, seed=data.seed,
                                                        options={"task_id": data.task_id})
            if observation != data.prompt_text:
                raise RuntimeError(f"{data.task_id}: the env's first observation differs from the task's prompt "
                                   "(the task changed since the taskset loaded?)")
            async with agents.agent.interaction(task) as interaction:
                steps: list[dict[str, Any]] = []
                segment = await interaction.turn()  # the prompt is the first observation
                done, last = False, info
                while not segment.terminated:
                    observation, reward, terminated, truncated, last = await asyncio.to_thread(
                        env.step, segment.last_reply)
                    steps.append({"reward": float(reward), "error": last.get("error"),
                                  "verdict": (last.get("judge") or {}).get("verdict")})
                    done = terminated or truncated
                    if done:
                        break
                    segment = await interaction.turn(observation)
                if not done:  # the conversation ended first: judge what the model left
                    observation, reward, _, _, last = await asyncio.to_thread(env.step, "submit")
                    steps.append({"reward": float(reward), "error": None, "forced_submit": True,
                                  "verdict": (last.get("judge") or {}).get("verdict")})
                judge = last.get("judge") or {}
                interaction.trace.info["codegym"] = jsonable({
                    "env_id": data.env_id, "task_id": data.task_id, "reward": steps[-1]["reward"],
                    "verdict": judge.get("verdict"), "reward_components": last.get("reward_components") or {},
                    "judge": judge, "steps": steps, "final_observation": observation})
        finally:
            await asyncio.to_thread(env.close)


def load_environment(env_id: str = "codegym/LCB-v0", **taskset: Any) -> vf.Env:
    """The ``vf.Env`` of a codegym env id (`taskset`: `CodegymConfig` fields), through verifiers'
    own loader (``vf.resolve_env_config`` + ``vf.load_environment``)."""
    config = vf.resolve_env_config({"taskset": {"id": TASKSET_ID, "env_id": env_id, **taskset}})
    return vf.load_environment(config)
