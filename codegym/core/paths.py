"""Paths as users typed them (`display_path`), and files and folders replaced in one step
(`write_atomic`, `staged_folder`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path


def display_path(path: str | os.PathLike) -> str:
    """`path` relative to the working directory when it is inside it, else as given."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path) if rel.startswith("..") else rel


def write_atomic(path: str | os.PathLike, data: str | bytes, *, mode: int | None = None,
                 prefix: str = ".tmp-", suffix: str = "") -> None:
    """Write `data` (str: UTF-8) to `path` through a temporary file in the same folder
    and a rename, so readers see the old file or the new one, never a part. `mode`:
    permissions of the new file (default: mkstemp's 0600). Creates the folder."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@contextlib.contextmanager
def staged_folder(dest: str | os.PathLike) -> Iterator[Path]:
    """A new temporary folder beside `dest` to write a whole output into; when the block
    ends normally it replaces `dest` (an old `dest` is moved aside, then removed), when it
    raises it is removed and `dest` is left as it was: readers never see half an output."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        old = None
        if dest.exists() or dest.is_symlink():
            old = dest.with_name(f".{dest.name}.old-{uuid.uuid4().hex[:8]}")
            os.rename(dest, old)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink()
