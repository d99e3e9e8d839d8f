"""Reference agents that need no model: oracle, baseline, replay.

- `OracleAgent` writes the task's reference solution in a chosen edit format
  and submits (optionally on a later turn, after seeing public feedback); a
  repository task's reference is its gold patch.
- `BaselineAgent` submits the starter unchanged (for PerfCode: correct but slow).
- `ReplayAgent` replays recorded actions from JSONL (one object per line with
  ``task_id`` and ``actions``, or the rollout records `codegym run` writes).
"""

from __future__ import annotations

import copy
import json
import threading
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from codegym.agents.base import TaskAgent, task_language_files
from codegym.edits.formats import EDIT_FORMATS
from codegym.tasks.repo import with_reference
from codegym.tasks.schema import Task


class OracleAgent(TaskAgent):
    """Submits the reference solution.

    Args:
        format: edit format to write it in (``code_block``, ``unified_diff``,
            ``search_replace``, ``tool_call``).
        solution: name of the task solution to write (default: the task's reference,
            ``perf.reference``, else ``reference``).
        submit_turn: 1 = write and submit in one action; 2 = write, then submit.

    >>> agent = OracleAgent(format="unified_diff")
    """

    name = "oracle"

    def __init__(self, format: str = "code_block", solution: str | None = None, submit_turn: int = 1):
        if format not in EDIT_FORMATS:
            raise ValueError(f"format must be one of {EDIT_FORMATS}")
        super().__init__(format)
        self.solution = solution
        self.submit_turn = max(1, int(submit_turn))

    def reset(self, task: Task | None = None, seed: int | None = None) -> None:
        # a repository task's reference is its gold patch applied to the base tree
        if getattr(task, "kind", None) == "repo" and not getattr(task, "solutions", None):
            task = with_reference(task)
        super().reset(task, seed)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._next_turn() > 1:
            return "submit"
        language = info.get("language")
        main_file = info.get("main_file") or self.task.main_file_for(language)
        name = self.solution or self.task.reference_name or "reference"
        _, files = task_language_files(self.task, language, name)
        current = info.get("files")
        if current is None:
            current = self.task.starter_files() if language in (None, self.task.language) else {}
        return self._write(files, current, main_file, submit=self.submit_turn == 1)


class BaselineAgent(TaskAgent):
    """Submits the task's baseline: the starter unchanged, or the named baseline solution
    (``perf.baseline``) when the task has one (e.g. DMC-Optim's slowest solution)."""

    name = "baseline"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        task = self.task
        if self._next_turn(needs_task=False) > 1 or task is None or task.baseline_is_starter:
            return "submit"
        language = info.get("language")
        lang, files = task_language_files(task, language, task.baseline_name)
        if language is not None and lang != language:
            return "submit"
        main_file = info.get("main_file") or task.main_file_for(language)
        return self._write(files, info.get("files") or {}, main_file)


class ReplayAgent:
    """Replays recorded actions.

    The JSONL file holds one episode per line: ``{"task_id": ..., "actions": [...]}``,
    or the records `codegym run --out` writes (``steps[*].action``). Episodes of the
    same task are replayed in file order; when an episode's actions run out the
    agent submits.
    """

    name = "replay"

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._episodes: dict[str, deque[list[str]]] = defaultdict(deque)
        with self.path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{self.path}:{lineno}: not JSON: {e}") from None
                actions = rec.get("actions")
                if actions is None and "steps" in rec:
                    actions = [s.get("action", "") for s in rec["steps"]]
                if "task_id" not in rec or not isinstance(actions, list):
                    raise ValueError(f"{self.path}:{lineno}: needs task_id and actions (or steps)")
                self._episodes[rec["task_id"]].append([str(a) for a in actions])
        self._current: deque[str] = deque()
        self._lock = threading.Lock()

    def fork(self) -> ReplayAgent:
        """A copy for another worker thread (`codegym.rollout.collect`): the recorded
        episodes are shared, so each is replayed once across all copies."""
        other = copy.copy(self)
        other._current = deque()
        return other

    def reset(self, task: Task | None = None, seed: int | None = None) -> None:
        task_id = getattr(task, "id", task)
        with self._lock:
            queue = self._episodes.get(task_id)
            if not queue:
                raise LookupError(f"{self.path} has no (more) recorded episodes of task {task_id!r}")
            self._current = deque(queue.popleft())

    def __getstate__(self) -> dict:  # a lock does not pickle (process workers get their own copy)
        state = dict(self.__dict__)
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self._current.popleft() if self._current else "submit"
