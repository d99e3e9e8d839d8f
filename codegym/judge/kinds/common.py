"""What the test kinds share: a case's limits and its checker."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from codegym.core.limits import Limits
from codegym.judge.checkers import make_checker
from codegym.judge.checkers.values import make_value_checker
from codegym.judge.testgen import Case
from codegym.tasks.schema import Task


def case_limits(task: Task, case: Case) -> Limits:
    """The task's limits, with the case's own time limit when it has one."""
    return task.limits.replace(time_s=case.time_s) if case.time_s else task.limits


def case_checkers(task: Task, value: bool = False) -> Callable[[Case], Any]:
    """``checker_for(case)``: the case's checker (its own, else the task's), made once per
    spec; output checkers for stdio, value checkers (``value=True``) for function tasks.
    Thread-safe: timed runs may be verified from several threads."""
    made: dict[int, Any] = {}
    lock = threading.Lock()

    def checker_for(case: Case):
        spec = case.checker if case.checker is not None else task.checker
        with lock:
            c = made.get(id(spec))
            if c is None:
                c = made[id(spec)] = (make_value_checker(spec) if value
                                      else make_checker(spec, time_s=case_limits(task, case).time_s))
        return c
    return checker_for


