"""Checkers: decide whether a program's output (or a function's return value) is right.

The judge applies them in the trusted host: text checkers for stdio tasks
(`codegym.judge.checkers.text`), `ValueChecker` for function tasks
(`codegym.judge.checkers.values`), and special-judge programs run in the sandbox
(`codegym.judge.checkers.program`). `make_checker` picks one from a task's checker spec;
the rules are in docs/judge.md.
"""

from __future__ import annotations

from typing import Any

from codegym.judge.checkers.base import spec_get
from codegym.judge.checkers.program import ProgramChecker
from codegym.judge.checkers.text import TEXT_CHECKERS, Checker, FloatChecker

_SINGLETONS: dict[str, Checker] = {}


def make_checker(spec: Any = None, *, time_s: float | None = None) -> Checker | ProgramChecker:
    """The text checker (or `ProgramChecker`) for a CheckerSpec, a dict, or a type name.

    None means the stdio default (`tokens`)."""
    if spec is None:
        kind = "tokens"
    elif isinstance(spec, str):
        kind = spec
    else:
        kind = spec_get(spec, "type", "tokens")
    if kind in TEXT_CHECKERS:
        c = _SINGLETONS.get(kind)
        if c is None:
            c = _SINGLETONS[kind] = TEXT_CHECKERS[kind]()
        return c
    if kind == "float":
        return FloatChecker(spec_get(spec, "abs_tol", 1e-6), spec_get(spec, "rel_tol", 1e-6))
    if kind == "program":
        code = spec_get(spec, "code")
        if not code:
            raise ValueError("program checker without code")
        lim = max(10.0, 2.0 * time_s) if time_s else 10.0
        return ProgramChecker(code, spec_get(spec, "language", "python") or "python",
                              spec_get(spec, "args", ()) or (), time_s=lim)
    raise ValueError(f"unknown checker type {kind!r} (known: {', '.join([*TEXT_CHECKERS, 'float', 'program'])})")


