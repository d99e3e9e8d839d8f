"""A whole judge on one worker of a sandbox that runs calls remotely (the Ray backend).

`judge_remote(sandbox, task, files, ...)` is `judge` run on a worker with the worker's own
sandbox; when the backend gives up on its workers, the report is a ``sandbox_error`` (an
infrastructure failure is never charged to the program).
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

from codegym.judge.report import JudgeReport
from codegym.judge.run import judge
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task


def judge_remote(sandbox: Sandbox, task: Task, files: Mapping[str, str | bytes], split: str = "hidden",
                 timing: bool = False, early_exit: bool = False, language: str | None = None) -> JudgeReport:
    """`judge` run whole on one worker of `sandbox` (which has ``remote_call``); same arguments."""
    kw = {"split": split, "timing": timing, "early_exit": early_exit, "language": language}
    return sandbox.remote_call(judge, task, dict(files), on_give_up=lambda why: _gave_up(task, kw, why), **kw)


def judge_async(sandbox: Sandbox, task: Task, files: Mapping[str, str | bytes], **kw: Any) -> Future:
    """`judge_remote` in the background: a future of the JudgeReport."""
    return sandbox.remote_async(judge, task, dict(files), on_give_up=lambda why: _gave_up(task, kw, why), **kw)


def _gave_up(task: Task, kw: Mapping[str, Any], why: str) -> JudgeReport:
    return JudgeReport(verdict="sandbox_error", passed=0, total=0, stage="ran", progress=0.5,
                       task_id=task.id, task_hash=task.content_hash, split=kw.get("split", "hidden"),
                       language=kw.get("language") or task.language,
                       message=f"ray sandbox infrastructure failure: {why}")
