"""The local sandbox backend: warm fork servers inside bubblewrap, one per core.

Owns `LocalSandbox` (the `Sandbox` implementation behind
``make_sandbox("local")``), its worker slots, the host side of the fork-server
protocol, the build cache, and the decision between the two isolation modes.

    >>> sb = LocalSandbox(workers=2)          # or make_sandbox("local"): shared
    >>> b = sb.build("c", {"main.c": "int main(void){return 0;}"})
    >>> [r.status for r in sb.run_many(b, [RunRequest()] * 3)]
    ['ok', 'ok', 'ok']
    >>> sb.close()

Shape
-----
Each *slot* is one long-lived fork server (``forkserver.py``) started once,
not per execution.  With bubblewrap (``isolation == "bwrap"``) the server is
PID 1 of fresh user/pid/net/ipc/uts/cgroup namespaces::

    /usr /lib* /bin /sbin        read-only binds of the host system
    /etc                         only ld.so.cache, alternatives, localtime, a 3-line passwd/group
    /box                         the run directory (tmpfs, --size)  <- cwd of every program
    /tmp, /dev/shm               private tmpfs (--size)
    /proc, /dev                  the namespace's own; / and /dev are remounted read-only
    env                          PATH, HOME=/tmp, LANG=C.UTF-8 only (--clearenv)

No network (empty net namespace), no /root, /home, /work or repository, no
capabilities, no further user namespaces.  When the host runs as root every
slot runs as its own unprivileged uid (61000 + n, claimed system-wide with an
abstract socket), because RLIMIT_NPROC is not enforced for root.  After every
execution the server kills every other process of its namespace, reaps them
and wipes /box, /tmp and /dev/shm, so runs never see each other.

Without bubblewrap (``isolation == "rlimits"``, or ``CODEGYM_NO_BWRAP=1``) the
same server runs as a plain process with rlimits only: no filesystem or
network isolation; the run directory and TMPDIR are private per slot
directories; it warns once.  As root each slot still has its own uid (so the
program cannot read other slots, and the server kills every process of that
uid after a run); as an ordinary user programs run as that user, RLIMIT_NPROC
is not set (it would count all of the user's processes) and the server, a
child subreaper, kills the program's process tree.

``CODEGYM_SANDBOX_DEBUG=1`` passes the servers' stderr through to the host's.

Limits
------
CPU time (RLIMIT_CPU, whole seconds, plus the verdict when the reported CPU
time exceeds ``time_s``), wall time (the server kills at ``Limits.wall()``;
the host has its own deadline a little later), processes (RLIMIT_NPROC, per
uid and user namespace), file size, open files, output (each stream read
through a pipe with a cap), disk (``disk_mb`` sizes the run-directory and
/tmp tmpfs mounts of a slot; a request with another size gets a slot
restarted with that size).  Memory: the server samples the total resident
memory of all the program's processes every 5 ms and kills past
``memory_mb`` (proportional set size when processes share pages), and
languages with ``limit_address_space`` (Python, JavaScript) also get
RLIMIT_AS, so that an allocation fails cleanly (MemoryError) before that.

Executions
----------
`run` takes a free slot, sends one request frame and reads one answer with a
host-side deadline (wall limit + margin).  A server that dies, talks garbage
or misses the deadline is killed with its whole namespace and restarted; the
request is retried once on a fresh slot.  A request that breaks the server
twice is the program's doing (runtime_error); one that hangs it is a
timeout.  `sandbox_error` is reserved for the infrastructure (a slot that
cannot start, a missing toolchain, a host I/O failure).

Builds are cached by content hash, in memory: sources, and the compiler output
that comes back over the protocol after compiling *inside* the sandbox.  Every
request carries the files of its build, so no other build (a reference
solution, a test generator) is ever reachable from inside a sandbox.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import logging
import math
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from codegym.core.limits import COMPILE_LIMITS, Limits
from codegym.sandbox import forkserver as fs
from codegym.sandbox.classify import RawOutcome, classify, failure
from codegym.core.languages import (SANDBOX_PATH, LanguageSpec,
                                       get_language, list_languages, python_path)
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox

log = logging.getLogger("codegym.sandbox")

#: first uid tried for slots when the host runs as root
UID_BASE = 61000
UID_RANGE = 4000
#: extra seconds the host waits beyond the wall limit before declaring the server hung
HOST_MARGIN_S = 2.0
#: seconds a slot may take to start and say ready
START_TIMEOUT_S = 20.0
#: requests a slot holds at once in `run_many`: the next one waits in the pipe while
#: the current one runs, so the slot does not idle for the host's round trip
PIPELINE = 2
#: builds kept in memory before the least recently used are dropped (a dropped Build
#: object still runs: it carries its files)
MAX_BUILDS = 2048
MAX_BUILD_BYTES = 256 << 20
#: a compile may run in any slot whose run directory has at least this much room
MIN_COMPILE_DISK_MB = 64

_SERVER_SOURCE = Path(fs.__file__).read_bytes()
#: the command line runs only this; the server's source follows on its stdin
#: (length-prefixed), so that nothing outside the sandbox has to be readable inside it
_BOOTSTRAP = ("import os\n"
              "def _r(n):\n"
              " b = bytearray()\n"
              " while len(b) < n:\n"
              "  c = os.read(0, n - len(b))\n"
              "  if not c: raise SystemExit(1)\n"
              "  b += c\n"
              " return bytes(b)\n"
              "exec(compile(_r(int.from_bytes(_r(4), 'big')), 'codegym-forkserver', 'exec'),"
              " {'__name__': '__main__'})\n")
_warned_rlimits = False
_warn_lock = threading.Lock()


class _SlotBroken(Exception):
    """The server died or said something that is not a valid answer."""


class _SlotHung(_SlotBroken):
    """The server did not answer before the host deadline."""


class _SlotStartError(Exception):
    """A slot could not be started (infrastructure)."""


# --------------------------------------------------------------------------- isolation

@functools.lru_cache(maxsize=None)
def _bwrap_features() -> frozenset[str]:
    try:
        out = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(f for f in ("--disable-userns", "--size", "--remount-ro", "--as-pid-1",
                                 "--die-with-parent", "--clearenv", "--perms") if f in out)


def _warn_rlimits(reason: str) -> None:
    global _warned_rlimits
    with _warn_lock:
        if not _warned_rlimits:
            _warned_rlimits = True
            log.warning("codegym sandbox: %s; programs run with rlimits only (no filesystem, "
                        "network or process-namespace isolation)", reason)


_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning(message)


def bwrap_available() -> bool:
    """True when bubblewrap is installed with the features the local backend needs."""
    need = {"--size", "--remount-ro", "--as-pid-1", "--die-with-parent", "--clearenv"}
    return shutil.which("bwrap") is not None and need <= _bwrap_features()


def _claim_uid() -> tuple[int, socket.socket]:
    """An unprivileged uid no other slot on this machine uses, held by an abstract socket."""
    for uid in range(UID_BASE, UID_BASE + UID_RANGE):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(f"\0codegym-sandbox-uid-{uid}")
            return uid, s
        except OSError:
            s.close()
    raise _SlotStartError("no free sandbox uid")


def _kill_uid(uid: int) -> None:
    """Kill every process of `uid` (host is root; used in the rlimits mode only)."""
    for _ in range(5):
        found = False
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                if os.stat(f"/proc/{d}").st_uid == uid:
                    os.kill(int(d), signal.SIGKILL)
                    found = True
            except OSError:
                pass
        if not found:
            return
        time.sleep(0.01)


def _proc_start(pid: int) -> str | None:
    """A process's start time (distinguishes a live pid from a reused one)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _instance_dir() -> str:
    """A fresh directory for one sandbox instance, under one root per host user.

    Named after the owning process (pid and start time), so that directories of
    processes that died without close() (killed, or forked children that left
    through os._exit) are found and removed by the next instance.
    """
    root = os.path.join(tempfile.gettempdir(), f"codegym-sandbox-{os.getuid()}")
    os.makedirs(root, mode=0o711, exist_ok=True)
    st = os.lstat(root)
    if not os.path.isdir(root) or os.path.islink(root) or st.st_uid != os.getuid():
        raise RuntimeError(f"{root} is not a directory owned by this user")
    os.chmod(root, 0o711)  # slot uids traverse it to reach the build store
    for name in os.listdir(root):
        try:
            pid, start, _ = name.split("-", 2)
            alive = _proc_start(int(pid)) == start
        except ValueError:
            alive = False
        if not alive:
            _rmtree(os.path.join(root, name))
    me = os.getpid()
    d = tempfile.mkdtemp(prefix=f"{me}-{_proc_start(me)}-", dir=root)
    os.chmod(d, 0o711)
    return d


def _rmtree(path: str) -> None:
    """Remove a directory tree that programs may have made hard to remove (chmod 000).

    Permissions are only ever changed *inside* the tree, never on its parent.
    """
    path = os.path.abspath(path)
    if not os.path.lexists(path):
        return

    def onerror(func, p, exc):
        if isinstance(exc[1], FileNotFoundError):
            return
        parent = os.path.dirname(p)
        try:
            if parent.startswith(path + "/") or parent == path:
                os.chmod(parent, 0o700)
            if p != path and not os.path.islink(p) and os.path.isdir(p):
                os.chmod(p, 0o700)
                shutil.rmtree(p, ignore_errors=True)
            elif p != path:
                os.unlink(p)
        except OSError:
            pass
    try:
        shutil.rmtree(path, onerror=onerror)
    except RecursionError:
        pass
    if os.path.lexists(path):
        subprocess.run(["rm", "-rf", "--one-file-system", "--", path], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# --------------------------------------------------------------------------- host side of the protocol

class _Conn:
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
            raise _SlotHung("the sandbox server did not answer in time")
        p = select.poll()
        p.register(fd, ev)
        if not p.poll(max(1, int(left * 1000))):
            raise _SlotHung("the sandbox server did not answer in time")

    def _wait_writable(self, deadline: float) -> None:
        """Wait until the request pipe takes more, reading what the server answers
        meanwhile into the buffer: with a request queued behind a running one (see
        `LocalSandbox.run_many`), the server may be blocked writing a big answer that
        only this thread reads, while this thread waits to write."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _SlotHung("the sandbox server did not answer in time")
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
                raise _SlotHung("the sandbox server did not answer in time")
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
            data = os.read(self.rfd, fs.CHUNK)
        except BlockingIOError:
            return
        except OSError as e:
            raise _SlotBroken(f"{self.WHAT} failed: {e}") from None
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
                raise _SlotBroken(f"sandbox server pipe closed: {e}") from None
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
                raise _SlotBroken(self.GONE)
            try:
                data = os.read(self.rfd, max(fs.CHUNK, n - len(self.buf)))
            except BlockingIOError:
                self._wait(self.rfd, select.POLLIN, deadline)
                continue
            except OSError as e:
                raise _SlotBroken(f"{self.WHAT} failed: {e}") from None
            if not data:
                self.eof = True
                raise _SlotBroken(self.GONE)
            self._feed(data)

    def recv(self, deadline: float, max_blobs: int, max_blob: Callable[[int], int]) -> tuple[dict, list[bytes]]:
        """One frame; sizes are checked before anything is allocated (the server is untrusted)."""
        self._need(fs.HEADER.size, deadline)
        magic, n = fs.HEADER.unpack_from(self.buf)
        if magic != fs.MAGIC or n > fs.MAX_HEADER:
            raise _SlotBroken("garbage from the sandbox server")
        self._need(fs.HEADER.size + n, deadline)
        try:
            hdr = json.loads(bytes(self.buf[fs.HEADER.size:fs.HEADER.size + n]))
        except ValueError:
            raise _SlotBroken("garbage from the sandbox server") from None
        del self.buf[:fs.HEADER.size + n]
        if not isinstance(hdr, dict):
            raise _SlotBroken("garbage from the sandbox server")
        lens = hdr.get("blobs", [])
        if (not isinstance(lens, list) or len(lens) > max_blobs
                or not all(isinstance(x, int) and 0 <= x <= max_blob(i) for i, x in enumerate(lens))):
            raise _SlotBroken("oversized or malformed answer from the sandbox server")
        blobs = []
        for x in lens:
            self._need(x, deadline)
            blobs.append(bytes(self.buf[:x]))
            del self.buf[:x]
        return hdr, blobs


# --------------------------------------------------------------------------- one slot

class _Slot:
    """One fork server: started lazily, restarted after any failure."""

    def __init__(self, sb: "LocalSandbox", index: int):
        self.sb = sb
        self.index = index
        self.proc: subprocess.Popen | None = None
        self.conn: _Conn | None = None
        self.disk_mb = 0
        self.uid: int | None = None
        self.uid_lock: socket.socket | None = None
        self.pid1 = False
        self.dir = os.path.join(sb._dir, f"slot{index}")

    # ----- lifecycle

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

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
        if self.fits(disk_mb, phase):
            return
        self.stop()
        self.start(disk_mb)

    def start(self, disk_mb: int) -> None:
        sb = self.sb
        if sb._root and self.uid is None:
            self.uid, self.uid_lock = _claim_uid()
        try:
            argv, env, cwd = (self._bwrap_cmd(disk_mb) if sb.isolation == "bwrap"
                              else self._plain_cmd())
        except OSError as e:
            raise _SlotStartError(f"cannot prepare sandbox slot: {e}") from None
        kw: dict = {}
        if sb._root:
            kw = {"user": self.uid, "group": self.uid, "extra_groups": []}
        # PR_SET_PDEATHSIG (bwrap --die-with-parent, and the server itself) fires when
        # the *thread* that forked exits, so every slot is spawned by one long-lived thread
        fut = sb._spawner.submit(subprocess.Popen, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=None if os.environ.get("CODEGYM_SANDBOX_DEBUG") else subprocess.DEVNULL,
                                 env=env, cwd=cwd, start_new_session=True, close_fds=True, **kw)
        try:
            self.proc = fut.result()
        except (OSError, subprocess.SubprocessError) as e:
            raise _SlotStartError(f"cannot start sandbox slot: {e}") from None
        self.conn = _Conn(self.proc.stdin.fileno(), self.proc.stdout.fileno())
        self.disk_mb = disk_mb
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            self.conn.send([len(_SERVER_SOURCE).to_bytes(4, "big"), _SERVER_SOURCE], deadline)
            hdr, _ = self.conn.recv(deadline, 0, lambda i: 0)
        except _SlotBroken as e:
            self.stop()
            raise _SlotStartError(f"sandbox slot did not start ({e}); "
                                  f"isolation={sb.isolation}") from None
        if hdr.get("op") != "ready" or hdr.get("protocol") != fs.PROTOCOL:
            self.stop()
            raise _SlotStartError("sandbox slot answered with an unexpected handshake")
        self.pid1 = hdr.get("pid") == 1
        if not hdr.get("seccomp"):
            _warn_once("seccomp", "codegym sandbox: no seccomp filter on this machine; programs may "
                       "leave kernel objects (keyrings, System V IPC) behind between executions")
        with sb._lock:
            sb.stats["slot_starts"] += 1

    def _common_cfg(self) -> dict:
        return {"keep_stderr": bool(os.environ.get("CODEGYM_SANDBOX_DEBUG"))}

    def _bwrap_cmd(self, disk_mb: int) -> tuple[list[str], dict, str]:
        sb = self.sb
        size = str(disk_mb << 20)
        shm = str(min(disk_mb, 64) << 20)
        a = ["bwrap", "--unshare-all", "--unshare-user", "--as-pid-1", "--die-with-parent",
             "--new-session", "--hostname", "sandbox"]
        if "--disable-userns" in _bwrap_features():
            a.append("--disable-userns")
        a += ["--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
            if os.path.islink(top):
                a += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                a += ["--ro-bind", top, top]
        for f in ("/etc/ld.so.cache", "/etc/ld.so.conf"):
            if os.path.exists(f):
                a += ["--ro-bind", f, f]
        if os.path.isdir("/etc/alternatives"):
            a += ["--ro-bind", "/etc/alternatives", "/etc/alternatives"]
        if os.path.islink("/etc/localtime"):
            a += ["--symlink", os.readlink("/etc/localtime"), "/etc/localtime"]
        passwd, group = self._etc_files()
        a += ["--ro-bind", passwd, "/etc/passwd", "--ro-bind", group, "/etc/group"]
        for src in sb._extra_binds:
            a += ["--ro-bind", src, src]
        a += ["--proc", "/proc", "--dev", "/dev",
              "--size", shm, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
              "--size", size, "--tmpfs", "/tmp",
              "--size", size, "--tmpfs", "/box",
              "--remount-ro", "/", "--chdir", "/box",
              "--clearenv", "--setenv", "PATH", sb._sandbox_path, "--setenv", "HOME", "/tmp",
              "--setenv", "LANG", "C.UTF-8"]
        cfg = {"box": "/box", "wipe": ["/tmp", "/dev/shm"], "kill_all": True,
               **self._common_cfg()}
        a += [sb._python, "-I", "-S", "-c", _BOOTSTRAP, json.dumps(cfg)]
        return a, {"PATH": SANDBOX_PATH}, "/"

    def _etc_files(self) -> tuple[str, str]:
        uid = self.uid if self.uid is not None else os.getuid()
        gid = self.uid if self.uid is not None else os.getgid()
        d = os.path.join(self.sb._dir, "etc")
        os.makedirs(d, mode=0o755, exist_ok=True)
        passwd = os.path.join(d, f"passwd{self.index}")
        group = os.path.join(d, f"group{self.index}")
        with open(passwd, "w") as f:
            f.write(f"root:x:0:0:root:/root:/bin/sh\nsandbox:x:{uid}:{gid}:sandbox:/tmp:/bin/sh\n"
                    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
        with open(group, "w") as f:
            f.write(f"root:x:0:\nsandbox:x:{gid}:\nnogroup:x:65534:\n")
        os.chmod(passwd, 0o644)
        os.chmod(group, 0o644)
        return passwd, group

    def _plain_cmd(self) -> tuple[list[str], dict, str]:
        sb = self.sb
        box = os.path.join(self.dir, "box")
        tmp = os.path.join(self.dir, "tmp")
        for d in (self.dir, box, tmp):
            os.makedirs(d, exist_ok=True)
            if self.uid is not None:
                os.chown(d, self.uid, self.uid)
            os.chmod(d, 0o700)
        if self.uid is not None:
            os.chown(self.dir, 0, 0)
            os.chmod(self.dir, 0o755)
            _kill_uid(self.uid)  # strays of a crashed earlier owner of this uid
        cfg = {"box": box, "wipe": [tmp],
               # kill(-1) is only safe as a uid that belongs to this slot alone
               "kill_all": self.uid is not None, **self._common_cfg()}
        env = {"PATH": sb._sandbox_path, "HOME": tmp, "TMPDIR": tmp, "LANG": "C.UTF-8"}
        return [sb._python, "-I", "-S", "-c", _BOOTSTRAP, json.dumps(cfg)], env, box

    def stop(self) -> None:
        p = self.proc
        self.proc = None
        self.conn = None
        if p is None:
            return
        try:
            os.kill(p.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for f in (p.stdin, p.stdout):
            try:
                if f:
                    f.close()
            except OSError:
                pass
        if self.sb.isolation == "rlimits" and self.uid is not None:
            _kill_uid(self.uid)

    def release_uid(self) -> None:
        if self.uid_lock is not None:
            self.uid_lock.close()
            self.uid_lock = None
            self.uid = None

    # ----- one request

    def call(self, header: dict, blobs: list[bytes], wall_s: float, max_out: int,
             max_collect: int, n_collect: int) -> tuple[dict, list[bytes]]:
        self.send_request(header, blobs)
        return self.recv_result(header, wall_s, max_out, max_collect, n_collect)

    def send_request(self, header: dict, blobs: list[bytes]) -> None:
        assert self.conn is not None
        frame = fs.pack_frame(header, blobs)
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
            raise _SlotBroken("the sandbox server answered out of turn")
        return hdr, out


# --------------------------------------------------------------------------- build store

@dataclass
class _BuildFiles:
    """`Build.artifacts` of the local backend: every file a run lays out (sources and
    compiler output) with its mode, kept in memory and sent with each request."""

    files: dict[str, tuple[bytes, int]]


def _build_size(b: Build) -> int:
    n = sum(len(v) for v in b.files.values())
    if isinstance(b.artifacts, _BuildFiles):
        n += sum(len(d) for rel, (d, _) in b.artifacts.files.items() if rel not in b.files)
    return n


def _normalised(language: str, files: Mapping[str, str | bytes]) -> tuple[LanguageSpec, dict[str, bytes], Build | None]:
    """The language, the files as bytes, and -- when a file name or content is unusable --
    the compile_error build every backend's `build` returns for it."""
    spec = get_language(language)
    try:
        return spec, _norm_files(files), None
    except ValueError as e:
        return spec, {}, Build(language=spec.name, key="", ok=False, files={},
                               result=failure("compile_error", str(e), phase="compile"))


#: modules a Python file imports, by the file's content hash (see `_preload_list`)
_IMPORTS: dict[bytes, frozenset[str]] = {}
_IMPORTS_MAX = 4096


def _imports_of(data: bytes) -> frozenset[str]:
    """Modules a Python source imports (anywhere in it: `forkserver.imported_modules`);
    nothing if it does not compile."""
    key = hashlib.sha1(data).digest()
    got = _IMPORTS.get(key)
    if got is None:
        names: set[str] = set()
        if len(data) <= 1 << 20:
            try:
                names = fs.imported_modules(compile(data, "<run file>", "exec", dont_inherit=True))
            except Exception:  # noqa: BLE001 -- (SyntaxError, ValueError, RecursionError, ...)
                pass
        got = frozenset(names)
        if len(_IMPORTS) >= _IMPORTS_MAX:
            _IMPORTS.pop(next(iter(_IMPORTS)), None)
        _IMPORTS[key] = got
    return got


def _preload_list(files: Mapping[str, bytes | tuple[bytes, int]]) -> list[str]:
    """The fork server's PRELOAD modules that the run's Python files import (any of them:
    a driver's candidate sits in a folder of its own), except names the run's own files
    or folders provide (its module must stay the one it imports).  `files`: path ->
    content, or (content, mode) as a build lays them out."""
    own: set[str] = set()
    wanted: set[str] = set()
    for rel, data in files.items():
        *dirs, name = rel.split("/")
        own.update(dirs)
        own.add(name.partition(".")[0])
        if name.endswith(".py"):
            wanted |= _imports_of(data[0] if isinstance(data, tuple) else data)
    out: set[str] = set()
    for n in wanted:
        top = n.partition(".")[0]
        if top not in own:
            out.update(x for x in (top, n) if x in fs.PRELOAD)
    return sorted(out)


def _norm_files(files: Mapping[str, str | bytes]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for k, v in files.items():
        try:
            fs._safe_rel(k)
        except ValueError:
            raise ValueError(f"invalid file path {k!r}: paths must be relative, without '..'") from None
        out[k] = v.encode() if isinstance(v, str) else bytes(v)
    return out


@functools.cache
def _launcher() -> tuple[bytes, str]:
    """`harness.LAUNCHER`'s source and the directory its hidden program sits in."""
    from codegym.judge import harness
    return harness.LAUNCHER.encode(), harness.HIDDEN_DIR


def _launched_program(build: Build, spec: LanguageSpec, args: list[str],
                      extra: Mapping[str, bytes]) -> tuple[str, str] | None:
    """(main file, code key) of the hidden program a run of `harness.LAUNCHER` would
    launch, or None when the run is not one.  The server then runs that program as
    the launcher would (same ``__file__``, ``sys.argv`` tail, ``sys.path[0]``, cwd,
    exit codes and tracebacks) without compiling it in every child: its code is
    cached under a hash of its path and content, like a build's main module."""
    source, hidden = _launcher()
    if not args or build.files.get(spec.main_file) != source:
        return None
    rel = f"{hidden}/{args[0]}"
    data = extra.get(rel)  # (`extra`'s paths are checked: `_norm_files`)
    if data is None:
        return None  # the launcher reports the missing file itself
    h = hashlib.sha256(b"launched\0" + rel.encode() + b"\0" + data)
    return rel, "launched:" + h.hexdigest()[:32]


def _key(spec: LanguageSpec, files: Mapping[str, bytes]) -> str:
    h = hashlib.sha256(spec.fingerprint().encode())
    for k in sorted(files):
        h.update(b"\0F" + k.encode() + b"\0" + len(files[k]).to_bytes(8, "big") + files[k])
    return h.hexdigest()[:32]


# --------------------------------------------------------------------------- the sandbox

class _BuildStore:
    """Builds (compiled artifacts, compile errors) shared by the sandboxes of one process
    that compile the same way: one compile per content hash even when every env of a
    rollout has its own sandbox. Keyed by (sandbox class, isolation)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cache: collections.OrderedDict[str, Build] = collections.OrderedDict()
        self.locks: dict[str, threading.Lock] = {}
        self.bytes = 0


_STORES: dict[tuple, _BuildStore] = {}
_STORES_PID = os.getpid()
_STORES_LOCK = threading.Lock()


def _build_store(kind: tuple) -> _BuildStore:
    global _STORES, _STORES_PID, _STORES_LOCK
    if _STORES_PID != os.getpid():  # a forked child starts afresh (locks may be held)
        _STORES, _STORES_PID, _STORES_LOCK = {}, os.getpid(), threading.Lock()
    with _STORES_LOCK:
        store = _STORES.get(kind)
        if store is None:
            store = _STORES[kind] = _BuildStore()
        return store


class LocalSandbox(Sandbox):
    """Fork-server slots on this machine; see the module docstring.

    workers    number of slots (default: os.cpu_count())
    isolation  "auto" (bwrap when usable, else rlimits with a warning), "bwrap" or "rlimits";
               CODEGYM_NO_BWRAP=1 forces "rlimits"
    python     interpreter for the fork servers and Python programs (default: python_path())
    pipeline   requests a slot holds at once in `run_many` (1: send the next request only
               after the answer to the last)

    `stats` counts compiles, build cache hits, executions and slot starts.
    """

    def __init__(self, workers: int | None = None, isolation: str = "auto",
                 python: str | None = None, pipeline: int = PIPELINE):
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        self.pipeline = max(1, int(pipeline))
        self._python = python or python_path()
        if not os.path.isfile(self._python):
            raise RuntimeError(f"the sandbox needs a Python interpreter at {self._python} "
                               "(set CODEGYM_PYTHON)")
        if isolation not in ("auto", "bwrap", "rlimits"):
            raise ValueError(f"isolation must be auto, bwrap or rlimits, not {isolation!r}")
        if os.environ.get("CODEGYM_NO_BWRAP", "") not in ("", "0"):
            isolation = "rlimits"
        requested = isolation
        if isolation in ("auto", "bwrap"):
            if bwrap_available():
                isolation = "bwrap"
            elif isolation == "bwrap":
                raise RuntimeError("isolation='bwrap' requested but bubblewrap (bwrap >= 0.5) is not usable")
            else:
                _warn_rlimits("bubblewrap (bwrap) is not installed")
                isolation = "rlimits"
        else:
            _warn_rlimits("rlimits mode requested (CODEGYM_NO_BWRAP or isolation='rlimits')")
        self.isolation = isolation
        self._root = os.geteuid() == 0
        self.stats: collections.Counter = collections.Counter()
        self._closed = False
        self._init_state()
        if isolation == "bwrap":
            # a bwrap that cannot create namespaces (e.g. inside some containers) is found
            # at the first slot start; fall back once, loudly, rather than fail every run
            slot = self._lazy.pop()
            error = None
            for _ in range(2):  # a slow machine is not a reason to give up isolation
                try:
                    slot.start(Limits().disk_mb)
                    self._free.append(slot)
                    error = None
                    break
                except _SlotStartError as e:
                    slot.stop()
                    error = e
            if error is not None:
                self._lazy.append(slot)
                if requested == "bwrap":
                    self.close()
                    raise RuntimeError(f"isolation='bwrap' requested but bubblewrap failed: {error}")
                _warn_rlimits(f"bubblewrap is installed but failed ({error})")
                self.isolation = "rlimits"

    # ----- state (re-created in a forked child)

    def _init_state(self) -> None:
        self._pid = os.getpid()
        self._dir = _instance_dir()
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codegym-sandbox-spawn")
        self._slots = [_Slot(self, i) for i in range(self.workers)]
        self._free: list[_Slot] = []
        self._mutex = threading.RLock()
        self._cond = threading.Condition(self._mutex)
        # callers waiting for a slot, first come first served: one condition each on
        # the same lock, so a freed slot wakes exactly the longest waiter (a plain
        # Condition lets the thread that just gave a slot back take it again, and at
        # concurrency 32 some callers waited seconds for their turn)
        self._waiters: collections.deque[threading.Condition] = collections.deque()
        self._lock = threading.Lock()
        self._ids = 0
        self._extra_binds, self._sandbox_path = self._toolchain_binds()
        self._finalizer = weakref.finalize(self, _cleanup, self._slots, self._dir, self._spawner)
        # slots start lazily, when first taken
        self._lazy = list(reversed(self._slots))

    def _toolchain_binds(self) -> tuple[list[str], str]:
        """Install prefixes of toolchains outside the system dirs, and the sandbox PATH."""
        binds: list[str] = []
        path = SANDBOX_PATH.split(":")
        system = ("/usr/", "/bin/", "/sbin/", "/lib")
        forbidden = ("/root", "/home", "/work", "/tmp", "/proc", "/sys", "/dev", "/etc", "/var", "/run")
        tools = [self._python]
        for spec in list_languages():
            tools += [p for p in spec.tool_paths().values() if p]
        for t in tools:
            real = os.path.realpath(t)
            for p, d in ((real, os.path.dirname(real)), (t, os.path.dirname(t))):
                if p.startswith(system):
                    continue
                prefix = os.path.dirname(d) or d
                if prefix in ("/", "") or prefix.startswith(forbidden):
                    continue
                if prefix not in binds:
                    binds.append(prefix)
            if os.path.dirname(t) not in path and not t.startswith(system):
                path.append(os.path.dirname(t))
        return binds, ":".join(path)

    def _check_fork(self) -> None:
        if self._closed:
            raise RuntimeError("the sandbox is closed")
        if os.getpid() != self._pid:
            # a forked child must not talk to its parent's servers nor remove its store:
            # drop the inherited handles (the parent keeps its own) and start afresh
            self._finalizer.detach()
            for s in self._slots:
                for f in (s.proc.stdin, s.proc.stdout) if s.proc else ():
                    try:
                        f.close()
                    except OSError:
                        pass
                if s.uid_lock is not None:
                    s.uid_lock.close()
            self._init_state()

    # ----- slots

    def _pick(self, disk_mb: int, phase: str) -> _Slot | None:
        """A free slot, preferring one that needs no restart for this request (lock held)."""
        for i in range(len(self._free) - 1, -1, -1):  # most recently used first
            if self._free[i].fits(disk_mb, phase):
                return self._free.pop(i)
        if self._lazy:
            return self._lazy.pop()
        if self._free:
            return self._free.pop()
        return None

    def _take(self, disk_mb: int, phase: str) -> _Slot:
        """A free slot; callers are served in the order they asked."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the sandbox is closed")
            if not self._waiters:
                slot = self._pick(disk_mb, phase)
                if slot is not None:
                    return slot
            me = threading.Condition(self._mutex)
            self._waiters.append(me)
            try:
                while True:
                    if self._closed:
                        raise RuntimeError("the sandbox is closed")
                    if self._waiters[0] is me:
                        slot = self._pick(disk_mb, phase)
                        if slot is not None:
                            return slot
                    me.wait()
            finally:
                self._waiters.remove(me)
                if self._waiters and (self._free or self._lazy or self._closed):
                    self._waiters[0].notify()

    def _give(self, slot: _Slot) -> None:
        with self._cond:
            self._free.append(slot)
            if self._waiters:
                self._waiters[0].notify()

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _dispatch(self, header: dict, blobs: list[bytes], limits: Limits, phase: str,
                  max_collect: int = 0, n_collect: int = 0,
                  first_attempt: int = 0) -> tuple[ExecResult, list[tuple[str, bytes, int]]]:
        """Run one request on some slot, with restart/retry; classify the answer.
        (`first_attempt=1`: a first attempt already broke its slot; this is the retry.)"""
        self._check_fork()
        last = ""
        for attempt in range(first_attempt, 2):
            slot = self._take(limits.disk_mb, phase)
            try:
                try:
                    slot.ensure(limits.disk_mb, phase)
                except _SlotStartError as e:
                    last = str(e)
                    continue
                header["id"] = self._next_id()
                try:
                    hdr, out = slot.call(header, blobs, limits.wall(), limits.output_bytes,
                                         max_collect, n_collect)
                except _SlotHung:
                    slot.stop()
                    with self._lock:
                        self.stats["slot_restarts"] += 1
                    return failure("timeout", "wall-clock limit exceeded: the sandbox supervisor "
                                   "stopped answering and was restarted", phase=phase,
                                   wall_s=limits.wall()), []
                except _SlotBroken as e:
                    slot.stop()
                    with self._lock:
                        self.stats["slot_restarts"] += 1
                    last = str(e)
                    if attempt == 0:
                        continue  # maybe a fluke of the infrastructure: once more on a fresh slot
                    return failure("runtime_error", f"the program broke the sandbox supervisor ({e})",
                                   phase=phase), []
                if hdr.get("dirty"):
                    slot.stop()  # could not wipe: start clean next time
                try:
                    return self._result(hdr, out, limits, phase, n_collect)
                except _SlotBroken as e:
                    slot.stop()
                    last = str(e)
                    # an error before the program started is the infrastructure's
                    if attempt == 0 or hdr.get("ran") is not True:
                        continue
                    return failure("runtime_error", f"the program broke the sandbox supervisor ({e})",
                                   phase=phase), []
            finally:
                self._give(slot)
        return failure("sandbox_error", f"sandbox infrastructure failure: {last}", phase=phase), []

    def _result(self, hdr: dict, out: list[bytes], limits: Limits, phase: str,
                n_collect: int) -> tuple[ExecResult, list[tuple[str, bytes, int]]]:
        """Validate an answer (untrusted) and classify it."""
        if hdr.get("error") is not None:
            raise _SlotBroken(f"sandbox server: {str(hdr['error'])[:500]}")
        if len(out) < 2:
            raise _SlotBroken("answer without output streams")

        def opt_int(v):
            if v is None or (isinstance(v, int) and not isinstance(v, bool)):
                return v
            raise _SlotBroken("malformed answer")

        def num(v):
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0:
                return float(v)
            raise _SlotBroken("malformed answer")
        killed = hdr.get("killed")
        if killed not in (None, "wall", "output", "memory"):
            raise _SlotBroken("malformed answer")
        xe = hdr.get("exec_error")
        if xe is not None and not isinstance(xe, str):
            raise _SlotBroken("malformed answer")
        raw = RawOutcome(exit_code=opt_int(hdr.get("exit_code")), signal=opt_int(hdr.get("signal")),
                         cpu_s=num(hdr.get("cpu_s")), wall_s=num(hdr.get("wall_s")),
                         maxrss_kb=int(num(hdr.get("maxrss_kb"))), killed=killed,
                         out_trunc=bool(hdr.get("out_trunc")), err_trunc=bool(hdr.get("err_trunc")),
                         exec_error=xe[:2000] if xe else None)
        res = classify(raw, out[0], out[1], limits, phase=phase)
        with self._lock:
            self.stats["executions"] += 1
        collected = []
        col = hdr.get("collected", [])
        if not isinstance(col, list):
            raise _SlotBroken("malformed answer")
        for item in col[:n_collect]:
            if (not isinstance(item, list) or len(item) != 3 or not isinstance(item[0], str)
                    or not isinstance(item[1], int) or not 2 <= item[1] < len(out)
                    or not isinstance(item[2], int)):
                raise _SlotBroken("malformed answer")
            try:
                fs._safe_rel(item[0])
            except ValueError:
                raise _SlotBroken("malformed answer") from None
            collected.append((item[0], out[item[1]], item[2] & 0o755))
        return res, collected

    # ----- limits -> request

    def _rlimits(self, spec: LanguageSpec, limits: Limits, wrapper: bool = False,
                 phase: str = "run") -> dict:
        mib = 1 << 20
        as_mb = limits.memory_mb + spec.as_overhead_mb
        # programs of languages that do not want an address-space limit (C, C++: a failed
        # malloc would be a segfault, not a memory verdict) are held by resident memory only
        use_as = not wrapper and (spec.limit_address_space or phase == "compile")
        nproc = None
        if self.isolation == "bwrap" or self._root:
            # the server and the program itself count too (per uid, per user namespace)
            nproc = limits.processes + spec.extra_processes + 2
        return {
            "cpu": max(1, math.ceil(limits.time_s)),
            "wall": limits.wall(),
            "as": as_mb * mib if use_as else None,
            "rss": limits.memory_mb * mib,
            "nproc": nproc,
            "fsize": limits.file_size_mb * mib,
            "nofile": limits.open_files,
            # C/C++ programs get the whole memory as stack (like most judges); runtimes that
            # start threads would reserve that much per thread, so they keep the default
            "stack": (min(limits.memory_mb, 1024) * mib) if spec.as_overhead_mb == 0 else 8 * mib,
            "out": limits.output_bytes,
        }

    # ----- Sandbox API

    def build(self, language: str, files: Mapping[str, str | bytes],
              limits: Limits | None = None) -> Build:
        """Lay out and (for compiled languages) compile `files` inside the sandbox; cached."""
        spec, norm, bad = _normalised(language, files)
        if bad is not None:
            return bad
        key = _key(spec, norm)
        self._check_fork()
        if not spec.available():
            return Build(language=spec.name, key=key, ok=False, files=norm,
                         result=failure("sandbox_error", spec.missing_message(), phase="compile"))
        self._check_fork()
        store = _build_store((type(self), self.isolation))
        with store.lock:
            lock = store.locks.setdefault(key, threading.Lock())
        with lock:
            with store.lock:
                b = store.cache.get(key)
                if b is not None:
                    store.cache.move_to_end(key)
                    with self._lock:
                        self.stats["build_cache_hits"] += 1
                    return b
            b = self._make_build(spec, key, norm, limits or COMPILE_LIMITS)
            with store.lock:
                store.cache[key] = b
                store.bytes += _build_size(b)
                while len(store.cache) > 1 and (len(store.cache) > MAX_BUILDS or store.bytes > MAX_BUILD_BYTES):
                    old, ob = store.cache.popitem(last=False)
                    store.bytes -= _build_size(ob)
                    store.locks.pop(old, None)
            return b

    def _make_build(self, spec: LanguageSpec, key: str, files: dict[str, bytes], climits: Limits) -> Build:
        layout = {rel: (data, 0o644) for rel, data in files.items()}
        if not spec.compiled:
            return Build(language=spec.name, key=key, ok=True, files=files, artifacts=_BuildFiles(layout))
        with self._lock:
            self.stats["compiles"] += 1
        max_collect = climits.file_size_mb << 20
        header, blobs = self._files_header(layout, {})
        header.update({"op": "run", "exec": spec.compile_argv(climits.memory_mb), "env": dict(spec.env),
                       "limits": self._rlimits(spec, climits, phase="compile"),
                       "collect": list(spec.artifacts), "collect_max": max_collect * max(1, len(spec.artifacts))})
        res, collected = self._dispatch(header, blobs, climits, "compile", max_collect, len(spec.artifacts))
        got = {rel: (data, mode) for rel, data, mode in collected}
        if res.status == "ok" and not all(a in got for a in spec.artifacts):
            res.status = "compile_error"
            res.message = "the compiler did not produce " + ", ".join(a for a in spec.artifacts if a not in got)
        if res.status != "ok":
            return Build(language=spec.name, key=key, ok=False, files=files, result=res)
        for rel, (data, mode) in got.items():
            layout[rel] = (data, 0o755 if mode & 0o111 else 0o644)
        return Build(language=spec.name, key=key, ok=True, files=files, result=res,
                     artifacts=_BuildFiles(layout))

    @staticmethod
    def _files_header(layout: Mapping[str, tuple[bytes, int]],
                      extra: Mapping[str, bytes]) -> tuple[dict, list[bytes]]:
        """Every file of a run travels with its request: no store of other builds is
        reachable from inside the sandbox (a program could read reference solutions)."""
        blobs: list[bytes] = []
        fl = []
        for rel, (data, mode) in layout.items():
            if rel not in extra:
                fl.append([rel, len(blobs), mode])
                blobs.append(data)
        for rel, data in extra.items():
            fl.append([rel, len(blobs), 0o644])
            blobs.append(data)
        return {"files": fl}, blobs

    def _request(self, build: Build, stdin: str | bytes, limits: Limits, argv: Sequence[str],
                 extra_files: Mapping[str, str | bytes] | None,
                 wrapper: Sequence[str] | None) -> tuple[dict, list[bytes]]:
        header, blobs = self._request_base(build, limits, argv, extra_files, wrapper)
        return self._with_stdin(header, blobs, stdin)

    @staticmethod
    def _with_stdin(header: dict, blobs: list[bytes], stdin: str | bytes) -> tuple[dict, list[bytes]]:
        """A request from a base (`_request_base`, not changed) and its stdin."""
        header, blobs = dict(header), list(blobs)
        data = stdin.encode() if isinstance(stdin, str) else bytes(stdin)
        if data:
            header["stdin"] = len(blobs)
            blobs.append(data)
        return header, blobs

    def _request_base(self, build: Build, limits: Limits, argv: Sequence[str],
                      extra_files: Mapping[str, str | bytes] | None,
                      wrapper: Sequence[str] | None) -> tuple[dict, list[bytes]]:
        """Everything of a run request but its stdin and id."""
        spec = get_language(build.language)
        art = build.artifacts
        if not isinstance(art, _BuildFiles):
            raise ValueError("this build was not made by a LocalSandbox")
        extra = _norm_files(extra_files) if extra_files else {}
        args = [str(a) for a in argv]
        inprocess = spec.inprocess == "python" and not wrapper
        launched = _launched_program(build, spec, args, extra) if inprocess else None
        layout = art.files
        if launched is not None:  # (nothing runs the launcher's own file)
            layout = {k: v for k, v in layout.items() if k != spec.main_file}
        header, blobs = self._files_header(layout, extra)
        header.update({"op": "run", "limits": self._rlimits(spec, limits, wrapper=bool(wrapper)),
                       "env": dict(spec.env)})
        if spec.main_file not in extra:
            header["build"] = build.key  # lets the server reuse the compiled main module
        if launched is not None:
            # the launcher's work done by the server: the hidden program runs as the
            # main file, its code compiled once per content (not in every child)
            header["python"] = {"main": launched[0], "argv": args[1:], "argv0": "path"}
            header["build"] = launched[1]
        elif inprocess:
            header["python"] = {"main": spec.main_file, "argv": args}
        if inprocess:
            preload = _preload_list({**layout, **extra} if extra else layout)
            if preload:
                header["python"]["preload"] = preload
        else:
            header["exec"] = [*(wrapper or ()), *spec.run_argv(limits.memory_mb), *args]
        return header, blobs

    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        if not build.ok:
            assert build.result is not None
            return build.result
        self._check_fork()
        limits = limits or Limits()
        try:
            header, blobs = self._request(build, stdin, limits, argv, extra_files, wrapper)
        except ValueError as e:
            return failure("runtime_error", str(e))
        if randomize_layout:
            header["layout"] = "random"  # (the forked interpreter's heap and code; `Sandbox.run`)
        res, _ = self._dispatch(header, blobs, limits, "run")
        return res

    def run_many(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None = None,
                 stop: Callable[[int, ExecResult], bool] | None = None) -> list[ExecResult | None]:
        """One thread per slot, each keeping its slot for a stream of requests with
        `pipeline` of them sent ahead (see `_stream`); same contract as `Sandbox.run_many`."""
        if not build.ok or self.pipeline < 2 or len(requests) < 2:
            return self._run_many_threads(build, requests, limits, stop, self.workers)
        self._check_fork()
        return self._run_many_threads(build, requests, limits, stop, self.workers,
                                      serve=lambda claim, done: self._stream(build, requests, limits, claim, done))

    def _stream(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None,
                claim: Callable[[], int | None], done: Callable[[int, ExecResult], None]) -> None:
        """Run claimed requests on one slot, the next ones already written to its pipe.

        The server reads a request only after answering the one before, so a queued
        request changes nothing inside the slot; it only spares the slot the host's
        round trip between two runs (the host thread may be waiting for the GIL).
        Anything unusual -- a slot that hangs, breaks or reports a dirty wipe -- ends the
        stream on that slot: the request it concerned is decided as `_dispatch` would
        decide it, and the requests queued behind it are run again through `_dispatch`
        (they never started: the server had not read them).
        """
        queued: collections.deque = collections.deque()  # (index, header, blobs, limits)
        slot: _Slot | None = None
        nxt = None  # claimed, not yet sent
        # requests mostly differ by stdin only (a judge's cases): one base per distinct rest
        # (keyed by the extra files' identity: `requests` holds them for the whole call)
        bases: dict[tuple, tuple[dict, list[bytes]]] = {}

        def plain(entry: tuple, first_attempt: int = 0) -> None:  # on some slot, with retries
            done(entry[0], self._dispatch(entry[1], entry[2], entry[3], "run", first_attempt=first_attempt)[0])
        try:
            while True:
                while len(queued) < self.pipeline:
                    if nxt is None:
                        i = claim()
                        if i is None:
                            break
                        req = requests[i]
                        lim = req.limits or limits or Limits()
                        try:
                            bkey = (id(req.extra_files), tuple(req.argv), lim)
                            base = bases.get(bkey)
                            if base is None:
                                base = bases[bkey] = self._request_base(build, lim, req.argv,
                                                                        req.extra_files, None)
                            header, blobs = self._with_stdin(*base, req.stdin)
                        except ValueError as e:
                            done(i, failure("runtime_error", str(e)))
                            continue
                        nxt = (i, header, blobs, lim)
                    lim = nxt[3]
                    if slot is not None and not slot.fits(lim.disk_mb, "run"):
                        if queued:
                            break  # the slot must restart with another size: finish what it has
                        self._give(slot)
                        slot = None
                    if slot is None:
                        slot = self._take(lim.disk_mb, "run")
                        try:
                            slot.ensure(lim.disk_mb, "run")
                        except _SlotStartError:
                            self._give(slot)
                            slot = None
                            plain(nxt)
                            nxt = None
                            continue
                    nxt[1]["id"] = self._next_id()
                    try:
                        slot.send_request(nxt[1], nxt[2])
                    except (_SlotBroken, _SlotHung):
                        if queued:
                            break  # a request of the queue broke the server: its answer decides
                        self._restart(slot)
                        self._give(slot)
                        slot = None
                        plain(nxt)
                        nxt = None
                        continue
                    queued.append(nxt)
                    nxt = None
                if not queued:  # (the fill loop leaves a claimed request unsent only behind a queue)
                    return
                assert slot is not None
                i, header, blobs, lim = queued.popleft()
                res, ok = self._stream_answer(slot, header, lim)
                if not ok:
                    self._give(slot)
                    slot = None
                    rest = list(queued)
                    queued.clear()
                    if res is None:
                        plain((i, header, blobs, lim), first_attempt=1)
                    else:
                        done(i, res)
                    for entry in rest:
                        plain(entry)
                else:
                    done(i, res)
        finally:
            if slot is not None:
                if queued:  # an exception with requests in the pipe: their answers would be stale
                    self._restart(slot)
                self._give(slot)

    def _restart(self, slot: _Slot) -> None:
        slot.stop()
        with self._lock:
            self.stats["slot_restarts"] += 1

    def _stream_answer(self, slot: _Slot, header: dict, limits: Limits) -> tuple[ExecResult | None, bool]:
        """(result, slot still usable) for the oldest queued request; (None, False) when
        the request must be retried as `_dispatch` retries after a broken first attempt."""
        try:
            hdr, out = slot.recv_result(header, limits.wall(), limits.output_bytes)
        except _SlotHung:
            self._restart(slot)
            return failure("timeout", "wall-clock limit exceeded: the sandbox supervisor "
                           "stopped answering and was restarted", phase="run", wall_s=limits.wall()), False
        except _SlotBroken:
            self._restart(slot)
            return None, False
        try:
            res = self._result(hdr, out, limits, "run", 0)[0]
        except _SlotBroken:
            self._restart(slot)
            return None, False
        if hdr.get("dirty"):
            self._restart(slot)  # could not wipe: start clean next time
            return res, False
        return res, True

    def close(self) -> None:
        """Kill every slot (and with it its namespace) and remove the build store."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
            for w in self._waiters:
                w.notify()
        if os.getpid() == self._pid:
            self._finalizer()
        else:
            self._finalizer.detach()


def _cleanup(slots: list[_Slot], directory: str, spawner: ThreadPoolExecutor) -> None:
    for s in slots:
        try:
            s.stop()
        finally:
            s.release_uid()
    spawner.shutdown(wait=True)
    _rmtree(directory)


__all__ = ["LocalSandbox", "bwrap_available"]
