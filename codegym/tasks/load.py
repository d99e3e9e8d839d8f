"""Loading task files: `load_task(path)` -> a validated, frozen `Task`.

A task file is read with `codegym.core.yamldoc`, its sibling files are inlined
(`codegym.tasks.files`), the suite defaults (the nearest ``suite.yaml``, see
`find_suite_file` / `read_suite_file`) are deep-merged under it, and the result is
checked (`codegym.tasks.checks`) and validated (`codegym.tasks.schema`). Every
problem is reported at once, each as ``<file>:<line>: <field.path>: <problem>``
(`TaskValidationError`). Results are cached by the modification times of every
file they were built from. Default ids and suite folders: `default_task_id`,
`suite_root`.
"""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from codegym.core.paths import display_path
from codegym.core.yamldoc import Doc, DocError, DocValidationError, Loc, format_path, pydantic_message
from codegym.tasks.checks import semantic_errors
from codegym.tasks.fields import SUITE_FILE, SUITE_META_KEY
from codegym.tasks.files import inline_files
from codegym.tasks.schema import CheckerSpec, GeneratorSpec, Task, TestCase

__all__ = ["TaskError", "TaskValidationError", "SuiteDefaults", "load_task", "find_suite_file",
           "read_suite_file", "suite_root", "default_task_id"]

#: one problem of a task file (file, line, path, message)
TaskError = DocError


class TaskValidationError(DocValidationError):
    """Every problem found in one or more task files (`errors`), one per line in str()."""


#: keys the loader consumes before the schema sees them (offered as suggestions too)
_LOADER_KEYS: dict[type, tuple[str, ...]] = {
    TestCase: ("stdin_file", "expected_file"), CheckerSpec: ("file",), GeneratorSpec: ("file",)}


def _message(e: dict) -> str:
    if e["type"] == "string_pattern_mismatch" and tuple(e["loc"]) == ("id",):
        return "ids are '<suite>/<name>': letters, digits, '_', '-', '.', '+' separated by '/'"
    return pydantic_message(e, Task, _LOADER_KEYS)


# --------------------------------------------------------------------------- suite files


def find_suite_file(task_file: Path) -> Path | None:
    """The suite.yaml that applies to a task file: the nearest one in its directory or an
    ancestor, not looking above a tasks root (a directory named ``tasks`` / ``_tasks``, or
    one holding ``pyproject.toml`` or ``.git``)."""
    d = task_file.resolve().parent
    while True:
        cand = d / SUITE_FILE
        if cand.is_file():
            return cand
        parent = d.parent
        if (parent == d or parent.name in ("tasks", "_tasks")
                or any((d / m).exists() for m in ("pyproject.toml", ".git"))
                or any((parent / m).exists() for m in ("pyproject.toml", ".git"))):
            return None
        d = parent


class SuiteDefaults(NamedTuple):
    """A parsed suite.yaml: the document (with its errors), the defaults merged under
    every task, and the ``suite:`` description block."""

    doc: Doc
    defaults: dict
    meta: dict


_CACHE_LOCK = threading.Lock()
_TASK_CACHE: dict[tuple[Path, str], tuple[tuple, Task]] = {}
_SUITE_CACHE: dict[Path, tuple[tuple, SuiteDefaults]] = {}


def _signature(paths: Iterable[Path]) -> tuple:
    sig = []
    for p in dict.fromkeys(paths):
        try:
            st = p.stat()
            sig.append((str(p), st.st_mtime_ns, st.st_size))
        except OSError:
            sig.append((str(p), None, None))
    return tuple(sig)


def _same_signature(sig: tuple) -> bool:
    return _signature(Path(p) for p, *_ in sig) == sig


def read_suite_file(path: Path) -> SuiteDefaults:
    """Parse a suite.yaml (cached by modification time)."""
    path = Path(path).resolve()
    with _CACHE_LOCK:
        hit = _SUITE_CACHE.get(path)
    if hit is not None and hit[0] == _signature(hit[1].doc.deps):
        return hit[1]
    doc = Doc(path, display_path(path))
    defaults: dict = {}
    meta: dict = {}
    if doc.load():
        if doc.data is None:
            doc.data = {}
        if not isinstance(doc.data, dict):
            doc.err((), "suite.yaml must be a mapping of default task fields")
        else:
            inline_files(doc)
            defaults = dict(doc.data)
            meta = _suite_meta(doc, defaults.pop(SUITE_META_KEY, None) or {})
            if "id" in defaults:
                doc.err(("id",), "a suite cannot give a default id (ids must be unique)")
                defaults.pop("id")
    result = SuiteDefaults(doc, defaults, meta)
    with _CACHE_LOCK:
        _SUITE_CACHE[path] = (_signature(doc.deps), result)
    return result


def _suite_meta(doc: Doc, raw: Any) -> dict:
    if not isinstance(raw, dict):
        doc.err((SUITE_META_KEY,), "expected mapping (e.g. {description: ...})")
        return {}
    for k in raw:
        if k not in ("description", "name", "reward"):
            doc.err((SUITE_META_KEY, k), f"unknown field {k!r}; allowed: description, name, reward")
    return raw


def _is_tasks_root(d: Path) -> bool:
    if d.name in ("tasks", "_tasks"):
        return True
    env = os.environ.get("CODEGYM_TASKS", "")
    return any(p and Path(p).expanduser().resolve() == d for p in env.split(os.pathsep))


def suite_root(task_file: Path, suite_file: Path | None = None) -> Path:
    """The suite folder of a task file: where its suite.yaml is, else the folder directly
    under a tasks root (``tasks/``, ``_tasks/`` or a CODEGYM_TASKS entry) that holds it,
    else the file's own folder."""
    task_file = task_file.resolve()
    if suite_file is not None:
        return suite_file.resolve().parent
    d = task_file.parent
    while d.parent != d:
        if _is_tasks_root(d.parent):
            return d
        if any((d / m).exists() for m in ("pyproject.toml", ".git")):
            break
        d = d.parent
    return task_file.parent


def default_task_id(task_file: Path, suite_file: Path | None) -> str:
    """``<suite folder>/<path of the file inside the suite, without .yaml>``."""
    task_file = task_file.resolve()
    root = suite_root(task_file, suite_file)
    rel = task_file.relative_to(root).with_suffix("").as_posix()
    return f"{root.name}/{rel}"


# --------------------------------------------------------------------------- tasks


def load_task(path: str | os.PathLike) -> Task:
    """Load, merge with its suite.yaml, inline sibling files and validate one task file.

    Raises TaskValidationError listing every problem as ``file:line: path: message``.
    Results are cached until any file the task was built from changes.
    """
    path = Path(path)
    if path.is_dir():
        raise TaskValidationError([TaskError(display_path(path), 1, "", "is a directory; "
                                             "use codegym.load_suite for a suite")])
    # Default ids depend on CODEGYM_TASKS (see suite_root), so it is part of the key.
    key = (path.resolve(), os.environ.get("CODEGYM_TASKS", ""))
    with _CACHE_LOCK:
        hit = _TASK_CACHE.get(key)
    if hit is not None and _same_signature(hit[0]):
        return hit[1]
    task, deps = _load_uncached(path)
    with _CACHE_LOCK:
        _TASK_CACHE[key] = (_signature(deps), task)
    return task


def _deep_merge(base: Any, over: Any) -> Any:
    """Mappings merge key by key (recursively); anything else in `over` replaces `base`."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _deep_merge(base[k], v) if k in base else v
        return out
    return over


def _load_uncached(path: Path) -> tuple[Task, list[Path]]:
    doc = Doc(path.resolve(), display_path(path))
    if not doc.load():
        raise TaskValidationError(doc.errors)
    if not isinstance(doc.data, dict):
        doc.err((), "a task file must be a mapping of task fields")
        raise TaskValidationError(doc.errors)
    if path.name == SUITE_FILE:
        doc.err((), "suite.yaml holds suite defaults, not a task")
        raise TaskValidationError(doc.errors)
    inline_files(doc)

    suite_file = find_suite_file(path)
    # Candidate suite.yaml locations are dependencies too: creating one changes the task.
    deps = list(doc.deps) + [path.resolve().parent / SUITE_FILE]
    docs = [doc]
    defaults: dict = {}
    errors = list(doc.errors)
    if suite_file is not None:
        sd = read_suite_file(suite_file)
        docs.append(sd.doc)
        deps += sd.doc.deps
        errors += sd.doc.errors
        defaults = copy.deepcopy(sd.defaults)
    merged = _deep_merge(defaults, copy.deepcopy(doc.data))
    if "id" not in doc.data:
        merged["id"] = default_task_id(path, suite_file)
    task = _validate(merged, path, docs, errors)
    if errors or task is None:
        errors.sort(key=lambda e: (e.file != doc.display, e.file, e.line))
        raise TaskValidationError(errors)
    return task, deps


def _validate(merged: dict, path: Path, docs: list[Doc], errors: list[DocError]) -> Task | None:
    """The task of a merged mapping, or None; every problem is added to `errors`, at the
    line of the file (task or suite.yaml) that gave the value."""

    def locate(loc: Loc) -> tuple[str, int]:
        best: tuple[int, Doc] | None = None
        for dd in docs:  # longest known prefix wins; the task file wins ties
            for i in range(len(loc), -1, -1):
                if loc[:i] in dd.lines:
                    if best is None or i > best[0]:
                        best = (i, dd)
                    break
        assert best is not None
        return best[1].display, best[1].lines[loc[:best[0]]]

    for loc, msg, at in semantic_errors(merged):
        f, line = locate(at if at is not None else loc)
        errors.append(TaskError(f, line, format_path(loc), msg))
    try:
        return Task.model_validate({**merged, "source_path": str(path)},
                                   context={"codegym_loader": True})
    except ValidationError as exc:
        for e in exc.errors(include_url=False):
            loc = tuple(e["loc"])
            f, line = locate(loc)
            errors.append(TaskError(f, line, format_path(loc), _message(e)))
    return None
