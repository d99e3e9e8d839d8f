"""Where a workspace's files live, and which paths it accepts.

`MemoryStore` (a dict path -> text, with the starter snapshot) and `GitStore`
(a git working tree; the starter is a commit made with a private index, so
opening a dirty repository touches neither its branch nor its index) behind
one small interface (read, check_writable, write, list, starter_text,
changed_paths, snapshot_files, copy, close); `validate_path` and
`WorkspaceError` (an edit or path the workspace refuses). Text is kept
byte-faithful: UTF-8 with surrogateescape, no newline translation.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import uuid
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["WorkspaceError", "validate_path", "parents", "MemoryStore", "GitStore", "write_disk",
           "ignore_private_indexes"]


class WorkspaceError(ValueError):
    """An edit or path the workspace refuses; the message is agent-facing."""



def validate_path(path: str) -> str:
    """Normalise a workspace-relative path or raise `WorkspaceError`.

    ``./a//b.py`` -> ``a/b.py``. Refused: non-strings, empty paths, absolute
    paths, drive letters, backslashes, NUL, ``..`` components, a trailing
    ``/`` (a directory), and anything inside a ``.git`` directory.
    """
    if not isinstance(path, str):
        raise WorkspaceError(f"invalid path {path!r}: expected a string")
    return _validate_path(path)


@functools.lru_cache(maxsize=8192)
def _validate_path(path: str) -> str:
    shown = repr(path)
    if not path.strip():
        raise WorkspaceError(f"invalid path {shown}: empty path")
    if "\0" in path:
        raise WorkspaceError(f"invalid path {shown}: contains a NUL character")
    if "\\" in path:
        raise WorkspaceError(f"invalid path {shown}: use '/' as the separator, not '\\'")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":" and path[0].isalpha()):
        raise WorkspaceError(
            f"invalid path {shown}: absolute paths are not allowed; give a path relative to the workspace root"
        )
    if path.endswith("/"):
        raise WorkspaceError(f"invalid path {shown}: names a directory, not a file")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise WorkspaceError(f"invalid path {shown}: names the workspace root, not a file")
    for p in parts:
        if p == "..":
            raise WorkspaceError(f"invalid path {shown}: '..' is not allowed (paths stay inside the workspace)")
        if p.lower() == ".git":
            raise WorkspaceError(f"invalid path {shown}: writing into .git is not allowed")
    return "/".join(parts)


def parents(path: str) -> Iterator[str]:
    """The parent directories of a path, innermost first."""
    i = path.rfind("/")
    while i > 0:
        path = path[:i]
        yield path
        i = path.rfind("/")


class MemoryStore:
    """Files in a dict; the starter snapshot kept for `cumulative_diff`."""

    kind = "memory"

    def __init__(self, files: dict[str, str]):
        self.files = files
        self.starter = dict(files)
        # directory -> number of files under it, for file/directory clash checks
        self.dirs: dict[str, int] = {}
        for p in files:
            self._add_dirs(p, 1)

    def _add_dirs(self, path: str, delta: int) -> None:
        for d in parents(path):
            n = self.dirs.get(d, 0) + delta
            if n:
                self.dirs[d] = n
            else:
                del self.dirs[d]

    def read(self, path: str) -> str | None:
        return self.files.get(path)

    def check_writable(self, path: str, creating: bool) -> None:
        if not creating:
            return
        if path in self.dirs:
            raise WorkspaceError(f"cannot create file {path!r}: a directory of that name exists")
        for d in parents(path):
            if d in self.files:
                raise WorkspaceError(f"cannot create file {path!r}: {d!r} is a file, not a directory")

    def write(self, path: str, text: str | None) -> None:
        existed = path in self.files
        if text is None:
            if existed:
                del self.files[path]
                self._add_dirs(path, -1)
        else:
            self.files[path] = text
            if not existed:
                self._add_dirs(path, 1)

    def list(self) -> list[str]:
        return sorted(self.files)

    def starter_text(self, path: str) -> str | None:
        return self.starter.get(path)

    def changed_paths(self, touched: Iterable[str]) -> set[str]:
        return set(touched)

    def snapshot_files(self) -> dict[str, str]:
        return dict(self.files)

    def copy(self, dest: str | os.PathLike | None) -> MemoryStore:
        new = MemoryStore.__new__(MemoryStore)
        new.files = dict(self.files)
        new.starter = self.starter  # never mutated: sharing is safe
        new.dirs = dict(self.dirs)
        return new

    def close(self) -> None:
        pass


_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "codegym",
    "GIT_AUTHOR_EMAIL": "codegym@localhost",
    "GIT_COMMITTER_NAME": "codegym",
    "GIT_COMMITTER_EMAIL": "codegym@localhost",
    # a fixed date makes the starter commit of a given tree reproducible
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


def read_disk(full: Path) -> str:
    with open(full, encoding="utf-8", errors="surrogateescape", newline="") as f:
        return f.read()


def write_disk(full: Path, text: str) -> None:
    with open(full, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)


class GitStore:
    """A git working tree on disk; the starter is a commit.

    The starter commit is built with a private index file (``GIT_INDEX_FILE``),
    so opening a dirty repository neither moves its branch nor touches its
    index: the commit object simply records the working tree as it was. The
    same private index, refreshed with ``git add -A``, answers "which files
    exist / changed since the starter" honouring .gitignore.
    """

    kind = "git"

    def __init__(self, root: Path, owned: bool, starter: str | None = None,
                 index_from: Path | None = None):
        import git  # noqa: PLC0415 (gitpython: in-memory use never pays for it)

        self.root = root
        self.repo = git.Repo(root) if (root / ".git").exists() else git.Repo.init(root)
        self.git_dir = Path(self.repo.git_dir)
        self.index = self.git_dir / f"codegym-index-{uuid.uuid4().hex[:12]}"
        self._finalizers = [weakref.finalize(self, _unlink, self.index)]
        if owned:
            self._finalizers.append(weakref.finalize(self, shutil.rmtree, str(root), True))
        if index_from is not None and index_from.exists():
            shutil.copyfile(index_from, self.index)
        self.starter = starter if starter is not None else self._make_starter()
        self._starter_tree = self.repo.commit(self.starter).tree
        self.real_root = os.path.realpath(root)

    # -- git plumbing -------------------------------------------------------
    def _git(self, *args: str, env: dict | None = None) -> str:
        full_env = dict(os.environ)
        full_env["GIT_INDEX_FILE"] = str(self.index)
        full_env.update(_GIT_IDENTITY)
        if env:
            full_env.update(env)
        proc = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args], cwd=self.root, env=full_env,
            capture_output=True, text=True, encoding="utf-8", errors="surrogateescape",
        )
        if proc.returncode != 0:
            raise WorkspaceError(f"git {' '.join(args)} failed in {self.root}: {proc.stderr.strip()}")
        return proc.stdout

    def _make_starter(self) -> str:
        head = None
        try:
            head = self.repo.head.commit.hexsha
        except ValueError:  # unborn branch: empty repository
            pass
        if head:
            self._git("read-tree", head)
        else:
            self._git("read-tree", "--empty")
        self._git("add", "-A")
        tree = self._git("write-tree").strip()
        if head and self.repo.commit(head).tree.hexsha == tree:
            return head
        args = ["commit-tree", tree, "-m", "codegym starter"]
        if head:
            args[2:2] = ["-p", head]
        return self._git(*args).strip()

    def _refresh(self) -> None:
        self._git("add", "-A")

    # -- store interface ----------------------------------------------------
    def _full(self, path: str) -> Path:
        return self.root / path

    def _check_inside(self, path: str, full: Path, what: str) -> None:
        # a symlinked directory must not lead reads, writes or deletes out of
        # the working tree
        parent_real = os.path.realpath(full.parent)
        if parent_real != self.real_root and not parent_real.startswith(self.real_root + os.sep):
            raise WorkspaceError(f"cannot {what} {path!r}: it resolves outside the workspace")

    def _file(self, path: str) -> Path | None:
        """The file at `path` if it exists; WorkspaceError if it leads out."""
        full = self._full(path)
        link = os.path.islink(full)
        if link or "/" in path:
            self._check_inside(path, full, "read")
            if link and not os.path.realpath(full).startswith(self.real_root + os.sep):
                raise WorkspaceError(f"cannot read {path!r}: it is a symbolic link out of the workspace")
        return full if full.is_file() else None

    def read(self, path: str) -> str | None:
        full = self._file(path)
        return read_disk(full) if full is not None else None

    def check_writable(self, path: str, creating: bool) -> None:
        full = self._full(path)
        self._check_inside(path, full, "write")
        if os.path.islink(full):
            raise WorkspaceError(f"cannot write {path!r}: it is a symbolic link")
        if full.is_dir():
            raise WorkspaceError(f"cannot write {path!r}: a directory of that name exists")
        for d in parents(path):
            dp = self.root / d
            if dp.exists() and not dp.is_dir():
                raise WorkspaceError(f"cannot create file {path!r}: {d!r} is a file, not a directory")

    def write(self, path: str, text: str | None) -> None:
        full = self._full(path)
        if text is None:
            self._check_inside(path, full, "delete")
            if full.is_file() or full.is_symlink():
                full.unlink()
            # git does not track empty directories; keep the tree tidy
            d = full.parent
            while d != self.root and d.is_dir() and not any(d.iterdir()):
                d.rmdir()
                d = d.parent
            return
        full.parent.mkdir(parents=True, exist_ok=True)
        write_disk(full, text)

    def list(self) -> list[str]:
        self._refresh()
        out = self._git("ls-files", "-z")
        return sorted(p for p in out.split("\0") if p)

    def starter_text(self, path: str) -> str | None:
        try:
            blob = self._starter_tree / path
        except KeyError:
            return None
        if blob.type != "blob":
            return None
        return blob.data_stream.read().decode("utf-8", "surrogateescape")

    def changed_paths(self, touched: Iterable[str]) -> set[str]:
        self._refresh()
        out = self._git("diff", "--cached", "--no-renames", "--name-only", "-z", self.starter)
        return {p for p in out.split("\0") if p} | set(touched)

    def readable(self) -> Iterator[str]:
        """Current paths whose content stays inside the working tree."""
        for p in self.list():
            try:
                if self._file(p) is not None:
                    yield p
            except WorkspaceError:
                continue  # a symlink out of the workspace: not part of it

    def snapshot_files(self) -> dict[str, str]:
        return {p: read_disk(self.root / p) for p in self.readable()}

    def copy(self, dest: str | os.PathLike | None) -> GitStore:
        owned = dest is None
        target = Path(tempfile.mkdtemp(prefix="codegym-ws-")) if owned else Path(dest)
        if not owned and target.exists() and any(target.iterdir()):
            raise WorkspaceError(f"cannot copy the workspace to {target}: directory is not empty")
        shutil.copytree(self.root, target, symlinks=True, dirs_exist_ok=True,
                        ignore=ignore_private_indexes)
        return GitStore(target.resolve(), owned=owned, starter=self.starter,
                         index_from=self.index)

    def close(self) -> None:
        try:
            self.repo.close()
        finally:
            for fin in reversed(self._finalizers):
                fin()


def ignore_private_indexes(directory: str, names: list[str]) -> list[str]:
    return [n for n in names if n.startswith("codegym-index-")]


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
