"""The run directory of a slot: files written into it, files collected from it, wiping it."""

from __future__ import annotations

import os
import stat

from codegym.sandbox.forkserver.protocol import safe_rel


def open_for_write(root: str, rel: str, mode: int) -> int:
    rel = safe_rel(rel)
    d = os.path.dirname(rel)
    if d:
        try:
            os.mkdir(os.path.join(root, d))
        except FileExistsError:
            pass
        except FileNotFoundError:  # (nested)
            os.makedirs(os.path.join(root, d), exist_ok=True)
    return os.open(os.path.join(root, rel), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                   | os.O_CLOEXEC, mode & 0o777)


def wipe(root: str) -> None:
    """Remove everything below root (root itself stays: it is a mount point or slot dir).

    Entries belong to the slot's uid, so permission games (chmod 000) are undone
    by chmod; anything else raises and the host restarts the slot.
    """
    try:
        os.chmod(root, 0o755)
    except OSError:
        pass
    stack = [root]
    dirs = []
    while stack:
        d = stack.pop()
        try:
            it = list(os.scandir(d))
        except PermissionError:
            os.chmod(d, 0o700)
            it = list(os.scandir(d))
        for e in it:
            if e.is_dir(follow_symlinks=False):
                try:
                    os.chmod(e.path, 0o700)
                except OSError:
                    pass
                stack.append(e.path)
                dirs.append(e.path)
            else:
                os.unlink(e.path)
    for d in reversed(dirs):
        os.rmdir(d)


def collect(box: str, hdr: dict, blobs: list[bytes]) -> list:
    """Append the requested regular files of the run directory (compiler output) to blobs."""
    collected = []
    cmax = int(hdr.get("collect_max", 0))
    for rel in hdr.get("collect", []):
        try:
            fd = os.open(os.path.join(box, safe_rel(rel)),
                         os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except (OSError, ValueError):
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > cmax:
                continue
            data = b""
            while len(data) < st.st_size:
                part = os.read(fd, st.st_size - len(data))
                if not part:
                    break
                data += part
            cmax -= len(data)
            collected.append([rel, len(blobs), st.st_mode & 0o777])
            blobs.append(data)
        finally:
            os.close(fd)
    return collected
