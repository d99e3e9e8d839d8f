"""The Docker sandbox backend: a pool of long-lived containers, each running the fork server.

Owns `DockerSandbox` (behind ``make_sandbox("docker")``; this module's
`create(**kw)`), its container slots, the mapping from languages to images,
and the per-task views (`DockerSandbox.for_task`). Needs the ``docker`` SDK
(extra ``codegym[docker]``) and an engine (``DOCKER_HOST`` or the default
socket); ``codegym images build`` makes the default images.

    >>> sb = make_sandbox("docker")                       # shared instance, default images
    >>> sb.execute("python", {"main.py": "print(6 * 7)"}).stdout
    '42\\n'
    >>> with sb.for_task("perfcode/sum-pairs") as tsb:    # containers of this task only
    ...     judge(task, files, sandbox=tsb)

Same runner, same verdicts
--------------------------
Every container runs the *same* fork server as the local backend
(``codegym/sandbox/forkserver.py``, copied into the container with
``put_archive``) as PID 1 of the container's pid namespace, and the host talks
to it with the same frames over the container's attach socket (stdin in, the
multiplexed stdout stream out; the server's stderr is /dev/null). `DockerSandbox`
is a `LocalSandbox` whose slots are containers: request building, the build
cache by content hash, retry/restart rules, validation of the (untrusted)
answers and the classification into `ExecResult` statuses are the local
backend's code, so a verdict means the same on both. Per-run files (sources,
compiler output, extra files) travel inside the request frame exactly as in the
local backend, and the server wipes the run directory, /tmp and /dev/shm after
every run: no store of other builds (a task's reference solution) is ever
reachable inside a container.

One long-lived process per container: no ``docker run`` or ``docker exec`` per
test case (~200 ms and ~50 ms here); a warm run costs what a local run costs
plus the attach round trip through dockerd.

Pool
----
At most `workers` executions run at once (default: CPU count), over at most
`max_containers` warm containers (default: twice that), so that a mix of
languages (two images) or of tasks does not replace a container at every
switch. Requests get a slot first come, first served. Each slot holds at most
one container. A container is keyed by ``(image, scope)``: the image comes from the build's
language (`DEFAULT_IMAGES`, the ``images=`` mapping, or a task's own image),
the scope is the task a view was made for (`for_task`; ``None`` for the plain
sandbox). A slot only serves a request of its own key, so a container is
**never shared between tasks** (or images): a free slot whose container has
another key gets it removed and a fresh one started. A container is also
replaced when its tmpfs size (``Limits.disk_mb``) or memory cap does not fit
the request, after `max_runs` executions, and on any sign of damage (the
server died, hung past the host deadline, answered garbage or could not wipe
its directories). Removal is asynchronous (``docker rm -f``); `close()` waits
for it. Every container carries the labels ``codegym.sandbox=docker``,
``codegym.owner=<pid>-<start time>`` and ``codegym.host``; a new sandbox
removes containers of owners that died without closing.

Isolation (every container)
---------------------------
``network_mode="none"`` (never the host network), a read-only root
filesystem with tmpfs mounts for the run directory ``/box`` and ``/tmp``
(``size=disk_mb``) and ``/dev/shm``, a non-root uid of its own (claimed
machine-wide like the local slots' uids, so RLIMIT_NPROC counts only that
container's processes), ``cap_drop=["ALL"]``, ``no-new-privileges``, the
engine's default seccomp profile plus the fork server's own filter,
``mem_limit`` = ``memswap_limit`` (a backstop above ``Limits.memory_mb``,
which the server enforces per run as in the local backend), ``pids_limit``
and a CPU quota (``nano_cpus``). Per-run limits are rlimits set by the server,
only ever lowered (the container's hard limits cannot be raised). The runner
lives on a small anonymous volume at ``/opt/codegym`` (the engine refuses
``put_archive`` anywhere else on a read-only root); it is removed with the
container.

Images
------
Compiled languages need a Python in the image for the runner, so C and C++ use
``codegym/polyglot:latest`` (python3 + g++ + make); Python uses
``codegym/python:3.11``. A missing image is a ``sandbox_error`` result naming
the ``codegym images build`` command; a missing engine raises
`DockerUnavailable` when the sandbox is made.
"""

from __future__ import annotations

import collections
import io
import json
import logging
import os
import socket
import struct
import tarfile
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

try:  # the SDK (an absolute import: this module itself is codegym.sandbox.docker)
    import docker
    import docker.errors
except ImportError:  # reported by DockerSandbox(): make_sandbox("docker") explains the fix
    docker = None  # type: ignore[assignment]

from codegym.core.limits import COMPILE_LIMITS, Limits
from codegym.sandbox import forkserver as fs
from codegym.sandbox.classify import failure
from codegym.core.languages import SANDBOX_PATH, get_language, python_path
from codegym.sandbox.local import (LocalSandbox, _BuildFiles, _Conn, _normalised, _SlotBroken, _SlotStartError,
                                   _Slot, _build_size, _key, _proc_start)
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox

log = logging.getLogger("codegym.sandbox.docker")

#: language -> image of the default pool (the runner needs python3 in every image)
DEFAULT_IMAGES: dict[str, str] = {
    "python": "codegym/python:3.11",
    "c": "codegym/polyglot:latest",
    "cpp": "codegym/polyglot:latest",
}
#: image -> the `codegym images build` recipe that makes it
IMAGE_RECIPES: dict[str, str] = {
    "codegym/python:3.11": "python",
    "codegym/polyglot:latest": "polyglot",
    "codegym/cpp:latest": "cpp",
}
#: label on every container this backend creates (tests and sweeps count them by it)
LABEL = "codegym.sandbox"
LABEL_OWNER = "codegym.owner"
LABEL_HOST = "codegym.host"
LABEL_SCOPE = "codegym.scope"
#: interpreter of the runner inside the images
CONTAINER_PYTHON = "/usr/bin/python3"
RUNNER_DIR = "/opt/codegym"
#: container uids, disjoint from the local backend's 61000.. range
UID_BASE = 170000
UID_RANGE = 20000
#: seconds a container may take from create to the runner's ready frame
START_TIMEOUT_S = 60.0
#: memory above Limits.memory_mb left to the cgroup, so that the server's own kill
#: (memory_limit verdict) comes first and the cgroup's OOM killer is a backstop
MEM_MARGIN_MB = 256


class DockerUnavailable(RuntimeError):
    """No Docker engine answers (or the SDK is not usable)."""


# --------------------------------------------------------------------------- attach-socket framing

class _AttachConn(_Conn):
    """Fork-server frames over a container's attach socket.

    Input is the container's raw stdin; output is Docker's multiplexed stream
    (8-byte headers: stream id, 3 zero bytes, big-endian length), of which the
    stdout payload is the server's frame stream. Stderr payload is dropped.
    """

    WHAT = "container attach socket"
    GONE = "the container's runner exited"

    def __init__(self, sock: socket.socket):
        self.sock = sock
        super().__init__(sock.fileno(), sock.fileno())
        self.raw = bytearray()
        self.left = 0        # payload bytes still to come in the current docker frame
        self.stream = 1

    def _demux(self) -> None:
        raw = self.raw
        while raw:
            if self.left == 0:
                if len(raw) < 8:
                    return
                self.stream, self.left = raw[0], struct.unpack_from(">I", raw, 4)[0]
                if self.stream not in (0, 1, 2) or raw[1:4] != b"\0\0\0":
                    raise _SlotBroken("garbage on the container's attach stream")
                del raw[:8]
                continue
            k = min(self.left, len(raw))
            if self.stream == 1:
                self.buf += raw[:k]
            del raw[:k]
            self.left -= k

    def _feed(self, data: bytes) -> None:
        self.raw += data
        self._demux()


# --------------------------------------------------------------------------- uids

def _claim_uid() -> tuple[int, socket.socket]:
    """A uid no other container of this machine uses, held by an abstract socket."""
    start = UID_BASE + (os.getpid() * 7919) % UID_RANGE  # spread processes apart
    for i in range(UID_RANGE):
        uid = UID_BASE + (start - UID_BASE + i) % UID_RANGE
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(f"\0codegym-docker-uid-{uid}")
            return uid, s
        except OSError:
            s.close()
    raise _SlotStartError("no free container uid")


def _runner_tar() -> bytes:
    with open(fs.__file__, "rb") as f:
        data = f.read()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        ti = tarfile.TarInfo("forkserver.py")
        ti.size, ti.mode, ti.uid, ti.gid, ti.mtime = len(data), 0o644, 0, 0, int(time.time())
        tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


_RUNNER_TAR: bytes | None = None


def _remove(client, cid: str, uid_lock: socket.socket | None) -> None:
    """Remove a container (killing what runs in it) and only then free its uid."""
    try:
        client.api.remove_container(cid, force=True, v=True)
    except docker.errors.NotFound:
        pass
    except Exception as e:  # noqa: BLE001 - logged; the owner sweep retries later
        if "already in progress" not in str(e):
            log.warning("codegym docker: could not remove container %s: %s", cid[:12], e)
    finally:
        if uid_lock is not None:
            uid_lock.close()


# --------------------------------------------------------------------------- one container slot

@dataclass(frozen=True)
class _Want:
    """What the current request needs from a container (set per thread by build/run)."""

    image: str
    scope: str | None
    memory_mb: int


class _ContainerSlot:
    """One slot of the pool: at most one container, replaced whenever it does not fit."""

    #: same request/answer exchange as a local slot (uses only self.conn)
    _call = _Slot.call
    send_request = _Slot.send_request
    recv_result = _Slot.recv_result

    def __init__(self, sb: "DockerSandbox", index: int):
        self.sb = sb
        self.index = index
        self.proc = None          # (LocalSandbox compatibility: no host process)
        self.uid_lock = None
        self.container_id: str | None = None
        self.conn: _AttachConn | None = None
        self.sio = None
        self.want: _Want | None = None
        self.disk_mb = 0
        self.mem_mb = 0
        self.runs = 0
        self._uid: tuple[int, socket.socket] | None = None
        self._removing = None     # future of the previous container's removal

    @property
    def alive(self) -> bool:
        return self.conn is not None

    def fits(self, disk_mb: int, phase: str, want: _Want | None = None) -> bool:
        want = want or self.sb._want()
        if not self.alive or self.want is None:
            return False
        if (self.want.image, self.want.scope) != (want.image, want.scope):
            return False  # never across tasks or images
        if self.mem_mb < self.sb._mem_cap(want.memory_mb):
            return False
        if phase == "compile":
            return self.disk_mb >= min(disk_mb, 64)
        return self.disk_mb == disk_mb

    def ensure(self, disk_mb: int, phase: str = "run") -> None:
        want = self.sb._want()
        if self.fits(disk_mb, phase, want):
            return
        self.stop()
        self.settle()  # at most `max_containers` containers exist at any time
        if phase == "compile":
            # a compiler takes any container with room; start one the runs of the
            # build can reuse (runs need their exact disk size, see fits)
            disk_mb = max(min(disk_mb, 64), Limits().disk_mb)
        self.start(want, disk_mb)

    def start(self, want: _Want, disk_mb: int) -> None:
        global _RUNNER_TAR
        sb = self.sb
        uid, lock = _claim_uid()
        mem = max(sb.container_memory_mb, sb._mem_cap(want.memory_mb))
        cfg = {"box": "/box", "wipe": ["/tmp", "/dev/shm"], "kill_all": True,
               "keep_stderr": bool(os.environ.get("CODEGYM_SANDBOX_DEBUG"))}
        tmpfs_opt = f"size={disk_mb}m,mode=700,uid={uid},gid={uid},exec"
        cid = None
        try:
            c = sb._client.api.create_container(
                want.image,
                command=[sb._python, "-I", "-S", f"{RUNNER_DIR}/forkserver.py", json.dumps(cfg)],
                user=f"{uid}:{uid}", working_dir="/box", stdin_open=True, tty=False,
                hostname="sandbox", network_disabled=True,
                environment={"PATH": SANDBOX_PATH, "HOME": "/tmp", "LANG": "C.UTF-8"},
                volumes=[RUNNER_DIR],
                labels={LABEL: "docker", LABEL_OWNER: sb._owner, LABEL_HOST: socket.gethostname(),
                        LABEL_SCOPE: want.scope or ""},
                host_config=sb._client.api.create_host_config(
                    network_mode="none", read_only=True,
                    tmpfs={"/box": tmpfs_opt, "/tmp": tmpfs_opt},
                    shm_size=min(disk_mb, 64) << 20,
                    mem_limit=mem << 20, memswap_limit=mem << 20,
                    pids_limit=sb.pids_limit, nano_cpus=int(sb.cpus * 1e9),
                    cap_drop=["ALL"], security_opt=["no-new-privileges"],
                    oom_score_adj=500, init=False, ipc_mode="private"))
            cid = c["Id"]
            if _RUNNER_TAR is None:
                _RUNNER_TAR = _runner_tar()
            sb._client.api.put_archive(cid, RUNNER_DIR, _RUNNER_TAR)
            # attach before start: nothing the runner writes can be missed
            sio = sb._client.api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1,
                                                             "stream": 1})
            sock = getattr(sio, "_sock", sio)
            if not isinstance(sock, socket.socket):
                raise _SlotStartError("the docker backend needs a unix or plain tcp DOCKER_HOST "
                                      "(TLS attach sockets are not supported)")
            conn = _AttachConn(sock)
            sb._client.api.start(cid)
        except docker.errors.ImageNotFound:
            if cid:
                _remove(sb._client, cid, None)
            lock.close()
            raise _SlotStartError(sb._missing_image_message(want.image)) from None
        except (docker.errors.DockerException, OSError) as e:
            if cid:
                _remove(sb._client, cid, None)
            lock.close()
            raise _SlotStartError(f"cannot start a container of {want.image}: {e}") from None
        self.container_id, self.conn, self.sio, self.want = cid, conn, sio, want
        self._uid = (uid, lock)
        self.disk_mb, self.mem_mb, self.runs = disk_mb, mem, 0
        try:
            hdr, _ = conn.recv(time.monotonic() + START_TIMEOUT_S, 0, lambda i: 0)
        except _SlotBroken as e:
            self.stop()
            raise _SlotStartError(f"the runner in a container of {want.image} did not start ({e}); "
                                  f"does the image have {sb._python}?") from None
        if hdr.get("op") != "ready" or hdr.get("protocol") != fs.PROTOCOL or hdr.get("uid") != uid:
            self.stop()
            raise _SlotStartError("the container's runner answered with an unexpected handshake")
        with sb._lock:
            sb.stats["slot_starts"] += 1
            sb.stats["containers_started"] += 1

    def call(self, header: dict, blobs: list[bytes], wall_s: float, max_out: int,
             max_collect: int, n_collect: int) -> tuple[dict, list[bytes]]:
        self.runs += 1
        return self._call(header, blobs, wall_s, max_out, max_collect, n_collect)

    def stop(self) -> None:
        """Drop the container: close the attach socket now, remove it in the background."""
        cid, sio, conn, uid = self.container_id, self.sio, self.conn, self._uid
        self.container_id = self.conn = self.sio = self.want = None
        self._uid = None
        for s in (sio, conn.sock if conn else None):
            try:
                if s is not None:
                    s.close()
            except OSError:
                pass
        if cid is None:
            if uid:
                uid[1].close()
            return
        with self.sb._lock:
            self.sb.stats["containers_removed"] += 1
        try:
            self._removing = self.sb._reaper.submit(_remove, self.sb._client, cid, uid[1] if uid else None)
        except RuntimeError:  # reaper already shut down (interpreter exit): remove inline
            _remove(self.sb._client, cid, uid[1] if uid else None)

    def settle(self) -> None:
        """Wait until this slot's previous container is gone."""
        f, self._removing = self._removing, None
        if f is not None:
            try:
                f.result(timeout=self.sb._api_timeout)
            except Exception:  # noqa: BLE001 - _remove logs; the owner sweep retries
                pass

    def forget(self) -> None:
        """In a forked child: let go of the parent's container without touching it."""
        for s in (self.sio, self.conn.sock if self.conn else None):
            try:
                if s is not None:
                    s.close()
            except OSError:
                pass
        self.container_id = self.conn = self.sio = self.want = None
        self._uid = None

    def release_uid(self) -> None:
        pass  # a uid lives exactly as long as its container (see stop)


# --------------------------------------------------------------------------- the sandbox

@dataclass
class _DockerBuildFiles(_BuildFiles):
    """Build artifacts of the docker backend: the local layout plus where it was built."""

    image: str = ""
    scope: str | None = None


class _PoolState:
    def __init__(self) -> None:
        self.closed = False


def _connect(timeout: float, pool: int):
    if docker is None:
        raise DockerUnavailable("the docker sandbox needs the docker SDK: pip install 'codegym[docker]' "
                                "(or pip install docker)")
    try:
        client = docker.from_env(timeout=int(timeout), max_pool_size=pool)
        # no idle keep-alive connections: API calls are rare (container lifecycle only),
        # and a pool of idle sockets would look like a descriptor leak to callers
        client.api.headers["Connection"] = "close"
        client.ping()
        return client
    except Exception as e:  # noqa: BLE001 - every failure here means "no engine"
        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        raise DockerUnavailable(
            f"the docker sandbox needs a Docker engine, and none answers at {where} ({e}). Start one "
            "(e.g. `sudo dockerd`, or `codegym images build`, which can start it on Debian), set "
            "DOCKER_HOST, or use make_sandbox('local').") from None


class DockerSandbox(LocalSandbox):
    """Fork servers in a pool of long-lived containers; see the module docstring.

    workers              executions at once (default: CPU count)
    max_containers       warm containers kept (default: 2 * workers); the least recently
                         used idle one is replaced when a request needs another key
    images               language -> image, over DEFAULT_IMAGES
    image                one image for every language (a task's own image)
    max_runs             executions before a container is replaced (default 500)
    cpus                 CPU quota of each container (default 1.0)
    container_memory_mb  smallest memory cap of a container (default 1024); a request
                         gets at least Limits.memory_mb * 1.25 + 256 MiB
    pids_limit           cgroup pids cap of a container (default 512; per-run process
                         limits are RLIMIT_NPROC under the container's own uid)
    python               interpreter of the runner inside the images
    client               a docker.DockerClient (default: docker.from_env())
    """

    def __init__(self, workers: int | None = None, images: Mapping[str, str] | None = None,
                 image: str | None = None, max_runs: int = 500, cpus: float = 1.0,
                 container_memory_mb: int = 1024, pids_limit: int = 512,
                 python: str = CONTAINER_PYTHON, client=None, api_timeout_s: float = 120.0,
                 max_containers: int | None = None):
        # LocalSandbox.__init__ is not called: it chooses and probes host isolation
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        # one request at a time per container (run_many's threads call run): a
        # container is chosen per request for its task scope and image
        self.pipeline = 1
        self.max_containers = max(self.workers, int(max_containers or 2 * self.workers))
        self.isolation = "docker"
        # each container has its own uid, as root-mode local slots do: RLIMIT_NPROC applies
        self._root = True
        self._python = python
        self.images = {**DEFAULT_IMAGES, **{get_language(k).name: v for k, v in (images or {}).items()}}
        self.image = image
        self.max_runs = max(1, int(max_runs))
        self.cpus = float(cpus)
        self.container_memory_mb = int(container_memory_mb)
        self.pids_limit = int(pids_limit)
        self._api_timeout = api_timeout_s
        self._given_client = client
        self.stats: collections.Counter = collections.Counter()
        self._pool = _PoolState()
        self._init_state()

    # ----- state (re-created in a forked child)

    @property
    def _closed(self) -> bool:
        return self._pool.closed

    def _init_state(self) -> None:
        self._pid = os.getpid()
        self._client = self._given_client or _connect(self._api_timeout, self.workers + 4)
        self._owner = f"{self._pid}-{_proc_start(self._pid)}"
        self._reaper = ThreadPoolExecutor(max_workers=2, thread_name_prefix="codegym-docker-reaper")
        self._slots: list[_ContainerSlot] = []   # grows up to max_containers
        self._free: list[_ContainerSlot] = []
        self._running = 0
        self._tickets = 0     # next ticket of the FIFO queue of _take
        self._serving = 0     # ticket allowed to take a slot now
        self._cond = threading.Condition()
        self._build_cache: collections.OrderedDict[str, Build] = collections.OrderedDict()
        self._build_locks: dict[str, threading.Lock] = {}
        self._build_bytes = 0
        self._lock = threading.Lock()
        self._ids = 0
        self._tl = threading.local()
        self._image_ids: dict[str, str | None] = {}
        self._sweep_dead_owners()
        self._finalizer = weakref.finalize(self, _cleanup, self._slots, self._reaper, self._client,
                                           self._owner)

    def _check_fork(self) -> None:
        if self._closed:
            raise RuntimeError("the sandbox is closed")
        if os.getpid() != self._pid:
            # a forked child must not talk to its parent's containers nor remove them
            self._finalizer.detach()
            for s in self._slots:
                s.forget()
            self._given_client = None
            self._init_state()

    def _sweep_dead_owners(self) -> None:
        """Remove containers left by codegym processes of this host that died unclosed."""
        try:
            stale = self._client.api.containers(all=True, filters={
                "label": [f"{LABEL}=docker", f"{LABEL_HOST}={socket.gethostname()}"]})
        except docker.errors.DockerException:
            return
        for c in stale:
            owner = (c.get("Labels") or {}).get(LABEL_OWNER, "")
            try:
                pid, start = owner.split("-", 1)
                alive = _proc_start(int(pid)) == start
            except ValueError:
                alive = False
            if not alive:
                self._reaper.submit(_remove, self._client, c["Id"], None)

    # ----- images

    def image_for(self, language: str) -> str | None:
        """The image a program of `language` runs in (None: no image configured)."""
        if self.image:
            return self.image
        return self.images.get(get_language(language).name)

    def _image_id(self, image: str) -> str | None:
        with self._lock:
            if image in self._image_ids and self._image_ids[image] is not None:
                return self._image_ids[image]
        try:
            iid = self._client.api.inspect_image(image)["Id"]
        except docker.errors.ImageNotFound:
            iid = None
        except docker.errors.DockerException as e:
            raise _SlotStartError(f"cannot inspect image {image}: {e}") from None
        with self._lock:
            self._image_ids[image] = iid
        return iid

    @staticmethod
    def _missing_image_message(image: str) -> str:
        recipe = IMAGE_RECIPES.get(image)
        how = (f"build it with `codegym images build {recipe}`" if recipe
               else "build or pull it (docker build/pull)")
        return f"docker image {image!r} is not present on the engine: {how}"

    # ----- per-request routing (what _take/ensure read)

    def _mem_cap(self, memory_mb: int) -> int:
        return memory_mb + memory_mb // 4 + MEM_MARGIN_MB

    def _want(self) -> _Want:
        w = getattr(self._tl, "want", None)
        if w is None:
            raise RuntimeError("internal: no container key for this request")
        return w

    # ----- slots

    def _take(self, disk_mb: int, phase: str) -> _ContainerSlot:
        want = self._want()
        with self._cond:
            # first come, first served (a ticket queue): with many more callers than
            # workers, a plain condition lets a thread that just gave a slot back take
            # it again at once while others starve (a p99 latency of seconds)
            ticket = self._tickets
            self._tickets += 1
            while True:
                if self._closed:
                    raise RuntimeError("the sandbox is closed")
                if ticket == self._serving and self._running < self.workers:
                    slot = self._pick(disk_mb, phase, want)
                    if slot is not None:
                        self._running += 1
                        self._serving += 1
                        self._cond.notify_all()
                        return slot
                self._cond.wait()

    def _pick(self, disk_mb: int, phase: str, want: _Want) -> _ContainerSlot | None:
        free = self._free
        for i in range(len(free) - 1, -1, -1):  # most recently used first
            if free[i].fits(disk_mb, phase, want):
                return free.pop(i)
        if len(self._slots) < self.max_containers:
            slot = _ContainerSlot(self, len(self._slots))
            self._slots.append(slot)
            return slot
        for i in range(len(free)):  # a dead slot costs no removal
            if not free[i].alive:
                return free.pop(i)
        for i in range(len(free)):  # same key, other shape
            w = free[i].want
            if w is not None and (w.image, w.scope) == (want.image, want.scope):
                return free.pop(i)
        if free:
            return free.pop(0)  # least recently used: its container is replaced
        return None

    def _give(self, slot: _ContainerSlot) -> None:
        if slot.alive and slot.runs >= self.max_runs:
            slot.stop()  # recycled: the next request starts a fresh container
            with self._lock:
                self.stats["recycled"] += 1
        with self._cond:
            self._running -= 1
            self._free.append(slot)
            self._cond.notify_all()  # waiters differ in what they can take

    def _dispatch(self, header: dict, blobs: list[bytes], limits: Limits, phase: str,
                  max_collect: int = 0, n_collect: int = 0):
        if "exec" in header:  # {python} placeholders name the host's interpreter
            header["exec"] = [self._python if a == python_path() else a for a in header["exec"]]
        return super()._dispatch(header, blobs, limits, phase, max_collect, n_collect)

    def containers(self) -> list[str]:
        """Ids of the containers this sandbox holds now."""
        return [s.container_id for s in self._slots if s.container_id]

    def release_scope(self, scope: str | None) -> None:
        """Remove the idle containers of one task (they can serve no one else)."""
        with self._cond:
            for s in self._free:
                if s.want is not None and s.want.scope == scope:
                    s.stop()

    # ----- Sandbox API

    def build(self, language: str, files: Mapping[str, str | bytes],
              limits: Limits | None = None, *, scope: str | None = None,
              image: str | None = None) -> Build:
        """Lay out and (for compiled languages) compile `files` in a container; cached
        by content hash of (language, files, image id, scope)."""
        spec, norm, bad = _normalised(language, files)
        if bad is not None:
            return bad
        self._check_fork()
        img = image or self.image_for(spec.name)
        if img is None:
            return Build(language=spec.name, key="", ok=False, files=norm, result=failure(
                "sandbox_error", f"no docker image is configured for language {spec.name!r}: pass "
                f"images={{{spec.name!r}: '<image with {spec.name} and python3>'}}", phase="compile"))
        try:
            iid = self._image_id(img)
        except _SlotStartError as e:
            return Build(language=spec.name, key="", ok=False, files=norm,
                         result=failure("sandbox_error", str(e), phase="compile"))
        if iid is None:
            return Build(language=spec.name, key="", ok=False, files=norm,
                         result=failure("sandbox_error", self._missing_image_message(img), phase="compile"))
        key = _key(spec, {**norm, "\0image": iid.encode(), "\0scope": (scope or "").encode()})
        with self._lock:
            lock = self._build_locks.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                b = self._build_cache.get(key)
                if b is not None:
                    self._build_cache.move_to_end(key)
                    self.stats["build_cache_hits"] += 1
                    return b
            climits = limits or COMPILE_LIMITS
            self._tl.want = _Want(img, scope, climits.memory_mb)
            try:
                b = self._make_build(spec, key, norm, climits)
            finally:
                self._tl.want = None
            if isinstance(b.artifacts, _BuildFiles):
                b.artifacts = _DockerBuildFiles(b.artifacts.files, image=img, scope=scope)
            if b.ok or b.result is None or b.result.status != "sandbox_error":
                with self._lock:  # infrastructure failures are not cached
                    self._build_cache[key] = b
                    self._build_bytes += _build_size(b)
                    while len(self._build_cache) > 1 and len(self._build_cache) > 2048:
                        old, ob = self._build_cache.popitem(last=False)
                        self._build_bytes -= _build_size(ob)
                        self._build_locks.pop(old, None)
            return b

    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        if not build.ok:
            assert build.result is not None
            return build.result
        limits = limits or Limits()
        art = build.artifacts
        if isinstance(art, _DockerBuildFiles):
            img, scope = art.image, art.scope
        else:  # a build of another backend (same layout type): default image, no scope
            img, scope = self.image_for(build.language), None
            if img is None:
                return failure("sandbox_error", f"no docker image is configured for {build.language!r}")
        self._tl.want = _Want(img, scope, limits.memory_mb)
        try:
            return super().run(build, stdin=stdin, limits=limits, argv=argv, extra_files=extra_files,
                               wrapper=wrapper, randomize_layout=randomize_layout)
        finally:
            self._tl.want = None

    def image_from_dockerfile(self, dockerfile: str) -> str:
        """The tag of the image built from `dockerfile` (its text), built once per content
        hash (``codegym/task:<sha256[:16]>``) with no network and no pull: ``FROM`` must
        name a local image (e.g. ``codegym/python:3.11``; the runner needs a python3).
        Raises RuntimeError with the build log's tail when the build fails."""
        import hashlib  # noqa: PLC0415
        tag = "codegym/task:" + hashlib.sha256(dockerfile.encode("utf-8")).hexdigest()[:16]
        if tag in _TASK_IMAGES:  # judged before: no engine round trip per judge
            return tag
        with _IMAGE_BUILD_LOCK:
            try:
                self._client.images.get(tag)
                _TASK_IMAGES.add(tag)
                return tag
            except docker.errors.ImageNotFound:
                pass
            try:
                self._client.images.build(fileobj=io.BytesIO(dockerfile.encode("utf-8")), tag=tag, pull=False,
                                          rm=True, forcerm=True, network_mode="none",
                                          labels={"codegym.task-image": "1"})
            except docker.errors.BuildError as e:
                tail = " | ".join(str(x.get("stream") or x.get("error") or "").strip()
                                  for x in list(e.build_log)[-4:] if isinstance(x, dict))
                raise RuntimeError(f"docker build failed: {e.msg}" + (f" ({tail})" if tail else "")) from None
            except docker.errors.APIError as e:
                raise RuntimeError(f"docker build failed: {e.explanation or e}") from None
            _TASK_IMAGES.add(tag)
        return tag

    def for_task(self, task_id: str, image: str | None = None) -> "DockerTaskSandbox":
        """A view whose containers serve only `task_id` (and run `image`, if given)."""
        return DockerTaskSandbox(self, task_id, image)

    def close(self) -> None:
        """Remove every container of this sandbox (waits for the removals)."""
        with self._cond:
            if self._pool.closed:
                return
            self._pool.closed = True
            self._cond.notify_all()
        if os.getpid() == self._pid:
            self._finalizer()
        else:
            self._finalizer.detach()


_IMAGE_BUILD_LOCK = threading.Lock()
_TASK_IMAGES: set[str] = set()  # tags of task images known to exist on the engine


class DockerTaskSandbox(Sandbox):
    """The sandbox of one task: builds (and so runs) in containers keyed by the task.

    Shares the parent's pool and build cache; `close()` removes this task's idle
    containers and leaves the parent open.
    """

    isolation = "docker"

    def __init__(self, parent: DockerSandbox, scope: str, image: str | None = None):
        self.parent, self.scope, self.image = parent, scope, image

    def build(self, language: str, files: Mapping[str, str | bytes], limits: Limits | None = None) -> Build:
        return self.parent.build(language, files, limits, scope=self.scope, image=self.image)

    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        return self.parent.run(build, stdin=stdin, limits=limits, argv=argv, extra_files=extra_files,
                               wrapper=wrapper, randomize_layout=randomize_layout)

    def run_many(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None = None,
                 stop: Callable[[int, ExecResult], bool] | None = None) -> list[ExecResult | None]:
        return self.parent.run_many(build, requests, limits=limits, stop=stop)

    def close(self) -> None:
        if not self.parent._closed:
            self.parent.release_scope(self.scope)


def _cleanup(slots: list[_ContainerSlot], reaper: ThreadPoolExecutor, client, owner: str) -> None:
    for s in slots:
        s.stop()
    reaper.shutdown(wait=True)
    # anything of ours the slots lost track of (a start interrupted mid-way)
    try:
        for c in client.api.containers(all=True, filters={"label": [f"{LABEL_OWNER}={owner}"]}):
            _remove(client, c["Id"], None)
    except docker.errors.DockerException:
        pass
    try:
        client.close()
    except Exception:  # noqa: BLE001
        pass


def create(**kw) -> DockerSandbox:
    """`make_sandbox("docker", **kw)`: see `DockerSandbox` for the keywords."""
    return DockerSandbox(**kw)


__all__ = ["DockerSandbox", "DockerTaskSandbox", "DockerUnavailable", "DEFAULT_IMAGES", "IMAGE_RECIPES",
           "LABEL", "create"]
