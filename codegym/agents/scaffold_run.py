"""The scaffold agent's core: `ScaffoldAgent`, its turns, its config, turns -> env steps.

A scaffold (mini-swe-agent, aider, a script of your own) runs its own loop with a model;
codegym gives it the episode's workspace in a directory (`codegym.agents.scaffold_box`:
plain, bubblewrap or a container), the task statement the way it expects it, and its
model endpoint, then takes its file changes as the episode's edits:

- the scaffold runs to its end on the first `act` (it does not see codegym's feedback);
- every scaffold turn that changed files becomes one step (a unified diff), where the
  scaffold reports turns (mini-swe-agent does); otherwise the whole run is one step;
  when the turn budget is shorter, the last step carries the remaining turns' changes;
- the last step submits; ``last_turn["usage"]`` carries each step's model tokens, and
  `scaffold_summary()` the run (turns, model calls, tokens, wall time, exit status).

Configs: `ScaffoldConfig` (YAML, read with the one YAML loader), the shipped ones in
`SCAFFOLDS` (``codegym/agents/scaffolds/*.yaml``); docs/scaffolds.md has the details.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from codegym.agents.scaffold_box import ISOLATIONS, ScaffoldBox
from codegym.core.yamldoc import Doc, DocError, DocValidationError, pydantic_message
from codegym.edits.render import render_action
from codegym.tasks.schema import Task

SCAFFOLD_DIR = Path(__file__).with_name("scaffolds")


def _shipped() -> dict[str, Path]:
    return {p.stem: p for p in sorted(SCAFFOLD_DIR.glob("*.yaml"))}


SCAFFOLDS = _shipped()


@dataclass
class ScaffoldTurn:
    """One turn of a scaffold: the files after it, its model usage, what it ran."""

    index: int
    files: dict[str, str]
    usage: dict[str, int] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)
    wall_s: float = 0.0


@dataclass
class ScaffoldRun:
    """A whole scaffold run on one episode."""

    turns: list[ScaffoldTurn]
    exit_status: str = ""
    wall_s: float = 0.0
    model_calls: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    skipped_files: list[str] = field(default_factory=list)
    error: str | None = None
    log: str = ""

    base: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        changed, prev = 0, self.base
        for t in self.turns:
            changed += t.files != prev
            prev = t.files
        return {"turns": len(self.turns), "changed_turns": changed, "model_calls": self.model_calls,
                "usage": dict(self.usage), "wall_s": self.wall_s, "exit_status": self.exit_status,
                "error": self.error, "skipped_files": list(self.skipped_files)[:50]}


class ScaffoldConfig(BaseModel):
    """A scaffold config (YAML). ``kind``: ``mini-swe-agent`` (in-process, one step per
    turn) or ``command`` (a shell command, one step). The rest: see docs/scaffolds.md."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(pattern=r"^(mini-swe-agent|command)$")
    name: str | None = None
    isolation: str = "bwrap"
    image: str | None = None
    ro_binds: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float = Field(900.0, gt=0)
    format: str = "unified_diff"
    # the model endpoint (None: CODEGYM_LLM_* / OPENAI_* environment variables)
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"  # None: no key sent
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    # mini-swe-agent
    config: str = "mini.yaml"
    step_limit: int = Field(30, ge=0)
    command_timeout_s: float = Field(60.0, gt=0)
    # command scaffolds
    command: str | None = None
    network: bool = True
    prompt_file: str = "TASK.md"

    @model_validator(mode="after")
    def _check(self) -> ScaffoldConfig:
        if self.isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {ISOLATIONS}")
        if self.kind == "command" and not self.command:
            raise ValueError("a command scaffold needs `command` (e.g. command=\"my-agent --task-file "
                             "{prompt_file}\")")
        return self


def load_scaffold_config(name_or_path: str, **overrides: Any) -> ScaffoldConfig:
    """A shipped config by name (`SCAFFOLDS`) or a YAML file, with `overrides` on top.
    Errors name file, line and field."""
    path = SCAFFOLDS.get(name_or_path) or Path(name_or_path)
    if not path.exists():
        raise ValueError(f"unknown scaffold {name_or_path!r}: give a YAML file or one of {sorted(SCAFFOLDS)}")
    doc = Doc(path)
    if not doc.load():
        raise DocValidationError(doc.errors)
    data = {**(doc.data or {}), **overrides} if isinstance(doc.data, Mapping) else doc.data
    try:
        return ScaffoldConfig.model_validate(data)
    except ValidationError as e:
        errs = []
        for err in e.errors():
            loc = tuple(err["loc"])
            where = "<scaffold options>" if loc and loc[0] in overrides else doc.display
            errs.append(DocError(where, doc.line_of(loc) if where == doc.display else 1,
                                 ".".join(str(x) for x in loc), pydantic_message(err)))
        raise DocValidationError(errs) from None


def task_prompt(task: Task, files: Mapping[str, str], main_file: str | None, language: str | None,
                workdir: str) -> str:
    """The task as a scaffold reads it: the statement, the files and how it is judged."""
    listing = "\n".join(f"- {p}" for p in sorted(files)) or "- (no files yet)"
    how = (f"Write your solution in {language} in `{main_file}`." if main_file else "")
    return (f"{getattr(task, 'statement', '') or ''}\n\n"
            f"## Workspace\n\nThe files are in `{workdir}` (your working directory):\n{listing}\n\n"
            f"{how} When you finish, the files in `{workdir}` are judged by hidden tests; "
            "edit files in place (your changes are the submission).\n")


def plan_actions(base: Mapping[str, str], turns: list[ScaffoldTurn], budget: int, main_file: str,
                 format: str = "unified_diff") -> list[tuple[str, dict[str, int], list[int]]]:
    """The env steps of a scaffold run: (action text, usage, scaffold turn indices) each.

    One step per turn that changed files; at most `budget` steps (the last carries the
    rest); the last step submits; usage of turns without a change goes to the next step."""
    groups: list[list[ScaffoldTurn]] = []
    pending: list[ScaffoldTurn] = []
    prev = dict(base)
    for t in turns:
        pending.append(t)
        if t.files != prev:
            groups.append(pending)
            pending, prev = [], t.files
    if pending:
        if groups:
            groups[-1].extend(pending)
        else:
            groups.append(pending)
    budget = max(1, budget)
    if len(groups) > budget:
        groups = groups[:budget - 1] + [[t for g in groups[budget - 1:] for t in g]]
    actions = []
    current = dict(base)
    for k, g in enumerate(groups):
        last = k == len(groups) - 1
        after = next((t.files for t in reversed(g) if t.files is not None), current)
        changes: dict[str, str | None] = {p: c for p, c in after.items() if current.get(p) != c}
        changes.update({p: None for p in current if p not in after})
        usage: dict[str, int] = {}
        for t in g:
            for k2, v in t.usage.items():
                usage[k2] = usage.get(k2, 0) + int(v)
        text = render_action(changes, format, current, main_file, submit=last) if changes else (
            "submit" if last else "")
        actions.append((text, usage, [t.index for t in g]))
        current = dict(after)
    return actions


class ScaffoldAgent:
    """Runs an external scaffold on an episode and replays its file changes as actions.

    Subclasses implement `_run(box, prompt, deadline)` -> `ScaffoldRun`.
    """

    def __init__(self, config: ScaffoldConfig):
        self.config = config
        self.task: Any = None
        self.seed: int | None = None
        self.last_turn: dict[str, Any] | None = None
        self.last_run: ScaffoldRun | None = None
        self._queue: list[tuple[str, dict[str, int], list[int]]] | None = None

    @property
    def name(self) -> str:
        return self.config.name or f"scaffold:{self.config.kind}"

    def fork(self) -> ScaffoldAgent:
        return type(self)(self.config.model_copy(deep=True))

    def reset(self, task: Task | None = None, seed: int | None = None) -> None:
        self.task, self.seed = task, seed
        self.last_turn, self.last_run, self._queue = None, None, None

    def scaffold_summary(self) -> dict[str, Any] | None:
        """The last run (turns, model calls, tokens, wall time, exit status), JSON-able."""
        return self.last_run.summary() if self.last_run is not None else None

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        if self._queue is None:
            self._queue = self._play(observation, info)
        if not self._queue:
            self.last_turn = {"usage": {}, "finish_reason": "scaffold_done"}
            return "submit"
        text, usage, idx = self._queue.pop(0)
        self.last_turn = {"usage": usage, "finish_reason": "scaffold_turns", "scaffold_turns": idx}
        return text

    def _play(self, observation: str, info: Mapping[str, Any]) -> list[tuple[str, dict[str, int], list[int]]]:
        files = {p: c for p, c in (info.get("files") or {}).items() if isinstance(c, str)}
        main_file = info.get("main_file") or "main.py"
        cfg = self.config
        t0 = time.monotonic()
        with ScaffoldBox(files, cfg.isolation, cfg.image, cfg.ro_binds, cfg.env) as box:
            prompt = (task_prompt(self.task, files, main_file, info.get("language"), box.workdir)
                      if self.task is not None else observation)
            try:
                run = self._run(box, prompt, t0 + cfg.timeout_s)
            except Exception as e:  # noqa: BLE001 -- the scaffold failing is its episode's result
                snap, skipped = box.snapshot()
                run = ScaffoldRun([ScaffoldTurn(0, snap)], exit_status="error", skipped_files=skipped,
                                  error=f"{type(e).__name__}: {e}")
        run.wall_s, run.base = time.monotonic() - t0, files
        self.last_run = run
        budget = int(info.get("turns_left") or 1)
        return plan_actions(files, run.turns, budget, main_file, cfg.format)

    def _run(self, box: ScaffoldBox, prompt: str, deadline: float) -> ScaffoldRun:
        raise NotImplementedError


def usage_sum(*usages: Mapping[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for u in usages:
        for k, v in (u or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out[k] = out.get(k, 0) + int(v)
    return out
