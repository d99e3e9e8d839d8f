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
import stat
import tempfile
import uuid
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path

from codegym.core.git import GIT_IDENTITY, git, git_text


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


def read_disk(full: Path) -> str:
    with open(full, encoding="utf-8", errors="surrogateescape", newline="") as f:
        return f.read()


def write_disk(full: Path, text: str) -> None:
    # a file shared by hard links with the pristine tree it was copied from (`GitStore.copy`)
    # is replaced, never written through (its mode kept)
    mode = None
    try:
        st = os.lstat(full)
        if st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
            mode = stat.S_IMODE(st.st_mode)
            os.unlink(full)
    except FileNotFoundError:
        pass
    with open(full, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)
    if mode is not None:
        os.chmod(full, mode)


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link of `src` at `dst` (same file system), else a copy."""
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


class GitStore:
    """A git working tree on disk; the starter is a commit.

    The starter commit is built with a private index file (``GIT_INDEX_FILE``),
    so opening a dirty repository neither moves its branch nor touches its
    index: the commit object simply records the working tree as it was. The
    same private index, refreshed with ``git add -A``, answers "which files
    exist / changed since the starter" honouring .gitignore. Every git command
    goes through `codegym.core.git` (the repository's configuration neutralised);
    the starter's texts are read once each and shared by the copies.
    """

    kind = "git"

    def __init__(self, root: Path, owned: bool, starter: str | None = None,
                 index_from: Path | None = None, starter_texts: dict | None = None):
        self.root = root
        if not (root / ".git").exists():
            git(["init", "-q", "--template="], root, error=WorkspaceError)
        self.git_dir = Path(os.path.join(root, git_text(["rev-parse", "--git-dir"], root,
                                                        error=WorkspaceError).strip()))
        self.index = self.git_dir / f"codegym-index-{uuid.uuid4().hex[:12]}"
        self._finalizers: list[weakref.finalize] = [weakref.finalize(self, _unlink, self.index)]
        if owned:
            self._finalizers.append(weakref.finalize(self, shutil.rmtree, str(root), True))
        if index_from is not None and index_from.exists():
            shutil.copyfile(index_from, self.index)
        self.starter = starter if starter is not None else self._make_starter()
        # path -> the starter's text (None: not a file there); shared with copies
        self._starter_texts: dict[str, str | None] = starter_texts if starter_texts is not None else {}
        self.real_root = os.path.realpath(root)

    # -- git plumbing -------------------------------------------------------
    def _run(self, *args: str) -> str:
        return git_text(args, self.root, env={"GIT_INDEX_FILE": str(self.index), **GIT_IDENTITY},
                        error=WorkspaceError)

    def _make_starter(self) -> str:
        found = git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], self.root, check=False)
        head = found.stdout.decode().strip() if found.returncode == 0 else None  # None: an unborn branch
        if head:
            self._run("read-tree", head)
        else:
            self._run("read-tree", "--empty")
        self._run("add", "-A")
        tree = self._run("write-tree").strip()
        if head and self._run("rev-parse", f"{head}^{{tree}}").strip() == tree:
            return head
        args = ["commit-tree", tree, "-m", "codegym starter"]
        if head:
            args[2:2] = ["-p", head]
        return self._run(*args).strip()

    def _refresh(self) -> None:
        self._run("add", "-A")

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
        out = self._run("ls-files", "-z")
        return sorted(p for p in out.split("\0") if p)

    def starter_text(self, path: str) -> str | None:
        if path in self._starter_texts:  # the starter never changes
            return self._starter_texts[path]
        p = git(["cat-file", "blob", f"{self.starter}:{path}"], self.root, check=False)
        text = p.stdout.decode("utf-8", "surrogateescape") if p.returncode == 0 else None  # absent, or a folder
        self._starter_texts[path] = text
        return text

    def changed_paths(self, touched: Iterable[str]) -> set[str]:
        self._refresh()
        out = self._run("diff", "--cached", "--no-renames", "--name-only", "-z", self.starter)
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
        target = Path(tempfile.mkdtemp(prefix="codegym-ws-")) if dest is None else Path(dest)
        if not owned and target.exists() and any(target.iterdir()):
            raise WorkspaceError(f"cannot copy the workspace to {target}: directory is not empty")
        # files are hard links of this tree's (a copy of a large repository is then a matter of
        # directory entries; `write_disk` replaces a shared file instead of writing through
        # it, git writes new files and renames); the private index is copied (`__init__`)
        shutil.copytree(self.root, target, symlinks=True, dirs_exist_ok=True,
                        ignore=ignore_private_indexes, copy_function=_link_or_copy)
        return GitStore(target.resolve(), owned=owned, starter=self.starter,
                        index_from=self.index, starter_texts=self._starter_texts)

    def close(self) -> None:
        for fin in reversed(self._finalizers):
            fin()


def ignore_private_indexes(directory: str, names: list[str]) -> list[str]:
    return [n for n in names if n.startswith("codegym-index-")]


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
