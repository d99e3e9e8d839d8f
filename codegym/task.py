"""Old public path of the task loader: ``from codegym.task import load_task, Task``.

The task schema and loader live in `codegym.tasks`; this module only re-exports them.
"""

from codegym.tasks.load import TaskValidationError, load_task
from codegym.tasks.schema import Task, TestCase

__all__ = ["Task", "TestCase", "TaskValidationError", "load_task"]
