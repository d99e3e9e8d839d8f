"""`DiffCredit` (DiDPO): the per-step diff units of an episode, with their returns-to-go.

This module owns the `DiffCredit` wrapper and its records (`UnitRecord`, `StepRecord`).
It only records: the grouping of similar sub-diffs across the G trajectories of a task
(anchors) and the advantages built on them belong to `codegym.rollout`. What it
guarantees is that the data those need is complete and exact:

- every step is recorded, including steps whose action was unusable (no units then);
- each unit keeps its ``span``: half-open ``str`` indices into *that step's* action
  text (``action[start:end]``), as `codegym.edits.units.attach_spans` computed them;
- ``return_to_go`` of step i is ``sum_{k >= i} gamma**(k - i) * r_k`` over the rewards
  this wrapper saw (so wrap it around the reward wrappers to record final rewards).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import gymnasium as gym

from codegym.wrappers.base import ShallowSpec

#: fields of a `codegym.edits.units.DiffUnit` (dict) kept per unit
UNIT_FIELDS = ("signature", "span", "scope", "n_lines", "kind", "path", "hunk", "granularity")


@dataclass
class UnitRecord:
    """One sub-diff of a step: its signature (for grouping across trajectories), the span
    of the action text that wrote it, its syntactic scope, size and kind."""

    signature: str
    span: tuple[int, int] | None
    scope: str
    n_lines: int
    kind: str
    path: str
    hunk: int = 0
    granularity: str = ""

    @classmethod
    def from_unit(cls, u: dict) -> UnitRecord:
        span = u.get("span")
        return cls(signature=str(u.get("signature", "")),
                   span=(int(span[0]), int(span[1])) if span is not None else None,
                   scope=str(u.get("scope", "")), n_lines=int(u.get("n_lines", 0)),
                   kind=str(u.get("kind", "")), path=str(u.get("path", "")),
                   hunk=int(u.get("hunk", 0)), granularity=str(u.get("granularity", "")))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["span"] = list(self.span) if self.span is not None else None
        return d


@dataclass
class StepRecord:
    """One step: index (0-based), action length and hash, units, reward, return-to-go."""

    step: int
    action_length: int
    action_sha256: str
    units: list[UnitRecord] = field(default_factory=list)
    reward: float = 0.0
    return_to_go: float = 0.0
    error: str | None = None
    action: str | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["units"] = [u.to_dict() for u in self.units]
        if self.action is None:
            d.pop("action")
        return d


def returns_to_go(rewards: Sequence[float], gamma: float = 1.0) -> list[float]:
    """``G_i = r_i + gamma * G_{i+1}``, computed backwards (exact for any gamma)."""
    out = [0.0] * len(rewards)
    g = 0.0
    for i in range(len(rewards) - 1, -1, -1):
        g = float(rewards[i]) + gamma * g
        out[i] = g
    return out


class DiffCredit(ShallowSpec, gym.utils.RecordConstructorArgs):
    """Record each step's diff units and, at the episode's end, their returns-to-go.

    At every step the units of ``info["diff_units"]`` (signature, span, scope, n_lines,
    kind, path) are recorded with the action's length and the step's reward. On the last
    step (terminated or truncated) ``info["diff_credit"]`` holds::

        {"gamma": g, "task_id": ..., "task_hash": ..., "return": G_0,
         "steps": [{"step": i, "action_length": n, "action_sha256": h, "units": [...],
                    "reward": r_i, "return_to_go": G_i, "error": e}, ...]}

    with ``G_i = sum_{k >= i} g**(k-i) r_k``. Spans index the step's own action text:
    ``action[span[0]:span[1]]`` (``keep_actions=True`` stores the text in the record too).
    Wrap it outermost, so the rewards it records are the final ones.

    Example:
        >>> import gymnasium as gym, codegym
        >>> from codegym.wrappers import DiffCredit
        >>> env = DiffCredit(gym.make("codegym/Suite-v0", suite="examples"), gamma=1.0)
        >>> obs, info = env.reset(options={"task_id": "examples/digit-sum-queries"})
        >>> from codegym.agents import OracleAgent
        >>> agent = OracleAgent(format="search_replace"); agent.reset(task=env.unwrapped.task)
        >>> obs, r, term, trunc, info = env.step(agent.act(obs, info))
        >>> rec = info["diff_credit"]["steps"][0]
        >>> rec["return_to_go"] == r and len(rec["units"]) > 0
        True
    """

    def __init__(self, env: gym.Env, gamma: float = 1.0, keep_actions: bool = False):
        if not 0.0 <= gamma <= 1.0:
            raise ValueError("gamma must be in [0, 1]")
        gym.utils.RecordConstructorArgs.__init__(self, gamma=gamma, keep_actions=keep_actions)
        gym.Wrapper.__init__(self, env)
        self.gamma = float(gamma)
        self.keep_actions = keep_actions
        self.records: list[StepRecord] = []
        self._task: tuple[Any, Any] = (None, None)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.records = []
        self._task = (info.get("task_id"), info.get("task_hash"))
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        text = action if isinstance(action, str) else str(action)
        units = [UnitRecord.from_unit(u) for u in info.get("diff_units") or ()]
        self.records.append(StepRecord(
            step=len(self.records), action_length=len(text),
            action_sha256=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
            units=units, reward=float(reward), error=info.get("error"),
            action=text if self.keep_actions else None))
        if terminated or truncated:
            info = dict(info)
            info["diff_credit"] = self.summary()
        return obs, reward, terminated, truncated, info

    def summary(self) -> dict:
        """The episode so far with returns-to-go computed from the recorded rewards."""
        g = returns_to_go([r.reward for r in self.records], self.gamma)
        for rec, value in zip(self.records, g):
            rec.return_to_go = value
        return {"gamma": self.gamma, "task_id": self._task[0], "task_hash": self._task[1],
                "return": g[0] if g else 0.0, "steps": [r.to_dict() for r in self.records]}


