"""codegym: a Gymnasium suite of multi-turn, diff-native coding environments.

Importing the package registers the environment ids (see codegym.envs) and
exposes the task loaders:

    from codegym import load_task, load_suite, Task

The loaders are imported lazily (PEP 562 ``__getattr__``), so ``import codegym``
stays cheap and does not pull in pydantic until tasks are used.
"""

from __future__ import annotations

import importlib

from codegym.core.version import __version__

# public name -> module that defines it
_LAZY = {
    "load_task": "codegym.tasks.load",
    "Task": "codegym.tasks.schema",
    "TestCase": "codegym.tasks.schema",
    "TaskValidationError": "codegym.tasks.load",
    "load_suite": "codegym.tasks.suite",
    "Suite": "codegym.tasks.suite",
    "list_suites": "codegym.tasks.suite",
}

__all__ = ["__version__", *_LAZY]

import codegym.envs  # noqa: E402,F401  (registers the Gymnasium ids)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'codegym' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
