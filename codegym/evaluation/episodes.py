"""The episode phase of an eval: one planned episode played into its result record.

`make_eval_agent` builds an agent from a config entry; `EpisodeWorker` holds one
thread's envs and agents; `play_episode` plays an `EpisodeSpec` under the episode's
time budget and returns its record (``kind: "episode"``; the fields are listed in
docs/eval.md), with the ``perf`` block of `codegym.evaluation.speed` when timing is on.
Every episode starts from a freshly reset agent, so the order episodes run in does
not change their results (which is what makes resuming exact).
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from codegym.agents import BaselineAgent, MutantAgent, OracleAgent, ReplayAgent, make_agent
from codegym.agents.llm import LLMAgent
from codegym.agents.llm_spec import parse_spec
from codegym.agents.scaffold import make_scaffold_agent
from codegym.envs import register_envs
from codegym.evaluation.config import AgentEntry, EpisodeSpec, EvalConfig
from codegym.evaluation.speed import score_perf
from codegym.rollout.runner import run_episode, sum_usage
from codegym.tasks.schema import Task
from codegym.wrappers.config import apply_reward_wrappers


def make_eval_agent(entry: AgentEntry, cfg: EvalConfig):
    """The agent of a config entry (a `make_agent` spec, or the class with `options`)."""
    kind, _, arg = entry.spec.partition(":")
    opts = dict(entry.options)
    if kind == "replay":
        return ReplayAgent(cfg.resolve(opts.pop("path", None) or arg))
    # an LLM's or a scaffold's key goes only to an endpoint the user configured for it
    # (codegym.core.keys); elsewhere the agent runs without one
    if kind == "scaffold":
        return make_scaffold_agent(arg, **{**opts, "api_key_env": cfg.agent_key_env(entry)})
    if kind == "llm":
        kw = opts or (parse_spec(arg) if arg else {})
        return LLMAgent(**{**kw, "api_key_env": cfg.agent_key_env(entry)})
    if not opts:
        return make_agent(entry.spec, seed=cfg.seed)
    if kind == "oracle":
        return OracleAgent(**({"format": arg} if arg else {}), **opts)
    if kind == "baseline":
        return BaselineAgent(**opts)
    if kind == "mutant":
        opts.setdefault("seed", cfg.seed)
        if arg:
            opts["kinds"] = arg.split(",")
        return MutantAgent(**opts)
    raise ValueError(f"unknown agent {entry.spec!r}")  # checked by the config


class _Budgeted:
    """Wraps an agent for one episode: enforces the episode's wall-clock budget (when it
    is spent, the next action is ``submit``), times the agent, and keeps each turn's
    usage / finish reason (`last_turn` of LLM agents)."""

    def __init__(self, agent: Any, time_s: float | None):
        self.agent = agent
        self.time_s = time_s
        self.name = getattr(agent, "name", type(agent).__name__)
        self.turns: list[dict[str, Any] | None] = []
        self.exceeded = False
        self.agent_s = 0.0
        self._t0 = time.monotonic()

    @property
    def last_mutation(self):
        return getattr(self.agent, "last_mutation", None)

    def reset(self, task: Task | None = None, seed: int | None = None) -> None:
        self.agent.reset(task=task, seed=seed)
        self._t0 = time.monotonic()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self.time_s is not None and time.monotonic() - self._t0 >= self.time_s:
            self.exceeded = True
            self.turns.append(None)
            return "submit"
        t = time.monotonic()
        action = self.agent.act(observation, info)
        self.agent_s += time.monotonic() - t
        lt = getattr(self.agent, "last_turn", None)
        self.turns.append({"usage": lt.get("usage"), "finish_reason": lt.get("finish_reason")}
                          if isinstance(lt, Mapping) else None)
        return action


class EpisodeWorker:
    """Per-thread state: one env per suite entry and one agent per agent entry."""

    def __init__(self, cfg: EvalConfig):
        self.cfg = cfg
        self.envs: dict[int, Any] = {}
        self.agents: dict[str, Any] = {}
        self.entries = {a.label: a for a in cfg.agents}
        self.task_by_id: dict[int, dict[str, Any]] = {}

    def task(self, i: int, task_id: str):
        if i not in self.task_by_id:
            self.task_by_id[i] = {t.id: t for t in self.cfg.tasks(i)}
        return self.task_by_id[i][task_id]

    def env(self, i: int):
        if i not in self.envs:
            register_envs()
            cfg, e = self.cfg, self.cfg.suites[i]
            kw: dict[str, Any] = dict(tasks=cfg.tasks(i), max_turns=cfg.max_turns, feedback=cfg.feedback,
                                      auto_submit=cfg.auto_submit, reward=cfg.reward_mode,
                                      early_exit=cfg.early_exit)
            if cfg.formats:
                kw["formats"] = cfg.formats
            if cfg.sandbox:
                kw["sandbox"] = cfg.sandbox
            if e.language:
                kw["language"] = e.language
            kw.update(e.env_kwargs)
            env = gym.make(cfg.env_id(i), **kw)
            if cfg.reward:
                env = apply_reward_wrappers(env, cfg.reward, cfg.source or "<config>")
            self.envs[i] = env
        return self.envs[i]

    def agent(self, spec: EpisodeSpec, task: Task):
        entry = self.entries[spec.agent]
        if entry.spec.startswith("replay"):
            # a replay agent hands out a task's recorded episodes in order: sample s plays the
            # s-th one, whatever ran before (fresh agent, the first s episodes skipped)
            agent = make_eval_agent(entry, self.cfg)
            for _ in range(spec.sample):
                agent.reset(task=task, seed=None)
            return agent
        if spec.agent not in self.agents:
            self.agents[spec.agent] = make_eval_agent(entry, self.cfg)
        return self.agents[spec.agent]

    def close(self) -> None:
        for env in self.envs.values():
            try:
                env.close()
            except Exception:  # noqa: BLE001 -- closing is best effort
                pass


def _error_kind(error: str | None) -> str | None:
    if not error:
        return None
    return "apply" if error.startswith("the edit was not applied") else "parse"


def _step_records(cfg: EvalConfig, rec: Mapping[str, Any], turns: list) -> list[dict[str, Any]]:
    steps = []
    for st, turn in zip(rec["steps"], turns + [None] * len(rec["steps"])):
        s = {"action": st["action"], "reward": st["reward"], "diff": st.get("diff") or "",
             "formats": list((st.get("edits") or {}).get("formats") or []), "error": st.get("error"),
             "error_kind": _error_kind(st.get("error")), "submitted": bool(st.get("submitted")),
             "reward_components": st.get("reward_components")}
        if turn:
            s.update(turn)
        if cfg.keep_observations:
            s["observation"] = st.get("observation")
        steps.append(s)
    return steps


def play_episode(cfg: EvalConfig, spec: EpisodeSpec, worker: EpisodeWorker) -> dict[str, Any]:
    """Play one planned episode; returns its record (see docs/eval.md)."""
    env = worker.env(spec.suite_index)
    base = env.unwrapped
    task = worker.task(spec.suite_index, spec.task_id)
    agent = _Budgeted(worker.agent(spec, task), cfg.episode_time_s)
    t0 = time.perf_counter()
    rec = run_episode(env, agent, seed=spec.seed, options={"task_id": spec.task_id},
                      keep_observations=cfg.keep_observations)
    submitted = any(st.get("submitted") for st in rec["steps"])
    verdict = rec["verdict"] if submitted else "no_submission"
    out: dict[str, Any] = {
        "kind": "episode", "key": spec.key, "agent": spec.agent,
        "agent_spec": worker.entries[spec.agent].spec, "suite": spec.suite, "env_id": spec.env_id,
        "task_id": spec.task_id, "task_hash": rec.get("task_hash") or spec.task_hash,
        "family": spec.task_id.split("/", 1)[0], "difficulty": task.metadata.difficulty,
        "task_kind": task.kind, "sample": spec.sample, "seed": spec.seed, "language": rec.get("language"),
        "verdict": verdict, "correct": verdict == "accepted", "passed": rec.get("passed"),
        "total": rec.get("total"), "return": rec["return"], "final_reward": rec["final_reward"],
        "turns": rec["turns"], "max_turns": cfg.max_turns, "submitted": submitted,
        "truncated": rec["truncated"], "budget_exceeded": agent.exceeded,
        "final_diff": rec.get("cumulative_diff") or "",
        "final_files": dict(base.workspace.files) if base.workspace is not None else {},
        "mutation": rec.get("mutation"), "reward_details": rec.get("reward_details"),
        "usage": sum_usage(agent.turns),
        "steps": _step_records(cfg, rec, agent.turns), "perf": None,
    }
    if cfg.keep_observations:
        out["final_observation"] = rec.get("final_observation")
    if cfg.timing_on and out["correct"] and task.kind in ("stdio", "function"):
        out["perf"] = score_perf(env, task, cfg, spec.seed)
    summary = getattr(agent.agent, "scaffold_summary", None)  # scaffold agents: turns, tokens, time
    out["scaffold"] = summary() if callable(summary) else None
    out["agent_s"] = agent.agent_s
    out["episode_s"] = time.perf_counter() - t0
    out["finished_at"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    return out
