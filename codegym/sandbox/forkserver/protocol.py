"""The host <-> server wire protocol: frames, their limits, and checked run-directory paths.

A frame is MAGIC + u32 header length + JSON header + raw payloads (their lengths
in ``header["blobs"]``).  The server reads with `Reader` (blocking); the host
reads with `codegym.sandbox.slots.Conn` (non-blocking, bounded by deadlines).
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Sequence

#: bump when the frame layout or the request/response fields change
PROTOCOL = 3
#: frame = MAGIC + u32 header length + JSON header + payloads (lengths in header["blobs"])
MAGIC = b"CGFS"
HEADER = struct.Struct(">4sI")
#: largest JSON header either side accepts
MAX_HEADER = 1 << 20
#: pipe buffer size requested for output and protocol pipes (Linux default max for users)
PIPE_SIZE = 1 << 20
CHUNK = 1 << 20
#: read size for output pipes and protocol headers: big reads allocate big
#: buffers, which grow the heap that every fork then has to copy
SMALL_READ = 1 << 16

#: one encoder for every frame (``json.dumps`` with separators builds a new one per call;
#: headers are plain trees, never circular)
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def pack_frame(header: dict, blobs: list[bytes] | tuple = ()) -> list[bytes]:
    """Encode one frame as a list of buffers (for writev)."""
    header = dict(header)
    header["blobs"] = [len(b) for b in blobs]
    raw = _encode(header).encode()
    if len(raw) > MAX_HEADER:
        raise ValueError("frame header too large")
    return [HEADER.pack(MAGIC, len(raw)) + raw, *blobs]


def write_all(fd: int, chunks: Sequence[bytes | memoryview]) -> None:
    bufs = [memoryview(b) for b in chunks if len(b)]
    while bufs:
        n = os.writev(fd, bufs[:64])
        while n and bufs:
            if n >= len(bufs[0]):
                n -= len(bufs[0])
                bufs.pop(0)
            else:
                bufs[0] = bufs[0][n:]
                n = 0


class Reader:
    """Blocking buffered reader over the protocol descriptor (server side)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()

    def _fill(self, want: int = SMALL_READ) -> bool:
        data = os.read(self.fd, max(SMALL_READ, min(want, CHUNK)))
        if not data:
            return False
        self.buf += data
        return True

    def read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill(n - len(self.buf)):
                raise EOFError
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def copy_to(self, n: int, out_fd: int | None) -> str | None:
        """Move n payload bytes to out_fd (None: discard). Returns an error text or None."""
        err = None
        while n:
            if not self.buf and not self._fill(n):
                raise EOFError
            take = memoryview(self.buf)[:n]
            k = len(take)
            if out_fd is not None and err is None:
                try:
                    write_all(out_fd, [take])
                except OSError as e:
                    err = f"{e.strerror or e}"
            take.release()
            del self.buf[:k]
            n -= k
        return err

    def header(self) -> dict:
        magic, n = HEADER.unpack(self.read_exact(HEADER.size))
        if magic != MAGIC or n > MAX_HEADER:
            raise ValueError("bad frame")
        return json.loads(self.read_exact(n))


def safe_rel(path: str) -> str:
    """`path` if it is a relative path without empty, "." or ".." parts (else ValueError)."""
    if not isinstance(path, str) or not path or "\0" in path or path.startswith("/"):
        raise ValueError(f"bad path {path!r}")
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"bad path {path!r}")
    return path
