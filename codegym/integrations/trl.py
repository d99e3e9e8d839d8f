"""TRL adapter: a ``rollout_func`` that plays codegym episodes, and a codegym reward function.

Targets TRL 1.x: ``GRPOTrainer(..., rollout_func=...)`` calls ``rollout_func(prompts,
trainer)`` and expects one completion per prompt (``prompt_ids``, ``completion_ids``,
``logprobs``, ``env_mask``, and extra keys passed to the reward functions).
`CodegymRollout` plays one episode per prompt with a `TokenAgent` sampling from the
trainer's model and concatenates the turns without re-tokenising; `codegym_reward`
returns the env's reward (or judges a completion as a one-turn episode). torch,
transformers and datasets are imported when first needed. docs/rollout.md shows a run.

    rollout = CodegymRollout(suite="examples", max_turns=2, max_new_tokens=256)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=GRPOConfig(...),
                          train_dataset=rollout.dataset(), reward_funcs=[codegym_reward],
                          rollout_func=rollout)
"""

from __future__ import annotations

import copy
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium as gym

from codegym.envs.episode import REWARD_COMPONENTS
from codegym.envs.registration import register_envs
from codegym.integrations.agent import ChatTokens, GenerateFn, TokenAgent
from codegym.rollout.episode import play_episode
from codegym.rollout.export import flatten_trajectory
from codegym.rollout.jobs import EpisodeJob, episode_seed
from codegym.rollout.records import Trajectory

__all__ = ["CodegymRollout", "CodegymReward", "codegym_reward", "hf_generate", "prompt_messages"]

#: reward components every codegym env reports (``info["reward_components"]``)
COMPONENTS = REWARD_COMPONENTS


def prompt_messages(prompt: Any) -> list[dict[str, Any]]:
    """A TRL prompt (string or list of chat messages) as chat messages."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(m) for m in prompt]


def _prompt_key(prompt: Any) -> str:
    # the last user message is the env's first observation (the system prompt may vary)
    msgs = prompt_messages(prompt)
    for m in reversed(msgs):
        if m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, list):  # typed content blocks
                return "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
            return str(content)
    return str(msgs[-1].get("content")) if msgs else ""


def hf_generate(model: Any, tokenizer: Any, generation_config: Any = None, temperature: float = 1.0,
                top_p: float = 1.0, top_k: int | None = 0, min_p: float | None = None,
                repetition_penalty: float = 1.0) -> GenerateFn:
    """A ``generate(context_ids, max_new_tokens) -> (ids, logprobs)`` over a ``transformers`` model.

    Samples one sequence at a time (episodes take turns at different lengths) with
    `generation_config` (e.g. the trainer's) or the given sampling parameters;
    log-probs are taken from the scores after the logits processors (temperature,
    top-k/p), i.e. of the distribution that was sampled."""
    import torch  # noqa: PLC0415  (optional heavy dependency)
    from transformers import GenerationConfig  # noqa: PLC0415

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if generation_config is None:
        generation_config = GenerationConfig(
            do_sample=True, temperature=temperature, top_p=top_p, top_k=top_k or 0, min_p=min_p,
            repetition_penalty=repetition_penalty, pad_token_id=pad, eos_token_id=tokenizer.eos_token_id)
    eos = generation_config.eos_token_id
    eos_ids = set(eos if isinstance(eos, (list, tuple)) else [eos]) - {None}

    # episodes may run in worker threads (CodegymRollout(num_workers=...)): they overlap
    # their judging, but sampling (and the train/eval switch) happens one at a time
    lock = threading.Lock()

    def generate(context_ids: list[int], max_new_tokens: int) -> tuple[list[int], list[float]]:
        with lock:
            return _generate(context_ids, max_new_tokens)

    def _generate(context_ids: list[int], max_new_tokens: int) -> tuple[list[int], list[float]]:
        was_training = model.training
        model.eval()
        try:
            with torch.inference_mode():
                device = next(model.parameters()).device
                input_ids = torch.tensor([context_ids], dtype=torch.long, device=device)
                config = copy.deepcopy(generation_config)
                config.max_new_tokens = int(max_new_tokens)
                config.return_dict_in_generate = True
                config.output_scores = True
                # trainers turn the KV cache off for gradient checkpointing; sampling needs it
                config.use_cache = True
                out = model.generate(input_ids, attention_mask=torch.ones_like(input_ids), generation_config=config)
                new = out.sequences[0, input_ids.shape[1]:].tolist()
                lps = [float(torch.log_softmax(out.scores[t][0].float(), dim=-1)[tok])
                       for t, tok in enumerate(new)]
        finally:
            if was_training:
                model.train()
        # generation stops after EOS; anything after it would be padding
        for i, tok in enumerate(new):
            if tok in eos_ids:
                new, lps = new[:i + 1], lps[:i + 1]
                break
        return new, lps

    return generate


def _trainer_generate(trainer: Any) -> GenerateFn:
    model = trainer.accelerator.unwrap_model(trainer.model)
    tok = getattr(trainer, "_tokenizer", None) or trainer.processing_class
    config = getattr(trainer, "generation_config", None)
    if config is not None:
        return hf_generate(model, tok, generation_config=config)
    return hf_generate(model, tok, temperature=getattr(trainer, "temperature", 1.0) or 1.0,
                       top_p=getattr(trainer, "top_p", 1.0) or 1.0, top_k=getattr(trainer, "top_k", 0),
                       min_p=getattr(trainer, "min_p", None),
                       repetition_penalty=getattr(trainer, "repetition_penalty", 1.0) or 1.0)


class CodegymRollout:
    """``rollout_func`` for ``trl.GRPOTrainer`` (docs/rollout.md).

    Args:
        env_id: Gymnasium id (default ``codegym/Suite-v0``).
        suite: suite name/path for Suite-v0 (or use `env_kwargs`).
        tasks: task ids to train on (default: every task of the env).
        env_kwargs: more ``gym.make`` keyword arguments (``max_turns``, ``reward`` ...).
        max_turns: turns per episode (1 = single-turn with the env's judging).
        max_new_tokens: sampled tokens per turn.
        max_completion_tokens: sampled + feedback tokens per episode (default: the
            trainer's ``max_completion_length``).
        reward: which number is ``codegym_reward``: ``"env"`` (the env's final reward),
            or a component name (``pass_fraction``, ``correct``, ``progress``).
        system_prompt: optional system message (also put in `dataset` prompts).
        generate: custom ``generate(context_ids, max_new_tokens)`` (e.g. a vLLM
            client); default: the trainer's model via `hf_generate`.
        chat_template_kwargs: for ``apply_chat_template``.
        keep: how many recent trajectories to keep in `trajectories` (None: all).
        num_workers: episodes played at once (threads, one env each): the sandbox judges
            one episode while another samples (`hf_generate` samples one at a time;
            a custom `generate` must be thread-safe).
    """

    __name__ = "codegym_rollout"

    def __init__(self, env_id: str = "codegym/Suite-v0", suite: str | None = None,
                 tasks: Sequence[str] | None = None, env_kwargs: dict[str, Any] | None = None,
                 max_turns: int = 2, max_new_tokens: int = 256, max_completion_tokens: int | None = None,
                 reward: str = "env", system_prompt: str | None = None, generate: GenerateFn | None = None,
                 chat_template_kwargs: dict[str, Any] | None = None, seed: int = 0, keep: int | None = None,
                 num_workers: int = 1):
        kw = dict(env_kwargs or {})
        if suite is not None:
            kw["suite"] = suite
        kw.setdefault("max_turns", max_turns)
        self.env_id = env_id
        self.env_kwargs = kw
        self.task_ids = list(tasks) if tasks is not None else None
        self.max_new_tokens = int(max_new_tokens)
        self.max_completion_tokens = max_completion_tokens
        if reward != "env" and reward not in COMPONENTS:
            raise ValueError(f"reward must be 'env' or one of {COMPONENTS}, not {reward!r}")
        self.reward = reward
        self.system_prompt = system_prompt
        self.generate = generate
        self.chat_template_kwargs = chat_template_kwargs
        self.seed = int(seed)
        self.keep = keep
        self.trajectories: list[Trajectory] = []
        self.calls = 0
        if num_workers < 1:
            raise ValueError("num_workers must be >= 1")
        self.num_workers = int(num_workers)
        self._env: gym.Env | None = None
        self._spare_envs: list[gym.Env] = []   # envs of worker threads beyond the first
        self._by_prompt: dict[str, str] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ env and prompts

    @property
    def env(self) -> gym.Env:
        if self._env is None:
            register_envs()
            self._env = gym.make(self.env_id, **self.env_kwargs)
        return self._env

    def tasks(self) -> list[Any]:
        base = self.env.unwrapped
        if self.task_ids is None:
            return list(base.tasks)
        by_id = {t.id: t for t in base.tasks}
        missing = [t for t in self.task_ids if t not in by_id]
        if missing:
            raise KeyError(f"unknown tasks {missing}")
        return [by_id[t] for t in self.task_ids]

    def first_observation(self, task_id: str) -> str:
        obs, _ = self.env.reset(seed=self.seed, options={"task_id": task_id})
        return obs

    def rows(self, repeat: int = 1) -> list[dict[str, Any]]:
        """Dataset rows: ``prompt`` (chat messages), ``task_id``, ``task_hash``."""
        rows = []
        for task in self.tasks():
            obs = self.first_observation(task.id)
            self._by_prompt[obs] = task.id
            msgs = ([{"role": "system", "content": self.system_prompt}] if self.system_prompt else [])
            msgs.append({"role": "user", "content": obs})
            rows.append({"prompt": msgs, "task_id": task.id, "task_hash": task.content_hash})
        return rows * int(repeat)

    def dataset(self, repeat: int = 1) -> Any:
        """A ``datasets.Dataset`` of `rows` for ``GRPOTrainer(train_dataset=...)``."""
        from datasets import Dataset  # noqa: PLC0415  (optional dependency)
        return Dataset.from_list(self.rows(repeat))

    def task_for_prompt(self, prompt: Any) -> str:
        key = _prompt_key(prompt)
        if key not in self._by_prompt:
            for task in self.tasks():  # prompts from elsewhere: index every task's first observation
                self._by_prompt.setdefault(self.first_observation(task.id), task.id)
        if key not in self._by_prompt:
            raise KeyError("the prompt is not the first observation of any task of this env; build the "
                           "dataset with CodegymRollout.dataset()")
        return self._by_prompt[key]

    # ------------------------------------------------------------------ rollout

    def play(self, prompt: Any, generate: GenerateFn, tokenizer: Any, group_id: str, sample_index: int,
             max_completion_tokens: int | None, env: gym.Env | None = None) -> Trajectory:
        """One episode of the prompt's task with a token policy; returns its trajectory."""
        task_id = self.task_for_prompt(prompt)
        env = env if env is not None else self.env
        agent = TokenAgent(generate, tokenizer, max_new_tokens=self.max_new_tokens,
                           max_completion_tokens=max_completion_tokens, messages=prompt_messages(prompt))
        job = EpisodeJob(task_id=task_id, seed=episode_seed(group_id, sample_index), group_id=group_id,
                         sample_index=sample_index)
        return play_episode(env, agent, job, env_id=self.env_id)

    def _reward_of(self, traj: Trajectory) -> float:
        if self.reward == "env":
            return float(traj.final_reward)
        return float((traj.reward_components or {}).get(self.reward, 0.0))

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        tok = getattr(trainer, "_tokenizer", None) or trainer.processing_class
        chat = ChatTokens(tok, self.chat_template_kwargs or getattr(trainer, "chat_template_kwargs", None))
        generate = self.generate or _trainer_generate(trainer)
        budget = self.max_completion_tokens or getattr(trainer, "max_completion_length", None)
        step = int(getattr(getattr(trainer, "state", None), "global_step", 0) or 0)
        with self._lock:  # one call at a time: the envs belong to this object
            self.calls += 1
            out: dict[str, list[Any]] = {k: [] for k in (
                "prompt_ids", "completion_ids", "logprobs", "env_mask", "codegym_reward",
                "codegym_pass_fraction", "codegym_correct", "codegym_progress", "codegym_verdict",
                "codegym_task_id", "codegym_num_turns", "codegym_episode")}
            # TRL repeats each prompt num_generations times in a row: equal consecutive
            # prompts are one GRPO group
            seen: dict[str, int] = {}
            prev_key, sample = None, 0
            jobs = []
            for prompt in prompts:
                key = _prompt_key(prompt)
                if key == prev_key:
                    sample += 1
                else:
                    seen[key] = seen.get(key, -1) + 1
                    prev_key, sample = key, 0
                task_id = self.task_for_prompt(prompt)
                jobs.append((prompt, f"{task_id}:trl{self.calls}.{step}:{seen[key]}", sample))
            trajs = self._play_all(jobs, generate, chat, budget)
            for traj in trajs:
                seq = flatten_trajectory(traj)
                comps = traj.reward_components or {}
                out["prompt_ids"].append(seq.prompt_ids)
                out["completion_ids"].append(seq.response_ids)
                out["logprobs"].append(seq.logprobs)
                out["env_mask"].append(seq.response_mask)
                out["codegym_reward"].append(self._reward_of(traj))
                for c in COMPONENTS:
                    out[f"codegym_{c}"].append(float(comps.get(c, 0.0)))
                out["codegym_verdict"].append(traj.verdict)
                out["codegym_task_id"].append(traj.task_id)
                out["codegym_num_turns"].append(traj.num_turns)
                out["codegym_episode"].append(traj.episode_key)
            self.trajectories.extend(trajs)
            if self.keep is not None and len(self.trajectories) > self.keep:
                del self.trajectories[: len(self.trajectories) - self.keep]
        return out

    def _play_all(self, jobs: list[tuple[Any, str, int]], generate: GenerateFn, chat: ChatTokens,
                  budget: int | None) -> list[Trajectory]:
        workers = min(self.num_workers, len(jobs))
        if workers <= 1:
            return [self.play(p, generate, chat, g, i, budget) for p, g, i in jobs]
        while len(self._spare_envs) < workers - 1:
            self._spare_envs.append(gym.make(self.env_id, **self.env_kwargs))
        free: queue.Queue = queue.Queue()
        for env in [self.env, *self._spare_envs[:workers - 1]]:
            free.put(env)

        def run(job: tuple[Any, str, int]) -> Trajectory:
            env = free.get()
            try:
                return self.play(job[0], generate, chat, job[1], job[2], budget, env=env)
            finally:
                free.put(env)

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="codegym-rollout") as pool:
            return list(pool.map(run, jobs))   # in prompt order

    def close(self) -> None:
        for env in [self._env, *self._spare_envs]:
            if env is not None:
                env.close()
        self._env = None
        self._spare_envs = []


class CodegymReward:
    """Reward function for ``GRPOTrainer(reward_funcs=[...])`` (docs/rollout.md).

    Args:
        reward: ``"env"`` or a component name, for completions it judges itself.
        env_id, env_kwargs: the env used to judge completions when no rollout
            produced ``codegym_reward`` (single-turn: ``max_turns`` is forced to 1).
        log_components: log the mean of each component through TRL's ``log_metric``.
    """

    def __init__(self, reward: str = "env", env_id: str = "codegym/Suite-v0",
                 env_kwargs: dict[str, Any] | None = None, log_components: bool = True,
                 name: str = "codegym_reward"):
        self.reward = reward
        self.env_id = env_id
        self.env_kwargs = dict(env_kwargs or {})
        self.log_components = log_components
        self.__name__ = name
        self.calls: list[list[float]] = []   # what recent calls returned (inspection, tests)
        self.keep_calls = 1000
        self._env: gym.Env | None = None

    def _judge(self, task_id: str, text: str) -> tuple[float, dict[str, float]]:
        if self._env is None:
            register_envs()
            kw = {**self.env_kwargs, "max_turns": 1}
            self._env = gym.make(self.env_id, **kw)
        self._env.reset(options={"task_id": task_id})
        _, reward, _, _, info = self._env.step(text)
        comps = {k: float(v) for k, v in (info.get("reward_components") or {}).items()}
        value = float(reward) if self.reward == "env" else comps.get(self.reward, 0.0)
        return value, comps

    def __call__(self, prompts: list[Any] | None = None, completions: list[Any] | None = None,
                 completion_ids: list[Any] | None = None, codegym_reward: list[float] | None = None,
                 log_metric: Callable[[str, float], None] | None = None, **kwargs: Any) -> list[float]:
        comps: dict[str, list[float]] = {}
        if codegym_reward is not None:
            rewards = [float(r) for r in codegym_reward]
            for c in COMPONENTS:
                if f"codegym_{c}" in kwargs:
                    comps[c] = [float(x) for x in kwargs[f"codegym_{c}"]]
        else:
            task_ids = kwargs.get("task_id")
            if task_ids is None or completions is None:
                raise ValueError("codegym_reward needs the rollout's codegym_reward field, or a task_id "
                                 "dataset column and completions to judge")
            rewards = []
            for task_id, comp in zip(task_ids, completions):
                text = comp if isinstance(comp, str) else "".join(
                    str(m.get("content", "")) for m in comp if m.get("role") == "assistant")
                value, cs = self._judge(task_id, text)
                rewards.append(value)
                for c in COMPONENTS:
                    comps.setdefault(c, []).append(cs.get(c, 0.0))
        if self.log_components and log_metric is not None:
            for c, vals in comps.items():
                if vals:
                    log_metric(f"codegym/{c}", sum(vals) / len(vals))
        self.calls.append(list(rewards))
        if len(self.calls) > self.keep_calls:
            del self.calls[: len(self.calls) - self.keep_calls]
        return rewards


#: ready-made reward function (its ``__name__`` names TRL's ``rewards/codegym_reward/mean`` metric)
codegym_reward = CodegymReward()
