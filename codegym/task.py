"""Old public path of the task loader: ``from codegym.task import load_task, Task``.

The task schema and loader live in `codegym.tasks`; this module only re-exports them.
"""

from codegym.tasks.schema import Task, TaskValidationError, TestCase, load_task

__all__ = ["Task", "TestCase", "TaskValidationError", "load_task"]
