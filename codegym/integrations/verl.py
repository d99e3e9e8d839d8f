"""verl adapter: parquet datasets, a ``compute_score`` for code, and a multi-turn agent loop.

Targets verl's RLHFDataset and agent-loop interfaces (verl >= 0.5, token in / token
out). `dataset_rows` / `write_dataset` write one row per task (the env's first
observation as the prompt; what `compute_score` needs to find the task again in
``reward_model.ground_truth``); `compute_score` returns the reward the agent loop
already computed (multi-turn) or plays a one-turn episode with the response
(single-turn); `CodegymAgentLoop` (built on first access: it subclasses verl's
class) plays a whole episode per row with `run_episode_tokens`. verl and pyarrow
are imported when first needed. docs/rollout.md has the row schema and a config.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any
from uuid import uuid4

import gymnasium as gym

from codegym.envs.episode import REWARD_COMPONENTS
from codegym.envs.registration import register_envs
from codegym.integrations.agent import TokenAgent
from codegym.rollout.episode import play_episode
from codegym.rollout.export import TokenSequence, flatten_trajectory
from codegym.rollout.jobs import EpisodeJob, episode_seed
from codegym.rollout.records import Trajectory
from codegym.tasks.schema import Task
from codegym.tasks.suite import load_suite

__all__ = ["dataset_rows", "write_parquet", "read_parquet", "write_dataset", "compute_score",
           "run_episode_tokens", "agent_loop_output_fields", "agent_loop_class", "AGENT_NAME",
           "REWARD_KEY"]

#: name under which `CodegymAgentLoop` registers with verl (the dataset's ``agent_name``)
AGENT_NAME = "codegym_agent"
#: key of the env's final reward in ``extra_fields["reward_scores"]``
REWARD_KEY = "codegym_reward"
COMPONENTS = REWARD_COMPONENTS
DEFAULT_ENV_ID = "codegym/Suite-v0"


# --------------------------------------------------------------------------- dataset


def _make_env(env_id: str, env_kwargs: dict[str, Any]) -> Any:
    register_envs()
    return gym.make(env_id, **env_kwargs)


def dataset_rows(suite: str | None = None, env_id: str = DEFAULT_ENV_ID, tasks: Sequence[str] | None = None,
                 split: str = "train", multi_turn: bool = False, max_turns: int | None = None,
                 env_kwargs: dict[str, Any] | None = None, system_prompt: str | None = None,
                 data_source: str | None = None) -> list[dict[str, Any]]:
    """Rows of a verl RLHFDataset for the env's tasks (docs/rollout.md).

    Args:
        suite: suite name or path (``env_kwargs["suite"]``); optional for ids with a default suite.
        env_id: Gymnasium id.
        tasks: task ids to include (default all, in suite order).
        split: ``extra_info["split"]`` (``train``/``test``).
        multi_turn: rows for `CodegymAgentLoop` (``agent_name`` column); else single-turn
            rows whose prompt announces one turn, judged by `compute_score`.
        max_turns: turns per episode (default 1 single-turn, the env's default multi-turn).
        env_kwargs: JSON-able ``gym.make`` keyword arguments (stored with the rows, so
            the reward side rebuilds the same env).
        system_prompt: optional system message.
        data_source: default ``"codegym/<suite>"``.
    """
    kw = dict(env_kwargs or {})
    if suite is not None:
        kw["suite"] = str(suite)
    if not multi_turn:
        kw["max_turns"] = 1
    elif max_turns is not None:
        kw["max_turns"] = int(max_turns)
    json.dumps(kw)  # the kwargs travel inside the dataset: they must be JSON
    env = _make_env(env_id, kw)
    try:
        base = env.unwrapped
        suite_label = str(kw.get("suite") or getattr(base, "suite_name", None) or env_id.split("/")[-1])
        source = data_source or f"codegym/{suite_label}"
        chosen = list(base.tasks)
        if tasks is not None:
            by_id = {t.id: t for t in chosen}
            missing = [t for t in tasks if t not in by_id]
            if missing:
                raise KeyError(f"unknown tasks {missing}")
            chosen = [by_id[t] for t in tasks]
        rows = []
        for index, task in enumerate(chosen):
            obs, info = env.reset(seed=index, options={"task_id": task.id})
            messages = ([{"role": "system", "content": system_prompt}] if system_prompt else [])
            messages.append({"role": "user", "content": obs})
            gt = {"task_id": task.id, "task_hash": task.content_hash, "suite": kw.get("suite"),
                  "env_id": env_id, "env_kwargs": kw}
            row = {
                "data_source": source,
                "prompt": messages,
                "ability": "code",
                "reward_model": {"style": "rule", "ground_truth": json.dumps(gt, sort_keys=True)},
                "extra_info": {
                    "split": split, "index": index, "task_id": task.id, "task_hash": task.content_hash,
                    "suite": suite_label, "env_id": env_id, "env_kwargs": json.dumps(kw, sort_keys=True),
                    "max_turns": int(base.max_turns), "language": str(info.get("language") or ""),
                    "multi_turn": bool(multi_turn),
                },
            }
            if multi_turn:
                row["agent_name"] = AGENT_NAME
            rows.append(row)
        return rows
    finally:
        env.close()


def write_parquet(rows: Sequence[dict[str, Any]], path: Any) -> int:
    """Write dataset rows to a parquet file (pyarrow); returns the row count."""
    import pyarrow as pa  # noqa: PLC0415  (optional dependency)
    import pyarrow.parquet as pq  # noqa: PLC0415

    table = pa.Table.from_pylist(list(rows))
    pq.write_table(table, str(path))
    return table.num_rows


def read_parquet(path: Any) -> list[dict[str, Any]]:
    """Rows of a parquet file as Python dicts (what verl's dataset sees, before tokenising)."""
    import pyarrow.parquet as pq  # noqa: PLC0415  (optional dependency)

    return pq.read_table(str(path)).to_pylist()


def write_dataset(path: Any, **kwargs: Any) -> int:
    """`dataset_rows(**kwargs)` written to `path`; returns the row count."""
    return write_parquet(dataset_rows(**kwargs), path)


# --------------------------------------------------------------------------- reward


_local = threading.local()   # one judging env per thread (verl scores from a thread pool)
_task_cache: dict[tuple[str, str], Any] = {}
_task_lock = threading.Lock()


def _as_dict(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return {}
        try:
            parsed = json.loads(value)
        except ValueError:
            return {"task_id": value}  # a bare task id
        return parsed if isinstance(parsed, dict) else {"task_id": str(parsed)}
    return dict(value)


def _find_task(task_id: str, task_hash: str | None, suite: str | None, env_id: str,
               env_kwargs: dict[str, Any]) -> Any:
    key = (str(suite or env_id), task_id)
    with _task_lock:
        task = _task_cache.get(key)
        if task is None:
            if suite is not None:
                task = load_suite(suite).get(task_id)
            else:
                env = _make_env(env_id, {k: v for k, v in env_kwargs.items() if k != "max_turns"})
                try:
                    task = {t.id: t for t in env.unwrapped.tasks}.get(task_id)
                finally:
                    env.close()
            if task is None:
                raise KeyError(f"task {task_id!r} not found in {suite or env_id}")
            _task_cache[key] = task
    if task_hash and task.content_hash != task_hash:
        raise ValueError(f"task {task_id} changed since the dataset was written (hash {task.content_hash[:12]} "
                         f"!= {task_hash[:12]}); rewrite the dataset")
    return task


def _judging_env(task: Task, env_id: str, env_kwargs: dict[str, Any]) -> Any:
    # one-turn env over just this task; cached per thread and task
    cache = getattr(_local, "envs", None)
    if cache is None:
        cache = _local.envs = {}
    key = (task.id, task.content_hash, json.dumps(env_kwargs, sort_keys=True, default=str))
    env = cache.get(key)
    if env is None:
        kw = {k: v for k, v in env_kwargs.items() if k not in ("suite", "max_turns", "task_id")}
        env = _make_env(env_id, {**kw, "tasks": [task], "max_turns": 1})
        cache[key] = env
    return env


def _score_dict(score: float, comps: dict[str, Any]) -> dict[str, float]:
    out = {"score": float(score)}
    for c in COMPONENTS:
        out[c] = float(comps.get(c, 0.0) or 0.0)
    return out


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, float]:
    """verl reward function: the codegym reward of a response (docs/rollout.md).

    Keyword options (verl's ``custom_reward_function.reward_kwargs``): ``reward``
    = ``"env"`` (default: the env's reward, pass fraction unless the dataset's
    env_kwargs say ``reward: binary``) or a component name."""
    info = _as_dict(extra_info)
    which = kwargs.get("reward", "env")
    # multi-turn: the agent loop already played and judged the episode
    for scores in (info.get("rollout_reward_scores"), info.get("codegym"),
                   (info.get("tool_extra_fields") or {}).get("reward_scores")
                   if isinstance(info.get("tool_extra_fields"), dict) else None):
        if isinstance(scores, dict) and REWARD_KEY in scores:
            value = scores[REWARD_KEY] if which == "env" else scores.get(which, 0.0)
            return _score_dict(value, scores)
    gt = _as_dict(ground_truth)
    task_id = gt.get("task_id") or info.get("task_id")
    if not task_id:
        raise ValueError("compute_score: ground_truth/extra_info name no codegym task_id")
    env_kwargs = gt.get("env_kwargs") or _as_dict(info.get("env_kwargs"))
    env_id = gt.get("env_id") or info.get("env_id") or DEFAULT_ENV_ID
    task = _find_task(task_id, gt.get("task_hash") or info.get("task_hash"),
                      gt.get("suite") or env_kwargs.get("suite"), env_id, env_kwargs)
    env = _judging_env(task, env_id, env_kwargs)
    env.reset(options={"task_id": task.id})
    _, reward, _, _, step_info = env.step(solution_str or "")
    comps = step_info.get("reward_components") or {}
    value = reward if which == "env" else comps.get(which, 0.0)
    return _score_dict(value, comps)


# --------------------------------------------------------------------------- agent loop core


def run_episode_tokens(generate: Callable[[list[int], int], tuple[list[int], list[float] | None]],
                       tokenizer: Any, messages: Sequence[dict[str, Any]], extra_info: dict[str, Any],
                       max_new_tokens: int, response_length: int, env: Any = None,
                       sample_index: int = 0, group_id: str | None = None,
                       chat_template_kwargs: dict[str, Any] | None = None) -> tuple[Trajectory, TokenSequence]:
    """Play the episode of a dataset row with a token policy (what `CodegymAgentLoop.run` does,
    without verl): returns the trajectory and its flattened token sequence.

    `extra_info`: the row's ``extra_info`` (task id, env id and kwargs);
    `response_length`: verl's ``rollout.response_length`` (sampled + feedback tokens)."""

    info = _as_dict(extra_info)
    task_id = info["task_id"]
    env_id = info.get("env_id") or DEFAULT_ENV_ID
    own = env is None
    if own:
        env = _make_env(env_id, _as_dict(info.get("env_kwargs")))
    try:
        agent = TokenAgent(generate, tokenizer, max_new_tokens=max_new_tokens,
                           max_completion_tokens=response_length, messages=messages,
                           chat_template_kwargs=chat_template_kwargs)
        gid = group_id or f"{task_id}:verl:{info.get('index', 0)}"
        job = EpisodeJob(task_id=task_id, seed=episode_seed(gid, sample_index), group_id=gid,
                         sample_index=sample_index, task_hash=info.get("task_hash") or None)
        traj = play_episode(env, agent, job, env_id=env_id)
    finally:
        if own:
            env.close()
    return traj, flatten_trajectory(traj)


def agent_loop_output_fields(traj: Trajectory, seq: TokenSequence, response_length: int) -> dict[str, Any]:
    """Keyword arguments of verl's ``AgentLoopOutput`` for an episode (cut to `response_length`)."""
    n = int(response_length)
    comps = {k: float(v) for k, v in (traj.reward_components or {}).items() if isinstance(v, (int, float))}
    scores = {REWARD_KEY: float(traj.final_reward), **comps}
    return {
        "prompt_ids": list(seq.prompt_ids),
        "response_ids": list(seq.response_ids[:n]),
        "response_mask": list(seq.response_mask[:n]),
        "response_logprobs": list(seq.logprobs[:n]) if seq.has_logprobs else None,
        "reward_score": float(traj.final_reward),
        # messages, as verl counts them: the prompt, each reply, the feedback between replies
        "num_turns": 2 * sum(1 for s in traj.steps if s.response_ids),
        "extra_fields": {
            "reward_scores": scores,
            "codegym": {**scores, "verdict": traj.verdict, "task_id": traj.task_id,
                        "episode": traj.episode_key, "turns": traj.num_turns},
        },
    }


_AGENT_LOOP_CLASS: Any = None
#: samples started per group (verl ``uid``) in this process, for `Trajectory.sample_index`
_SAMPLE_COUNTS: dict[str, int] = {}


def agent_loop_class() -> type:
    """Build (once) and return `CodegymAgentLoop`, registered with verl as ``codegym_agent``.

    Needs verl. Use it from verl's agent-loop config (``agent_loop_config_path``):

        - name: codegym_agent
          _target_: codegym.integrations.verl.CodegymAgentLoop
          max_new_tokens: 1024     # per turn (default: rollout.response_length)
    """
    global _AGENT_LOOP_CLASS
    if _AGENT_LOOP_CLASS is not None:
        return _AGENT_LOOP_CLASS
    try:
        from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register  # noqa: PLC0415  (optional dependency)
    except ImportError as e:
        raise ImportError("CodegymAgentLoop needs verl (pip install verl); the dataset writer and "
                          "compute_score do not") from e
    try:
        from verl.experimental.agent_loop.agent_loop import AgentLoopMetrics  # noqa: PLC0415
    except ImportError:  # older verl: metrics are a plain dict
        AgentLoopMetrics = None  # noqa: N806

    class CodegymAgentLoop(AgentLoopBase):
        """verl agent loop that plays a codegym episode per dataset row (token in, token out)."""

        def __init__(self, *args: Any, max_new_tokens: int | None = None, **kwargs: Any):
            super().__init__(*args, **kwargs)
            rollout = self.config.actor_rollout_ref.rollout
            self.response_length = int(rollout.response_length)
            self.max_new_tokens = int(max_new_tokens or self.response_length)
            data = getattr(self.config, "data", None)
            self.chat_template_kwargs = dict(data.get("apply_chat_template_kwargs", {}) or {}) if data else {}

        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
            loop = asyncio.get_running_loop()
            request_id = uuid4().hex
            messages = list(kwargs["raw_prompt"])
            extra_info = dict(kwargs.get("extra_info") or {})

            async def agenerate(prompt_ids: list[int], max_new: int) -> tuple[list[int], list[float] | None]:
                params = {**sampling_params, "max_tokens": int(max_new)}
                out = await self.server_manager.generate(request_id=request_id, prompt_ids=prompt_ids,
                                                         sampling_params=params)
                ids = getattr(out, "token_ids", out)  # TokenOutput, or a bare id list (older verl)
                lps = getattr(out, "log_probs", None)
                return list(ids), (list(lps) if lps else None)

            def generate(prompt_ids: list[int], max_new: int) -> tuple[list[int], list[float] | None]:
                # called from the worker thread that plays the episode; the event loop samples
                return asyncio.run_coroutine_threadsafe(agenerate(prompt_ids, max_new), loop).result()

            # verl repeats a row n times with one ``uid`` (its GRPO group); number the samples
            group = str(kwargs.get("uid") or "") or None
            counter_key = group or f"{extra_info.get('task_id')}:{extra_info.get('index')}"
            sample_index = _SAMPLE_COUNTS.get(counter_key, 0)
            _SAMPLE_COUNTS[counter_key] = sample_index + 1
            if len(_SAMPLE_COUNTS) > 100_000:  # uids are per step: forget old ones
                _SAMPLE_COUNTS.clear()
            traj, seq = await loop.run_in_executor(None, lambda: run_episode_tokens(
                generate, self.tokenizer, messages, extra_info, self.max_new_tokens, self.response_length,
                sample_index=sample_index, group_id=group, chat_template_kwargs=self.chat_template_kwargs))
            fields = agent_loop_output_fields(traj, seq, self.response_length)
            fields["metrics"] = AgentLoopMetrics() if AgentLoopMetrics is not None else {}
            return AgentLoopOutput(**fields)

    # a module-level name, so verl's registry (and hydra) can import it by path
    CodegymAgentLoop.__module__ = __name__
    CodegymAgentLoop.__qualname__ = "CodegymAgentLoop"
    register(AGENT_NAME)(CodegymAgentLoop)
    _AGENT_LOOP_CLASS = CodegymAgentLoop
    return CodegymAgentLoop


def __getattr__(name: str) -> Any:
    # hydra's `_target_: codegym.integrations.verl.CodegymAgentLoop` resolves through here
    if name == "CodegymAgentLoop":
        return agent_loop_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
