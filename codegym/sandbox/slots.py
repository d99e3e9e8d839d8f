"""The host side of a slot: the kernel that the local and docker backends share.

A slot is one fork server the host talks to (a process of this machine,
`codegym.sandbox.local.ProcessSlot`, or a container's runner,
`codegym.sandbox.containers.ContainerSlot`).  This module owns what does not
depend on where it runs: the slot errors, the framed connection with deadlines
(`Conn`), the request/answer exchange (`Slot`) and the checks that turn an
(untrusted) answer into an `ExecResult` (`answer_result`, `answer_files`).
"""

from __future__ import annotations

import json
import math
import os
import select
import time
from collections.abc import Callable

from codegym.core.limits import Limits
from codegym.sandbox.classify import RawOutcome, classify
from codegym.sandbox.forkserver import protocol as wire
from codegym.sandbox.types import ExecResult

#: extra seconds the host waits beyond the wall limit before declaring the server hung
HOST_MARGIN_S = 2.0
#: a compile may run in any slot whose run directory has at least this much room
MIN_COMPILE_DISK_MB = 64


class SlotBroken(Exception):
    """The server died or said something that is not a valid answer."""


class SlotHung(SlotBroken):
    """The server did not answer before the host deadline."""


class SlotStartError(Exception):
    """A slot could not be started (infrastructure)."""


class Conn:
    """Frames over a pair of non-blocking pipe descriptors, every wait bounded by a deadline."""

    def __init__(self, wfd: int, rfd: int):
        self.wfd, self.rfd = wfd, rfd
        os.set_blocking(wfd, False)
        os.set_blocking(rfd, False)
        self.buf = bytearray()
        self.eof = False

    def _wait(self, fd: int, ev: int, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SlotHung("the sandbox server did not answer in time")
        p = select.poll()
        p.register(fd, ev)
        if not p.poll(max(1, int(left * 1000))):
            raise SlotHung("the sandbox server did not answer in time")

    def _wait_writable(self, deadline: float) -> None:
        """Wait until the request pipe takes more, reading what the server answers
        meanwhile into the buffer: with a request queued behind a running one (see
        `ServerSandbox.run_many`), the server may be blocked writing a big answer that
        only this thread reads, while this thread waits to write."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SlotHung("the sandbox server did not answer in time")
            p = select.poll()
            want_in = 0 if self.eof else select.POLLIN
            if self.wfd == self.rfd:  # one socket both ways (a container's attach socket)
                p.register(self.wfd, select.POLLOUT | want_in)
            else:
                p.register(self.wfd, select.POLLOUT)
                if want_in:
                    p.register(self.rfd, want_in)
            events = p.poll(max(1, int(left * 1000)))
            if not events:
                raise SlotHung("the sandbox server did not answer in time")
            readable = False
            for fd, ev in events:
                if fd == self.wfd and ev & (select.POLLOUT | select.POLLERR | select.POLLHUP | select.POLLNVAL):
                    return  # writable, or broken: the write says which
                if fd == self.rfd and ev & (select.POLLIN | select.POLLHUP):
                    readable = True
            if readable:
                self._read_some()

    #: how errors name this connection
    WHAT = "sandbox server pipe"
    GONE = "the sandbox server exited"

    def _feed(self, data: bytes) -> None:
        """Take bytes read from the answer side (a subclass may unwrap a framing)."""
        self.buf += data

    def _read_some(self) -> None:
        try:
            data = os.read(self.rfd, wire.CHUNK)
        except BlockingIOError:
            return
        except OSError as e:
            raise SlotBroken(f"{self.WHAT} failed: {e}") from None
        if data:
            self._feed(data)
        else:
            self.eof = True

    def send(self, bufs: list[bytes], deadline: float) -> None:
        views = [memoryview(b) for b in bufs if len(b)]
        while views:
            try:
                n = os.writev(self.wfd, views[:64])
            except BlockingIOError:
                self._wait_writable(deadline)
                continue
            except (BrokenPipeError, ConnectionResetError, OSError) as e:
                raise SlotBroken(f"sandbox server pipe closed: {e}") from None
            while n and views:
                if n >= len(views[0]):
                    n -= len(views[0])
                    views.pop(0)
                else:
                    views[0] = views[0][n:]
                    n = 0

    def _need(self, n: int, deadline: float) -> None:
        while len(self.buf) < n:
            if self.eof:
                raise SlotBroken(self.GONE)
            try:
                data = os.read(self.rfd, max(wire.CHUNK, n - len(self.buf)))
            except BlockingIOError:
                self._wait(self.rfd, select.POLLIN, deadline)
                continue
            except OSError as e:
                raise SlotBroken(f"{self.WHAT} failed: {e}") from None
            if not data:
                self.eof = True
                raise SlotBroken(self.GONE)
            self._feed(data)

    def recv(self, deadline: float, max_blobs: int, max_blob: Callable[[int], int]) -> tuple[dict, list[bytes]]:
        """One frame; sizes are checked before anything is allocated (the server is untrusted)."""
        self._need(wire.HEADER.size, deadline)
        magic, n = wire.HEADER.unpack_from(self.buf)
        if magic != wire.MAGIC or n > wire.MAX_HEADER:
            raise SlotBroken("garbage from the sandbox server")
        self._need(wire.HEADER.size + n, deadline)
        try:
            hdr = json.loads(bytes(self.buf[wire.HEADER.size:wire.HEADER.size + n]))
        except ValueError:
            raise SlotBroken("garbage from the sandbox server") from None
        del self.buf[:wire.HEADER.size + n]
        if not isinstance(hdr, dict):
            raise SlotBroken("garbage from the sandbox server")
        lens = hdr.get("blobs", [])
        if (not isinstance(lens, list) or len(lens) > max_blobs
                or not all(isinstance(x, int) and 0 <= x <= max_blob(i) for i, x in enumerate(lens))):
            raise SlotBroken("oversized or malformed answer from the sandbox server")
        blobs = []
        for x in lens:
            self._need(x, deadline)
            blobs.append(bytes(self.buf[:x]))
            del self.buf[:x]
        return hdr, blobs


class Slot:
    """One fork server seen from the host; subclasses start and stop it.

    `conn` is the connection while the server runs (None otherwise) and `disk_mb`
    the size of its run directory and /tmp.
    """

    conn: Conn | None = None
    disk_mb = 0
    #: the server cannot be signalled by the programs it runs (PID 1 of a namespace, or
    #: its seccomp guard): a server that dies under a request died of the infrastructure
    guarded = False
    #: (host path, shown as) pairs: a slot whose run directory and /tmp are host
    #: directories (the rlimits mode) shows them in program output as the other modes
    #: do ("/box", "/tmp"), so that results do not depend on the slot or the mode
    shown_paths: tuple[tuple[bytes, bytes], ...] = ()

    @property
    def alive(self) -> bool:
        raise NotImplementedError

    def fits(self, disk_mb: int, phase: str) -> bool:
        """Whether this running slot can serve a request without a restart.

        The run directory and /tmp are tmpfs mounts sized when the slot starts, so a
        run needs a slot of exactly its disk_mb; a compiler takes any slot that is
        not tiny (compilers are trusted with the slot's size).
        """
        if not self.alive:
            return False
        if phase == "compile":
            return self.disk_mb >= min(disk_mb, MIN_COMPILE_DISK_MB)
        return self.disk_mb == disk_mb

    def ensure(self, disk_mb: int, phase: str = "run") -> None:
        """Start (or restart) the slot so that it fits the request."""
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def release_uid(self) -> None:
        """Give back the slot's uid, if it holds one beyond `stop`."""

    def forget(self) -> None:
        """In a forked child: let go of the parent's server without touching it."""
        raise NotImplementedError

    def handshake(self, deadline: float, who: str, hint: str, uid: int | None = None) -> dict:
        """The server's ready frame (of this protocol and, given `uid`, of that uid).
        Anything else stops the slot and raises SlotStartError: "`who` did not start
        (why); `hint`", or "`who` answered with an unexpected handshake"."""
        assert self.conn is not None
        try:
            hdr, _ = self.conn.recv(deadline, 0, lambda i: 0)
        except SlotBroken as e:
            self.stop()
            raise SlotStartError(f"{who} did not start ({e}); {hint}") from None
        if (hdr.get("op") != "ready" or hdr.get("protocol") != wire.PROTOCOL
                or (uid is not None and hdr.get("uid") != uid)):
            self.stop()
            raise SlotStartError(f"{who} answered with an unexpected handshake")
        self.guarded = hdr.get("guard") is True or hdr.get("pid") == 1
        return hdr

    # ----- one request

    def call(self, header: dict, blobs: list[bytes], wall_s: float, max_out: int,
             max_collect: int, n_collect: int) -> tuple[dict, list[bytes]]:
        self.send_request(header, blobs)
        return self.recv_result(header, wall_s, max_out, max_collect, n_collect)

    def send_request(self, header: dict, blobs: list[bytes]) -> None:
        assert self.conn is not None
        frame = wire.pack_frame(header, blobs)
        size = sum(len(b) for b in frame)
        # writing is bounded by the server's reading speed (~1 GB/s); be generous
        self.conn.send(frame, time.monotonic() + 30.0 + size / 50e6)

    def recv_result(self, header: dict, wall_s: float, max_out: int, max_collect: int = 0,
                    n_collect: int = 0) -> tuple[dict, list[bytes]]:
        """The answer to `header` (the oldest request without one): the server starts a
        request only after answering the one before, so the deadline counts from now."""
        assert self.conn is not None
        deadline = time.monotonic() + wall_s + HOST_MARGIN_S + 0.1 * wall_s

        def max_blob(i: int) -> int:
            return max_out if i < 2 else max_collect
        hdr, out = self.conn.recv(deadline, 2 + n_collect, max_blob)
        if hdr.get("op") != "result" or hdr.get("id") != header.get("id"):
            raise SlotBroken("the sandbox server answered out of turn")
        return hdr, out


def answer_result(hdr: dict, out: list[bytes], limits: Limits, phase: str,
                  shown_paths: tuple[tuple[bytes, bytes], ...] = ()) -> ExecResult:
    """Validate an answer (untrusted: SlotBroken when malformed) and classify it, the
    output with `shown_paths` (`Slot.shown_paths`) replaced."""
    if hdr.get("error") is not None:
        raise SlotBroken(f"sandbox server: {str(hdr['error'])[:500]}")
    if len(out) < 2:
        raise SlotBroken("answer without output streams")

    def opt_int(v):
        if v is None or (isinstance(v, int) and not isinstance(v, bool)):
            return v
        raise SlotBroken("malformed answer")

    def num(v):
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0:
            return float(v)
        raise SlotBroken("malformed answer")
    killed = hdr.get("killed")
    if killed not in (None, "wall", "output", "memory"):
        raise SlotBroken("malformed answer")
    xe = hdr.get("exec_error")
    if xe is not None and not isinstance(xe, str):
        raise SlotBroken("malformed answer")
    raw = RawOutcome(exit_code=opt_int(hdr.get("exit_code")), signal=opt_int(hdr.get("signal")),
                     cpu_s=num(hdr.get("cpu_s")), wall_s=num(hdr.get("wall_s")),
                     maxrss_kb=int(num(hdr.get("maxrss_kb"))), killed=killed,
                     out_trunc=bool(hdr.get("out_trunc")), err_trunc=bool(hdr.get("err_trunc")),
                     exec_error=xe[:2000] if xe else None)
    streams = out[:2]
    for host, shown in shown_paths:
        streams = [b.replace(host, shown) if host in b else b for b in streams]
    return classify(raw, streams[0], streams[1], limits, phase=phase)


def answer_files(hdr: dict, out: list[bytes], n_collect: int) -> list[tuple[str, bytes, int]]:
    """The files an answer collected (compiler output): (path, content, mode), checked."""
    collected = []
    col = hdr.get("collected", [])
    if not isinstance(col, list):
        raise SlotBroken("malformed answer")
    for item in col[:n_collect]:
        if (not isinstance(item, list) or len(item) != 3 or not isinstance(item[0], str)
                or not isinstance(item[1], int) or not 2 <= item[1] < len(out)
                or not isinstance(item[2], int)):
            raise SlotBroken("malformed answer")
        try:
            wire.safe_rel(item[0])
        except ValueError:
            raise SlotBroken("malformed answer") from None
        collected.append((item[0], out[item[1]], item[2] & 0o755))
    return collected


