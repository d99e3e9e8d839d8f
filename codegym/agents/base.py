"""The `Agent` protocol every reference agent and scaffold follows, and `TaskAgent`,
the base of the agents that read the task (oracle, baseline, mutant).

An agent answers observations with action text. The runner tells it which task
an episode is about through `reset(task=..., seed=...)` (a real model would
only read the observation; reference agents such as the oracle need the task).

    class Agent(Protocol):
        def reset(self, task=None, seed=None) -> None: ...
        def act(self, observation: str, info: dict) -> str: ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from codegym.edits.render import render_action
from codegym.tasks.schema import Task


@runtime_checkable
class Agent(Protocol):
    """Anything with `reset(task=None, seed=None)` and `act(observation, info) -> str`."""

    name: str

    def reset(self, task: Task | None = None, seed: int | None = None) -> None: ...

    def act(self, observation: str, info: dict[str, Any]) -> str: ...


def task_language_files(task: Task, language: str | None, solution: str = "reference") -> tuple[str, dict[str, str]]:
    """(language, files) of the task's solution in `language` if it has one, else of `solution`.

    Looks for a solution whose language equals `language` (preferring the one named
    `solution`), so an oracle can answer a stdio task posed in another language.
    """
    sols = getattr(task, "solutions", {}) or {}
    if not sols:
        raise ValueError(f"task {task.id} has no solutions")
    lang_of = {name: (s.language or task.language) for name, s in sols.items()}
    if language is not None:
        if solution in sols and lang_of[solution] == language:
            return language, dict(sols[solution].files)
        for name, lang in lang_of.items():
            if lang == language and getattr(sols[name], "expect", "accepted") in (None, "accepted"):
                return lang, dict(sols[name].files)
    if solution not in sols:
        raise ValueError(f"task {task.id} has no solution {solution!r}")
    return lang_of[solution], dict(sols[solution].files)


class TaskAgent:
    """Base of the agents that read the task: keeps it, counts turns, writes edits.

    Args:
        format: edit format of the actions (see `codegym.edits.parse.render_action`).
    """

    name = "task"

    def __init__(self, format: str = "code_block"):
        self.format = format
        self.task = None
        self._turn = 0

    def reset(self, task: Task | None = None, seed: int | None = None) -> None:
        self.task = task
        self._turn = 0

    def _next_turn(self, needs_task: bool = True) -> int:
        """Count a turn (the first is 1); with `needs_task`, refuse to act before reset(task=...)."""
        if needs_task and self.task is None:
            raise RuntimeError(f"{type(self).__name__} needs reset(task=...) before act()")
        self._turn += 1
        return self._turn

    def _write(self, files: Mapping[str, str], current: Mapping[str, str], main_file: str,
               submit: bool = True) -> str:
        """The action that turns `current` into `files` (``submit`` when nothing changes)."""
        changes = {p: c for p, c in files.items() if current.get(p) != c}
        if not changes:
            return "submit"
        return render_action(changes, self.format, current, main_file, submit=submit)
