"""Paths as users typed them (`display_path`), and files replaced in one step (`write_atomic`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["display_path", "write_atomic"]


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
