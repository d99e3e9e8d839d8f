"""The files an agent edits: versions, per-step and cumulative diffs.

`Workspace`: a task's files with a version history, in memory
(``Workspace.in_memory(files)``) or on a git working tree
(``Workspace.from_directory(path)``; stores in `codegym.edits.stores`).
`StepDiff` / `FileChange`: what one `Workspace.apply` did and its unified
diff. Version 0 is the starter; every `apply` makes version + 1 (even one
that changes nothing, so env steps and versions stay aligned); `undo` goes
back one. `cumulative_diff()` equals ``git diff --no-renames <starter>`` of
the working tree; in memory it is updated around each edit rather than
re-diffed. `WorkspaceError` and `validate_path` come from the stores.
"""

from __future__ import annotations

import builtins
import fnmatch
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, overload

from codegym.edits.stores import (
    GitStore,
    MemoryStore,
    WorkspaceError,
    ignore_private_indexes,
    parents,
    validate_path,
    write_disk,
)
from codegym.edits.textdiff import (
    Opcode,
    diff_opcodes,
    file_diff,
    git_path,
    recompose_opcodes,
    render_diff,
    split_lines,
)


@dataclass(frozen=True)
class FileChange:
    """One file touched by a step: ``old``/``new`` text, None = absent."""

    path: str
    old: str | None
    new: str | None

    @property
    def status(self) -> str:
        """"added", "deleted" or "modified"."""
        if self.old is None:
            return "added"
        if self.new is None:
            return "deleted"
        return "modified"


@dataclass(eq=False)
class StepDiff:
    """What one `Workspace.apply` did: the version it produced and its changes.

    ``text`` is the step's unified diff (computed on first access and cached).
    ``old_files``/``new_files`` restrict the before/after snapshots to the
    touched paths (absent files left out), which is what
    `codegym.edits.units.split_units` takes.
    """

    version: int
    changes: tuple[FileChange, ...]
    # split_lines() results the workspace already had; dropped once the text is
    # built so that long histories do not hold two copies of every file.
    _lines: dict[str, tuple[list[str] | None, list[str] | None]] | None = field(
        default=None, repr=False
    )
    _text: str | None = field(default=None, repr=False)

    @property
    def parent_version(self) -> int:
        return self.version - 1

    @property
    def text(self) -> str:
        if self._text is None:
            lines = self._lines or {}
            parts = []
            for ch in self.changes:
                ol, nl = lines.get(ch.path, (None, None))
                parts.append(file_diff(ch.path, ch.old, ch.new, old_lines=ol, new_lines=nl))
            self._text = "".join(parts)
            self._lines = None
        return self._text

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.changes]

    @property
    def is_empty(self) -> bool:
        return not self.changes

    @property
    def old_files(self) -> dict[str, str]:
        return {c.path: c.old for c in self.changes if c.old is not None}

    @property
    def new_files(self) -> dict[str, str]:
        return {c.path: c.new for c in self.changes if c.new is not None}

    def to_dict(self) -> dict:
        return {
            "version": self.version,
            "changes": [{"path": c.path, "status": c.status} for c in self.changes],
            "diff": self.text,
        }

    def __str__(self) -> str:
        return self.text


class _CumEntry(NamedTuple):
    text: str
    lines: list[str]
    starter_lines: list[str]
    opcodes: list[Opcode]
    diff: str
    bodies: dict  # hunk bodies of `diff` (see `render_diff`)


class Workspace:
    """A task's files with versions, per-step and cumulative diffs.

    Example::

        >>> ws = Workspace.in_memory({"main.py": "print(1)\\n"})
        >>> step = ws.apply({"main.py": "print(2)\\n", "util.py": "X = 1\\n"})
        >>> ws.version, step.paths
        (1, ['main.py', 'util.py'])
        >>> print(ws.diff, end="")
        diff --git a/main.py b/main.py
        --- a/main.py
        +++ b/main.py
        @@ -1 +1 @@
        -print(1)
        +print(2)
        diff --git a/util.py b/util.py
        new file mode 100644
        --- /dev/null
        +++ b/util.py
        @@ -0,0 +1 @@
        +X = 1
        >>> ws.apply({"../x": "boom"})  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        WorkspaceError: invalid path '../x': '..' is not allowed (paths stay inside the workspace)
        >>> _ = ws.undo()
        >>> ws.version, ws.list()
        (0, ['main.py'])

    ``protected`` holds glob patterns (`fnmatch`, ``*`` also crosses ``/``); a
    pattern matching a path or one of its parent directories makes edits to it
    raise `WorkspaceError` (``"tests"`` and ``"tests/*"`` both protect
    ``tests/a.py``).
    """

    def __init__(self, store: MemoryStore | GitStore, protected: Sequence[str] = ()):
        self._store = store
        if isinstance(protected, str):
            protected = (protected,)
        self._protected: tuple[str, ...] = tuple(protected)
        self._history: list[StepDiff] = []
        # path -> number of history steps that changed it (kept incrementally: the
        # cumulative diff must not cost O(history) per step)
        self._touched: dict[str, int] = {}
        # path -> the current text, its lines, the starter's lines, the opcodes
        # between them and the diff text: files a step did not change keep their
        # diff, and a changed file is re-diffed only around the edit
        self._cum_cache: dict[str, _CumEntry] = {}
        # path -> (text, split_lines(text)): the last split of each file, reused
        # as the "old" side of the next diff (the cheap part of the 1 ms budget)
        self._lines: dict[str, tuple[str, list[str]]] = {}
        self._protected_cache: dict[str, str | None] = {}

    # -- construction -------------------------------------------------------
    @classmethod
    def in_memory(cls, files: Mapping[str, str | bytes], protected: Sequence[str] = ()) -> Workspace:
        """A workspace held in a dict (bytes values are decoded as UTF-8 with
        surrogateescape, so they round-trip)."""
        clean: dict[str, str] = {}
        for path, text in files.items():
            p = validate_path(path)
            if p in clean:
                raise WorkspaceError(f"duplicate path {path!r} (same file as {p!r})")
            clean[p] = _as_text(path, text)
        store = MemoryStore(clean)
        for p in clean:  # a file also used as a directory cannot be materialised
            for d in parents(p):
                if d in clean:
                    raise WorkspaceError(f"invalid starter: {d!r} is both a file and a directory")
        return cls(store, protected)

    @classmethod
    def from_directory(cls, path: str | os.PathLike, copy_to: str | os.PathLike | None = None,
                       protected: Sequence[str] = ()) -> Workspace:
        """A workspace on a git working tree.

        With ``copy_to`` the directory is first copied there (``copy_to`` must
        be absent or empty) and the copy is used; otherwise `path` is used in
        place. If the directory is not the top of a git repository one is
        initialised. The starter commit is HEAD when the tree is clean, else a
        commit object (not on any branch) recording the current working tree.
        """
        src = Path(path)
        if not src.is_dir():
            raise WorkspaceError(f"{src} is not a directory")
        if copy_to is not None:
            root = Path(copy_to)
            if root.exists() and any(root.iterdir()):
                raise WorkspaceError(f"cannot copy {src} to {root}: directory is not empty")
            shutil.copytree(src, root, symlinks=True, dirs_exist_ok=True,
                            ignore=ignore_private_indexes)
        else:
            root = src
        return cls(GitStore(root.resolve(), owned=False), protected)

    # -- reading ------------------------------------------------------------
    @property
    def protected(self) -> tuple[str, ...]:
        """Glob patterns of files edits may not touch."""
        return self._protected

    @property
    def backend(self) -> str:
        """"memory" or "git"."""
        return self._store.kind

    @property
    def root(self) -> Path | None:
        """The working tree (git backend) or None (in memory)."""
        return getattr(self._store, "root", None)

    @property
    def starter_commit(self) -> str | None:
        """The commit `cumulative_diff` compares against (git backend)."""
        return getattr(self._store, "starter", None) if self.backend == "git" else None

    @property
    def version(self) -> int:
        return len(self._history)

    @property
    def history(self) -> tuple[StepDiff, ...]:
        return tuple(self._history)

    @property
    def files(self) -> dict[str, str]:
        """A fresh ``{path: text}`` dict of the current files."""
        return self._store.snapshot_files()

    def list(self) -> list[str]:
        """Current file paths, sorted (git backend: files git would track)."""
        return self._store.list()

    def exists(self, path: str) -> bool:
        return self._store.read(validate_path(path)) is not None

    def read(self, path: str) -> str:
        p = validate_path(path)
        text = self._store.read(p)
        if text is None:
            raise WorkspaceError(f"no such file: {p!r}")
        return text

    @property
    def diff(self) -> str:
        """Unified diff of the last step ("" at version 0)."""
        return self._history[-1].text if self._history else ""

    def cumulative_diff(self) -> str:
        """Unified diff from the starter to the current files."""
        parts = []
        for p in sorted(self._store.changed_paths(set(self._touched))):
            new = self._store.read(p)
            hit = self._cum_cache.get(p)
            if hit is not None and (hit.text is new or hit.text == new):
                parts.append(hit.diff)
                continue
            parts.append(self._cumulative_file_diff(p, new, hit))
        return "".join(parts)

    def _cumulative_file_diff(self, p: str, new: str | None, hit: _CumEntry | None) -> str:
        """The starter->current diff of `p`; in memory, updated around the last edit
        (`recompose_opcodes`) rather than diffed from scratch at every step."""
        reuse = fresh = None
        if hit is not None and new is not None and self._store.kind == "memory":
            b = self._cached_lines(p, new)
            step = diff_opcodes(hit.lines, b)
            ops = recompose_opcodes(hit.starter_lines, hit.lines, b, hit.opcodes, step) if step else hit.opcodes
            a = hit.starter_lines
            old = self._store.starter_text(p)
            if step:  # rows of b that differ from the last render's b (closed range)
                reuse, fresh = hit.bodies, (step[0][3], step[-1][4])
        else:
            old = self._store.starter_text(p)
            if new is None or old is None or self._store.kind != "memory":
                text = file_diff(p, old, new, new_lines=self._cached_lines(p, new))
                self._cum_cache.pop(p, None)
                return text
            b = self._cached_lines(p, new)
            a = split_lines(old)
            ops = diff_opcodes(a, b)
        bodies: dict = {}
        if not ops:  # back to the starter's text
            text = ""
        else:
            qa, qb = git_path("a/", p), git_path("b/", p)
            text = render_diff([f"diff --git {qa} {qb}\n"], qa, qb, old, new, a, b, ops,
                                   context=3, bodies=bodies, reuse=reuse, fresh=fresh)
        self._cum_cache[p] = _CumEntry(new, b, a, ops, text, bodies)
        return text

    # -- editing ------------------------------------------------------------
    def _protected_by(self, path: str) -> str | None:
        if not self.protected:
            return None
        hit = self._protected_cache.get(path, "")
        if hit == "":
            hit = None
            for candidate in (path, *parents(path)):
                for pat in self.protected:
                    if fnmatch.fnmatchcase(candidate, pat):
                        hit = pat
                        break
                if hit:
                    break
            self._protected_cache[path] = hit
        return hit

    @overload
    def _cached_lines(self, path: str, text: str) -> builtins.list[str]: ...
    @overload
    def _cached_lines(self, path: str, text: str | None) -> builtins.list[str] | None: ...

    def _cached_lines(self, path: str, text: str | None) -> builtins.list[str] | None:  # (`list` is a method here)
        if text is None:
            return None
        entry = self._lines.get(path)
        if entry is not None and (entry[0] is text or entry[0] == text):
            return entry[1]
        lines = split_lines(text)
        self._lines[path] = (text, lines)
        return lines

    def apply(self, changes: Mapping[str, str | None]) -> StepDiff:
        """Apply an edit set atomically and make a new version.

        ``changes`` maps paths to their new full text, or None to delete. Either
        every change applies or none does (`WorkspaceError` names the first
        problem). Changes that leave a file as it was are dropped from the step.
        """
        if not isinstance(changes, Mapping):
            raise WorkspaceError(f"expected a mapping of path -> text, got {type(changes).__name__}")
        planned: list[FileChange] = []
        seen: dict[str, str] = {}
        store = self._store
        for raw_path, new in changes.items():
            p = validate_path(raw_path)
            if p in seen:
                raise WorkspaceError(f"path {raw_path!r} given twice (same file as {seen[p]!r})")
            seen[p] = raw_path
            if new is not None:
                new = _as_text(raw_path, new)
            pat = self._protected_by(p)
            if pat is not None:
                raise WorkspaceError(f"{p!r} is protected (matches {pat!r}); it cannot be edited")
            old = store.read(p)
            if new is None and old is None:
                raise WorkspaceError(f"cannot delete {p!r}: no such file")
            if old is not None and new is not None and (old is new or old == new):
                continue
            if new is not None:
                store.check_writable(p, creating=old is None)
            planned.append(FileChange(p, old, new))
        planned.sort(key=lambda c: c.path)
        self._check_final_layout(planned)
        done: list[FileChange] = []
        try:
            for ch in planned:
                store.write(ch.path, ch.new)
                done.append(ch)
        except OSError as e:  # disk full, permissions...: roll back what was written
            for ch in reversed(done):
                store.write(ch.path, ch.old)
            raise WorkspaceError(f"could not write {planned[len(done)].path!r}: {e}") from e
        lines = {}
        for ch in planned:
            entry = self._lines.get(ch.path)
            old_l = None
            if ch.old is not None and entry is not None and (entry[0] is ch.old or entry[0] == ch.old):
                old_l = entry[1]
            if ch.new is None:
                self._lines.pop(ch.path, None)
                new_l = None
            else:
                new_l = split_lines(ch.new)
                self._lines[ch.path] = (ch.new, new_l)
            lines[ch.path] = (old_l, new_l)
        step = StepDiff(version=self.version + 1, changes=tuple(planned), _lines=lines)
        self._history.append(step)
        for ch in planned:
            self._touched[ch.path] = self._touched.get(ch.path, 0) + 1
        return step

    def _check_final_layout(self, planned: builtins.list[FileChange]) -> None:
        # Files created in the same edit set must not clash with each other
        # (e.g. "a" and "a/b"); clashes with existing files were checked per path.
        created = {c.path for c in planned if c.old is None}
        if not created:
            return
        for p in created:
            for d in parents(p):
                if d in created:
                    raise WorkspaceError(f"cannot create both {d!r} and {p!r}: {d!r} would be a file and a directory")

    def undo(self) -> StepDiff:
        """Revert the last step; returns the step that was undone."""
        if not self._history:
            raise WorkspaceError("nothing to undo: the workspace is at its starting version")
        step = self._history.pop()
        for ch in step.changes:
            left = self._touched.get(ch.path, 0) - 1
            if left > 0:
                self._touched[ch.path] = left
            else:
                self._touched.pop(ch.path, None)
        for ch in reversed(step.changes):
            self._store.write(ch.path, ch.old)
            if ch.old is None:
                self._lines.pop(ch.path, None)
        return step

    # -- forking / output ---------------------------------------------------
    def copy(self, dest: str | os.PathLike | None = None) -> Workspace:
        """An independent copy (same versions and history). The git backend
        copies the working tree and its .git to `dest` (default: a new temp
        directory, removed by `close()` or garbage collection)."""
        new = Workspace(self._store.copy(dest), self.protected)
        new._history = list(self._history)  # StepDiff records are never mutated in place
        new._touched = dict(self._touched)
        new._cum_cache = dict(self._cum_cache)
        new._lines = dict(self._lines)
        new._protected_cache = dict(self._protected_cache)
        return new

    def write_to(self, directory: str | os.PathLike) -> Path:
        """Materialise the current files under `directory` (created if needed)."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        store = self._store
        if isinstance(store, GitStore):
            for p in store.readable():
                target = out / p
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(store.root / p, target)  # keeps the executable bit
        else:
            for p, text in store.files.items():
                target = out / p
                target.parent.mkdir(parents=True, exist_ok=True)
                write_disk(target, text)
        return out

    def close(self) -> None:
        """Release resources (git backend: the private index, and the working
        tree if this workspace created it with `copy()`)."""
        self._store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        where = f" root={self.root}" if self.root else ""
        return f"<Workspace {self.backend}{where} version={self.version}>"


def _as_text(path: str, value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    raise WorkspaceError(f"content for {path!r} must be text, got {type(value).__name__}")
