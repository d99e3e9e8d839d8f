"""Exports of trajectories for trainers: canonical JSONL with advantages, flat token sequences.

`write_export` / `read_export`: one `Trajectory` per line (its ``to_dict()``), with
the scalar ``"advantage"`` and per-step ``"token_advantages"`` when given (floats
round-trip bit for bit). `flatten_trajectory` turns a multi-turn trajectory into one
sequence (first prompt, reply 1, the feedback tokens the next prompt added with mask 0,
reply 2 ...) without re-tokenising, else `NotPrefixPreserving`. SFT data
(`SFTExample`): `write_sft` (chat or prompt-completion JSONL), `write_sft_parquet`
(verl). docs/rollout.md explains the formats.

    >>> from codegym.rollout.records import Step, Trajectory
    >>> t = Trajectory("x", "h", "g", 0, None, "a", 0, steps=[
    ...     Step(0, "o", "a1", 0.0, prompt_ids=[1, 2], response_ids=[3, 4]),
    ...     Step(1, "o", "a2", 1.0, prompt_ids=[1, 2, 3, 4, 9], response_ids=[5])])
    >>> flatten_trajectory(t).response_mask
    [1, 1, 0, 1]
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.core.jsonl import json_lines
from codegym.rollout.records import Trajectory

__all__ = ["write_export", "read_export", "flatten_trajectory"]


class NotPrefixPreserving(ValueError):
    """A turn's prompt ids do not extend the previous turn's prompt + response ids."""


@dataclass
class ExportedTrajectory:
    """One line of the canonical export: the trajectory and its optional advantages."""

    trajectory: Trajectory
    advantage: float | None = None
    token_advantages: list[list[float] | None] | None = None   # per step, per response token


def _floats(values: Any) -> list[float]:
    # numpy arrays, lists of numpy scalars, plain lists: all to Python floats (float64, exact)
    tolist = getattr(values, "tolist", None)
    seq = tolist() if callable(tolist) else list(values)
    return [float(v) for v in seq]


def export_record(traj: Trajectory, advantage: float | None = None,
                  token_advantages: Sequence[Any] | None = None) -> dict[str, Any]:
    """The JSON object written for one trajectory (``traj.to_dict()`` plus advantages).

    `token_advantages`: one entry per step (array-like aligned with that step's
    ``response_ids``, or None); lengths are checked."""
    d = traj.to_dict()
    if advantage is not None:
        d["advantage"] = float(advantage)
    if token_advantages is not None:
        if len(token_advantages) != len(traj.steps):
            raise ValueError(f"{traj.episode_key}: {len(token_advantages)} token-advantage arrays "
                             f"for {len(traj.steps)} steps")
        per_step: list[list[float] | None] = []
        for step, adv in zip(traj.steps, token_advantages):
            if adv is None:
                per_step.append(None)
                continue
            vals = _floats(adv)
            if step.response_ids is not None and len(vals) != len(step.response_ids):
                raise ValueError(f"{traj.episode_key} step {step.index}: {len(vals)} advantages for "
                                 f"{len(step.response_ids)} response tokens")
            per_step.append(vals)
        d["token_advantages"] = per_step
    return d


def write_export(path: str | Path, trajectories: Iterable[Trajectory],
                 advantages: Sequence[float] | Any | None = None,
                 token_advantages: Sequence[Sequence[Any] | None] | None = None) -> int:
    """Write the canonical JSONL export; returns the number of lines.

    `advantages`: one scalar per trajectory (e.g. `codegym.rollout.advantages.grpo`'s
    output); `token_advantages`: per trajectory, per step arrays. The file is written
    under a temporary name and renamed, so readers never see half of it."""
    trajs = list(trajectories)
    if advantages is not None and len(advantages) != len(trajs):
        raise ValueError(f"{len(advantages)} advantages for {len(trajs)} trajectories")
    if token_advantages is not None and len(token_advantages) != len(trajs):
        raise ValueError(f"{len(token_advantages)} token-advantage entries for {len(trajs)} trajectories")
    p = Path(path)
    tmp = p.with_name(p.name + f".tmp{os.getpid()}")
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for i, t in enumerate(trajs):
            rec = export_record(t, None if advantages is None else float(advantages[i]),
                                None if token_advantages is None else token_advantages[i])
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, p)
    return len(trajs)


def read_export(path: str | Path) -> list[ExportedTrajectory]:
    """Read a file written by `write_export` (or any trajectory JSONL: advantages None)."""
    out: list[ExportedTrajectory] = []
    p = Path(path)
    for _, d in json_lines(p, error=ValueError):
        adv = d.pop("advantage", None)
        tok = d.pop("token_advantages", None)
        out.append(ExportedTrajectory(Trajectory.from_dict(d), adv, tok))
    return out


@dataclass
class TokenSequence:
    """A whole episode as one prompt and one response (policy + env tokens)."""

    prompt_ids: list[int]
    response_ids: list[int]
    response_mask: list[int]               # 1: sampled by the policy, 0: env/template tokens
    logprobs: list[float]                  # sampling log-probs; 0.0 on env tokens and where unknown
    advantages: list[float] | None = None  # per response token; 0.0 on env tokens
    step_spans: list[tuple[int, int]] = field(default_factory=list)  # [start, end) of each step's sampled tokens
    has_logprobs: bool = True              # every sampled token had a log-prob


def flatten_trajectory(traj: Trajectory, token_advantages: Sequence[Any] | None = None) -> TokenSequence:
    """Concatenate a trajectory's turns into one `TokenSequence` (docs/rollout.md).

    `token_advantages`: per step, arrays aligned with the step's ``response_ids``
    (e.g. from `codegym.rollout.tokens`); they land on the sampled tokens, env
    tokens get 0. Raises ``ValueError`` if a step has no token ids and
    `NotPrefixPreserving` if turns do not extend each other."""
    steps = traj.steps
    if not steps:
        raise ValueError(f"{traj.episode_key}: no steps")
    if token_advantages is not None and len(token_advantages) != len(steps):
        raise ValueError(f"{traj.episode_key}: {len(token_advantages)} token-advantage arrays for {len(steps)} steps")
    first = steps[0]
    if first.prompt_ids is None or first.response_ids is None:
        raise ValueError(f"{traj.episode_key}: step 0 has no token ids (the agent did not report them)")
    prompt = [int(t) for t in first.prompt_ids]
    context = list(prompt)          # what the policy has seen so far (prompt + response so far)
    resp: list[int] = []
    mask: list[int] = []
    lps: list[float] = []
    advs: list[float] | None = [] if token_advantages is not None else None
    spans: list[tuple[int, int]] = []
    has_lp = True
    for k, step in enumerate(steps):
        if step.prompt_ids is None or step.response_ids is None:
            raise ValueError(f"{traj.episode_key} step {k}: no token ids")
        if k > 0 and not step.response_ids:
            continue  # forced submission after the token budget: nothing was sampled or shown
        p = [int(t) for t in step.prompt_ids]
        if p[:len(context)] != context:
            at = next((i for i, (a, b) in enumerate(zip(p, context)) if a != b), min(len(p), len(context)))
            raise NotPrefixPreserving(
                f"{traj.episode_key} step {k}: prompt ids do not extend the previous turn at token {at} "
                f"(prompt has {len(p)} tokens, previous context {len(context)}); the conversation was "
                "re-rendered between turns, so its tokens cannot be concatenated")
        env_tokens = p[len(context):]
        resp += env_tokens
        mask += [0] * len(env_tokens)
        lps += [0.0] * len(env_tokens)
        if advs is not None:
            advs += [0.0] * len(env_tokens)
        r = [int(t) for t in step.response_ids]
        start = len(resp)
        resp += r
        mask += [1] * len(r)
        if step.logprobs is not None and len(step.logprobs) == len(r):
            lps += [float(x) for x in step.logprobs]
        else:
            has_lp = has_lp and not r
            lps += [0.0] * len(r)
        if advs is not None and token_advantages is not None:  # (one is given iff the other is)
            a = token_advantages[k]
            vals = [0.0] * len(r) if a is None else _floats(a)
            if len(vals) != len(r):
                raise ValueError(f"{traj.episode_key} step {k}: {len(vals)} advantages for {len(r)} tokens")
            advs += vals
        spans.append((start, len(resp)))
        context = p + r
    return TokenSequence(prompt, resp, mask, lps, advs, spans, has_lp)


# --------------------------------------------------------------------------- SFT data

#: JSONL forms of `write_sft`
SFT_FORMS = ("chat", "prompt_completion")


@dataclass
class SFTExample:
    """One supervised example: a conversation (system, user, assistant ... turns), the
    final answer as the assistant would give it in one turn, and metadata."""

    messages: list[dict[str, str]]
    final: str
    meta: dict[str, Any] = field(default_factory=dict)

    def prompt(self) -> list[dict[str, str]]:
        """The messages before the first assistant turn (system and the task's prompt)."""
        k = next((i for i, m in enumerate(self.messages) if m["role"] == "assistant"), len(self.messages))
        return self.messages[:k]

    def row(self, form: str) -> dict[str, Any]:
        if form == "chat":
            return {"messages": self.messages, **self.meta}
        if form == "prompt_completion":
            return {"prompt": self.prompt(), "completion": [{"role": "assistant", "content": self.final}],
                    **self.meta}
        raise ValueError(f"form must be one of {SFT_FORMS}, not {form!r}")


def _write_lines(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    n = 0
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
            n += 1
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return n


def write_sft(path: str | Path, examples: Iterable[SFTExample], form: str = "chat") -> int:
    """SFT JSONL (written under a temporary name, then renamed); returns the line count.

    ``chat``: ``{"messages": [...], **meta}`` -- the whole multi-turn conversation
    (TRL's conversational format, ``load_dataset("json", ...)``); ``prompt_completion``:
    ``{"prompt": [system, user], "completion": [assistant: the final answer], **meta}``."""
    if form not in SFT_FORMS:
        raise ValueError(f"form must be one of {SFT_FORMS}, not {form!r}")
    return _write_lines(Path(path), (e.row(form) for e in examples))


def write_sft_parquet(path: str | Path, examples: Iterable[SFTExample], data_source: str = "codegym") -> int:
    """A parquet file for verl's SFT trainer (pyarrow, the ``[verl]`` extra): columns
    ``prompt`` and ``response`` (strings: the task's prompt and the final answer; verl's
    ``data.prompt_key`` / ``data.response_key``), ``messages`` (the conversation, for
    ``data.multiturn.messages_key``), ``data_source`` and ``extra_info`` (the metadata)."""
    import pyarrow as pa  # noqa: PLC0415 -- optional dependency
    import pyarrow.parquet as pq  # noqa: PLC0415

    rows = []
    for e in examples:
        user = [m["content"] for m in e.prompt() if m["role"] == "user"]
        rows.append({"data_source": data_source, "prompt": user[0] if user else "", "response": e.final,
                     "messages": e.messages, "extra_info": json.dumps(e.meta, ensure_ascii=False)})
    table = pa.Table.from_pylist(rows, schema=pa.schema([
        ("data_source", pa.string()), ("prompt", pa.string()), ("response", pa.string()),
        ("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("extra_info", pa.string())]))
    p = Path(path)
    tmp = p.with_name(p.name + f".tmp{os.getpid()}")
    pq.write_table(table, str(tmp))
    os.replace(tmp, p)
    return table.num_rows
