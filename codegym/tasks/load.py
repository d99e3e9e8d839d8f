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
import re
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from codegym.core.paths import display_path
from codegym.core.yamlcompose import DEFAULT_CAPS, HARD_CAPS, Caps
from codegym.core.yamldoc import Doc, DocError, DocValidationError, Loc, format_path, inside, pydantic_message
from codegym.tasks.checks import semantic_errors
from codegym.tasks.fields import SUITE_FILE, SUITE_META_KEY
from codegym.tasks.files import inline_files
from codegym.tasks.schema import CheckerSpec, GeneratorSpec, Task, TestCase

#: one problem of a task file (file, line, path, message)
TaskError = DocError


class TaskValidationError(DocValidationError):
    """Every problem found in one or more task files (`errors`), one per line in str()."""


#: keys the loader consumes before the schema sees them (offered as suggestions too)
_LOADER_KEYS: dict[type, tuple[str, ...]] = {
    TestCase: ("stdin_file", "expected_file"), CheckerSpec: ("file",), GeneratorSpec: ("file",)}


def _message(e: Mapping[str, Any]) -> str:
    if e["type"] == "string_pattern_mismatch" and tuple(e["loc"]) == ("id",):
        return "ids are '<suite>/<name>': letters, digits, '_', '-', '.', '+' separated by '/'"
    return pydantic_message(e, Task, _LOADER_KEYS)


# --------------------------------------------------------------------------- suite files


def _in_folder(path: Path) -> Path:
    """`path` with its folder resolved but not the file itself: a symlinked task file
    belongs to the folder it sits in (and must point inside its suite, see `_confined`)."""
    path = Path(os.path.abspath(path))
    return path.parent.resolve() / path.name


def _confined(doc: Doc) -> bool:
    """False (with the error recorded) when the YAML file itself resolves outside its root."""
    real = os.path.realpath(doc.file)
    if inside(real, os.path.realpath(doc.root)):
        return True
    doc.errors.append(DocError(doc.display, 1, "", f"is a symlink to {real}, outside its suite folder "
                                                   f"{display_path(doc.root)}"))
    return False


def find_suite_file(task_file: Path) -> Path | None:
    """The suite.yaml that applies to a task file: the nearest one in its directory or an
    ancestor, not looking above a tasks root (a directory named ``tasks`` / ``_tasks``, or
    one holding ``pyproject.toml`` or ``.git``)."""
    d = _in_folder(task_file).parent
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
    every task, the ``suite:`` description block and the caps of its tasks' files."""

    doc: Doc
    defaults: dict
    meta: dict
    caps: Caps = DEFAULT_CAPS


#: ``suite: {caps: {...}}`` keys -> (Caps field, unit in bytes); docs/tasks.md
CAP_KEYS = {"file_mb": ("file_bytes", 1 << 20), "inlined_mb": ("inlined_bytes", 1 << 20),
            "total_mb": ("total_bytes", 1 << 20), "nodes": ("nodes", 1)}
#: how a user raises the caps (quoted in the errors they cause)
CAP_HINT = "raise it in the suite's suite.yaml: suite: {caps: {...}}"


_CACHE_LOCK = threading.Lock()
_TASK_CACHE: dict[tuple[Path, str], tuple[tuple, Task]] = {}
_SUITE_CACHE: dict[Path, tuple[tuple, SuiteDefaults]] = {}


def _signature(paths: Iterable[Path]) -> tuple:
    sig: list[tuple[str, int | None, int | None]] = []
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
    path = _in_folder(path)
    with _CACHE_LOCK:
        hit = _SUITE_CACHE.get(path)
    if hit is not None and hit[0] == _signature(hit[1].doc.deps):
        return hit[1]
    doc = Doc(path, display_path(path), root=path.parent, cap_hint=CAP_HINT)
    defaults: dict = {}
    meta: dict = {}
    if _confined(doc) and doc.load():
        if doc.data is None:
            doc.data = {}
        if not isinstance(doc.data, dict):
            doc.err((), "suite.yaml must be a mapping of default task fields")
        else:
            defaults = dict(doc.data)
            meta = _suite_meta(doc, defaults.pop(SUITE_META_KEY, None) or {})
            doc.caps = _suite_caps(doc, meta.get("caps"))
            inline_files(doc)
            _confine_repo_url(doc)
            defaults = {k: v for k, v in doc.data.items() if k != SUITE_META_KEY}
            if "id" in defaults:
                doc.err(("id",), "a suite cannot give a default id (ids must be unique)")
                defaults.pop("id")
    result = SuiteDefaults(doc, defaults, meta, doc.caps)
    with _CACHE_LOCK:
        _SUITE_CACHE[path] = (_signature(doc.deps), result)
    return result


def _suite_meta(doc: Doc, raw: Any) -> dict:
    if not isinstance(raw, dict):
        doc.err((SUITE_META_KEY,), "expected mapping (e.g. {description: ...})")
        return {}
    for k in raw:
        if k not in ("description", "name", "reward", "caps"):
            doc.err((SUITE_META_KEY, k), f"unknown field {k!r}; allowed: description, name, reward, caps")
    return raw


def _suite_caps(doc: Doc, raw: Any) -> Caps:
    """The caps a suite.yaml sets (``suite: {caps: {file_mb: 8, ...}}``) over the defaults,
    each at most its `HARD_CAPS` value."""
    if raw is None:
        return DEFAULT_CAPS
    at = (SUITE_META_KEY, "caps")
    if not isinstance(raw, dict):
        doc.err(at, f"expected a mapping of {', '.join(CAP_KEYS)}")
        return DEFAULT_CAPS
    over: dict[str, int] = {}
    for k, v in raw.items():
        if k not in CAP_KEYS:
            doc.err(at + (k,), f"unknown cap {k!r}; allowed: {', '.join(CAP_KEYS)}")
            continue
        field, unit = CAP_KEYS[k]
        most = getattr(HARD_CAPS, field) // unit
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= most:
            doc.err(at + (k,), f"expected a number > 0 and <= {most}")
            continue
        over[field] = int(v * unit)
    return DEFAULT_CAPS.replace(**over)


def _is_tasks_root(d: Path) -> bool:
    if d.name in ("tasks", "_tasks"):
        return True
    env = os.environ.get("CODEGYM_TASKS", "")
    return any(p and Path(p).expanduser().resolve() == d for p in env.split(os.pathsep))


def suite_root(task_file: Path, suite_file: Path | None = None) -> Path:
    """The suite folder of a task file: where its suite.yaml is, else the folder directly
    under a tasks root (``tasks/``, ``_tasks/`` or a CODEGYM_TASKS entry) that holds it,
    else the file's own folder."""
    task_file = _in_folder(task_file)
    if suite_file is not None:
        return _in_folder(suite_file).parent
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
    task_file = _in_folder(task_file)
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
    key = (_in_folder(path), os.environ.get("CODEGYM_TASKS", ""))
    with _CACHE_LOCK:
        hit = _TASK_CACHE.get(key)
    if hit is not None and _same_signature(hit[0]):
        return hit[1]
    task, deps = _load_uncached(path)
    with _CACHE_LOCK:
        _TASK_CACHE[key] = (_signature(deps), task)
    return task


_REMOTE_RE = re.compile(r"^(?:([A-Za-z][A-Za-z0-9+.\-]*)://|[\w.\-]+@[\w.\-]+:)")


def _confine_repo_url(doc: Doc) -> None:
    """A repository task's ``repo.url`` that names a local path (a folder, bundle or
    tarball the judge copies into the workspace) must resolve inside the suite folder,
    as every file a task names; ``file://`` URLs are refused (a remote URL is fine)."""
    repo = doc.data.get("repo")
    url = repo.get("url") if isinstance(repo, dict) else None
    if not isinstance(url, str) or not url.strip():
        return
    m = _REMOTE_RE.match(url)
    if m and (m.group(1) or "").lower() != "file":
        return
    loc = ("repo", "url")
    if m:
        doc.err(loc, f"file:// repository URLs are not allowed in a task file ({url}): name a path "
                     "inside the suite folder")
        return
    real = os.path.realpath(os.path.join(doc.base, os.path.expanduser(url)))
    root = os.path.realpath(doc.root)
    if not inside(real, root):
        doc.err(loc, f"{url} resolves to {real}, outside the suite folder {display_path(root)}: a local "
                     "repository must be inside its suite folder (symlinks are followed)")


def _deep_merge(base: Any, over: Any) -> Any:
    """Mappings merge key by key (recursively); anything else in `over` replaces `base`."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _deep_merge(base[k], v) if k in base else v
        return out
    return over


def _load_uncached(path: Path) -> tuple[Task, list[Path]]:
    # the suite first: its folder confines the files the task names, its caps bound them
    task_file = _in_folder(path)
    suite_file = find_suite_file(task_file)
    sd = read_suite_file(suite_file) if suite_file is not None else None
    doc = Doc(task_file, display_path(path), root=suite_root(task_file, suite_file),
              caps=sd.caps if sd is not None else DEFAULT_CAPS, cap_hint=CAP_HINT)
    if not _confined(doc) or not doc.load():  # (a broken suite.yaml may be why: its errors too)
        raise TaskValidationError(doc.errors + (sd.doc.errors if sd is not None else []))
    if not isinstance(doc.data, dict):
        doc.err((), "a task file must be a mapping of task fields")
        raise TaskValidationError(doc.errors)
    if path.name == SUITE_FILE:
        doc.err((), "suite.yaml holds suite defaults, not a task")
        raise TaskValidationError(doc.errors)
    inline_files(doc)
    _confine_repo_url(doc)

    # Candidate suite.yaml locations are dependencies too: creating one changes the task.
    deps = list(doc.deps) + [task_file.parent / SUITE_FILE]
    docs = [doc]
    defaults: dict = {}
    errors = list(doc.errors)
    if sd is not None:
        docs.append(sd.doc)
        deps += sd.doc.deps
        errors += sd.doc.errors
        defaults = copy.deepcopy(sd.defaults)
    merged = _deep_merge(defaults, copy.deepcopy(doc.data))
    if "id" not in doc.data:
        merged["id"] = default_task_id(task_file, suite_file)
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
