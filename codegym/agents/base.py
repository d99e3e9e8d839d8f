"""The `Agent` protocol every reference agent and scaffold follows.

An agent answers observations with action text. The runner tells it which task
an episode is about through `reset(task=..., seed=...)` (a real model would
only read the observation; reference agents such as the oracle need the task).

    class Agent(Protocol):
        def reset(self, task=None, seed=None) -> None: ...
        def act(self, observation: str, info: dict) -> str: ...
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Agent(Protocol):
    """Anything with `reset(task=None, seed=None)` and `act(observation, info) -> str`."""

    name: str

    def reset(self, task: Any = None, seed: int | None = None) -> None: ...

    def act(self, observation: str, info: dict[str, Any]) -> str: ...


def task_language_files(task: Any, language: str | None, solution: str = "reference") -> tuple[str, dict[str, str]]:
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
