"""Execution sandbox: run untrusted programs under limits and report what happened.

Public names: `make_sandbox`, `Limits`, `ExecResult`; also the records `Build`,
`RunRequest`, the `Sandbox` interface and the language registry (`get_language`).

    >>> from codegym.sandbox import make_sandbox, Limits
    >>> sb = make_sandbox("local")
    >>> r = sb.execute("python", {"main.py": "print(input()[::-1])"}, stdin="abc\\n",
    ...                limits=Limits(time_s=1, memory_mb=256))
    >>> (r.status, r.stdout)
    ('ok', 'cba\\n')

Backends: "local" (this machine: warm fork servers in bubblewrap, see
`codegym.sandbox.local`; where bubblewrap is not usable it refuses with
`IsolationUnavailable` naming the remedies, unless the user opts in to runs
without isolation: ``isolation="rlimits"`` or ``CODEGYM_UNSAFE_NO_ISOLATION=1``),
and -- when their optional dependencies are installed -- "docker" and "ray" (a
module ``codegym.sandbox.<kind>`` exposing ``create(**kw) -> Sandbox``, imported when first asked for).  docs/sandbox.md
describes the backends and what the sandbox guarantees.
"""

from __future__ import annotations

import importlib
import os
import threading

from codegym.core.languages import LanguageSpec, UnknownLanguageError, get_language, list_languages
from codegym.core.limits import COMPILE_LIMITS, Limits
from codegym.sandbox.isolation import IsolationUnavailable, confinement_problem, refusal
from codegym.sandbox.local import LocalSandbox
from codegym.sandbox.types import STATUSES, Build, ExecResult, RunRequest, Sandbox

_shared: dict[str, Sandbox] = {}
_shared_lock = threading.Lock()


def make_sandbox(kind: str | None = None, **kw) -> Sandbox:
    """A sandbox backend.

    `kind` defaults to ``$CODEGYM_SANDBOX`` or "local". Without keyword
    arguments the process-wide shared instance of that kind is returned
    (created on first use, closed at exit), so calling this repeatedly is
    cheap; with keyword arguments a new instance is made (the caller closes it).
    Local keywords: ``workers``, ``isolation`` ("auto" | "bwrap" | "rlimits"), ``python``.
    ``python="3.9"`` (local and docker): every slot runs on that Python's root filesystem
    (`codegym.sandbox.roots`; the nearest available version, ``strict=True``: RootError).
    """
    kind = (kind or os.environ.get("CODEGYM_SANDBOX") or "local").lower()
    if kw:
        return _create(kind, **kw)
    with _shared_lock:
        sb = _shared.get(kind)
        if sb is None or sb.closed:
            sb = _shared[kind] = _create(kind)
        return sb


def require_isolation(kind: str | None = None) -> None:
    """Raise `IsolationUnavailable` (naming the remedies) when ``make_sandbox(kind)`` would
    refuse to run programs here for want of isolation; cheap, starts nothing. Entry points
    that will run untrusted code call it first (``gym.make``), so that the refusal comes
    before any work rather than at the first judged submission."""
    kind = (kind or os.environ.get("CODEGYM_SANDBOX") or "local").lower()
    if kind != "local" or _shared.get(kind) is not None:
        return
    problem = confinement_problem()
    if problem is not None:
        raise refusal(problem)


def _create(kind: str, **kw) -> Sandbox:
    if kind == "local":
        return LocalSandbox(**kw)
    try:
        mod = importlib.import_module(f"codegym.sandbox.{kind}")
    except ModuleNotFoundError as e:
        if e.name == f"codegym.sandbox.{kind}":
            raise ValueError(f"unknown or unavailable sandbox kind {kind!r} (available: local)") from None
        raise
    create = getattr(mod, "create", None)
    if create is None:
        raise ValueError(f"codegym.sandbox.{kind} does not define create(**kw)")
    return create(**kw)


__all__ = ["make_sandbox", "require_isolation", "IsolationUnavailable",
           "Limits", "COMPILE_LIMITS", "ExecResult", "Build", "RunRequest", "Sandbox",
           "STATUSES", "LanguageSpec", "UnknownLanguageError", "get_language", "list_languages"]
