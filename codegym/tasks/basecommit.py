"""The base commit of a pristine tree, made in one pass (`commit_base`).

A repository task's base tree is committed as branch ``base`` of a new repository in the
tree itself, packed, so that every episode copies a few files of ``.git``. ``git add -A
--force``, ``commit`` and ``repack -a -d`` make it in three passes over the objects (the
repack's delta search is most of a second instance's first reset: 2.3 of 3.4 s on pytest's
tree at load 19); ``git fast-import`` writes the same commit (same tree, identity, date and
message: the same object id) straight into one pack, and ``read-tree`` plus ``update-index
--refresh`` make the index ``add`` would have made. Where ``add`` would store other bytes
than the file's (attributes that convert line ends or encodings: the refresh finds the file
changed, or `_stream` sees attributes that may convert a file) or a path fast-import cannot
name, the three-pass way is taken instead.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
from pathlib import Path

from codegym.core.git import GIT_IDENTITY, git


def _entries(top: str, rel: str = ""):
    """(path, mode, bytes) of every file and link under `top` but ``.git``, as ``git add -A``
    sees them (a link's bytes are its target)."""
    with os.scandir(os.path.join(top, rel) if rel else top) as it:
        items = sorted(it, key=lambda e: e.name)
    for e in items:
        path = f"{rel}/{e.name}" if rel else e.name
        st = e.stat(follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            yield path, b"120000", os.fsencode(os.readlink(e.path))
        elif stat.S_ISDIR(st.st_mode):
            if path != ".git":
                yield from _entries(top, path)
        elif stat.S_ISREG(st.st_mode):
            with open(e.path, "rb") as fh:
                yield path, (b"100755" if st.st_mode & stat.S_IXUSR else b"100644"), fh.read()


@functools.cache
def _ident(who: str) -> str:
    """``name <email> seconds zone`` of `GIT_IDENTITY` for the author or the committer, as git reads it."""
    return git(["var", f"GIT_{who}_IDENT"], env=GIT_IDENTITY).stdout.decode().strip()


def _stream(entries: list[tuple[str, bytes, bytes]]) -> bytes | None:
    """fast-import's input for one commit of `entries`; None where a path needs quoting or
    ``add`` may store other bytes: attributes that filter or re-encode, or a text file with
    CRLF line ends where any attributes are set (``git add`` would normalise it)."""
    attrs = [d for p, m, d in entries if p.rsplit("/", 1)[-1] == ".gitattributes" and m != b"120000"]
    if any(w in a for a in attrs for w in (b"filter", b"ident", b"working-tree-encoding")):
        return None
    if attrs and any(b"\r\n" in d and b"\0" not in d[:8000] for _p, m, d in entries if m != b"120000"):
        return None
    parts = [f"commit refs/heads/base\nauthor {_ident('AUTHOR')}\ncommitter {_ident('COMMITTER')}\n"
             "data 5\nbase\n".encode()]
    for path, mode, data in entries:
        raw = os.fsencode(path)
        if b"\n" in raw or raw.startswith(b'"'):
            return None
        parts += [b"M " + mode + b" inline " + raw + b"\ndata " + str(len(data)).encode() + b"\n", data, b"\n"]
    parts.append(b"\n")
    return b"".join(parts)


def commit_base(root: str | os.PathLike, error: type[Exception]) -> None:
    """Make `root` a repository whose branch ``base`` (checked out) commits every file in it,
    packed; `error` is raised with git's words on a failure."""
    root = Path(root)
    git(["init", "-q", "--template=", "-b", "base"], root, env=GIT_IDENTITY, error=error)
    stream = _stream(list(_entries(str(root))))
    if stream is not None:
        git(["fast-import", "--quiet"], root, input=stream, env=GIT_IDENTITY, error=error)
        git(["read-tree", "base"], root, env=GIT_IDENTITY, error=error)
        if git(["update-index", "-q", "--refresh"], root, env=GIT_IDENTITY, check=False).returncode == 0:
            return
        shutil.rmtree(root / ".git")  # a file add would store otherwise: its way
        git(["init", "-q", "--template=", "-b", "base"], root, env=GIT_IDENTITY, error=error)
    for args in (["add", "-A", "--force"], ["commit", "-q", "--allow-empty", "--no-verify", "-m", "base"],
                 ["repack", "-a", "-d", "-q"], ["prune-packed"]):
        git(args, root, env=GIT_IDENTITY, error=error)
