"""The docker backend's slots: containers, each running the fork server as PID 1.

Owns `ContainerSlot` (one slot of the pool: at most one container, replaced
whenever it does not fit a request), the framing of the container's attach socket
(`SocketConn`: a unix socket of the host bind-mounted into the container, the engine out
of the way; `AttachConn`: the container's attach socket, for an engine that cannot see this
host's files), the runner put into each container, container removal, the
labels every container carries (its process, its sandbox, its host) and the reaping
of containers whose process died (`stale_containers`, `prune_containers`: the next
sandbox's start and ``codegym images prune``).  The pool and its queue are
`codegym.sandbox.docker.DockerSandbox`'s; docs/sandbox.md describes the isolation.
"""

from __future__ import annotations

import io
import json
import logging
import os
import socket
import struct
import tarfile
import time
from dataclasses import dataclass

try:  # the SDK (an absolute import: codegym.sandbox.docker is this package's own module)
    import docker
    import docker.errors
    import docker.types
except ImportError:  # reported by DockerSandbox(): make_sandbox("docker") explains the fix
    docker = None

from codegym.core.languages import SANDBOX_PATH
from codegym.core.limits import Limits
from codegym.sandbox.forkserver.source import server_source
from codegym.sandbox.images import missing_image_message
from codegym.sandbox.isolation import claim_uid, proc_start
from codegym.sandbox.slots import MIN_COMPILE_DISK_MB, Conn, Slot, SlotBroken, SlotStartError

log = logging.getLogger("codegym.sandbox.docker")

#: label on every container this backend creates (tests and sweeps count them by it)
LABEL = "codegym.sandbox"
LABEL_OWNER = "codegym.owner"
LABEL_HOST = "codegym.host"
LABEL_SCOPE = "codegym.scope"
#: one sandbox of the process (`close()` removes its own containers, not its siblings')
LABEL_INSTANCE = "codegym.instance"
RUNNER_DIR = "/opt/codegym"
#: container uids, disjoint from the local backend's 61000.. range
UID_BASE = 170000
UID_RANGE = 20000
#: how the runner starts: its file's bytes compiled and run, as a local slot runs the source it
#: reads on stdin. Run as a script (``python3 forkserver.py``) the server kept a 4.1 MB heap
#: instead of 1.5 MB (what the parser of a script file leaves behind), and every run forks
#: that heap: a trivial program's run cost ~0.05 ms more CPU and RSS was 12.2 MB, not 9 MB
RUNNER_COMMAND = ("-c", f"exec(compile(open('{RUNNER_DIR}/forkserver.py', 'rb').read(), 'codegym-forkserver', "
                        "'exec'), {'__name__': '__main__'})")
#: where a container sees the host's listening socket (transport "socket")
SOCKET_PATH = f"{RUNNER_DIR}/host.sock"
#: seconds a container may take from create to the runner's ready frame
START_TIMEOUT_S = 60.0
#: memory above Limits.memory_mb left to the cgroup, so that the server's own kill
#: (memory_limit verdict) comes first and the cgroup's OOM killer is a backstop
MEM_MARGIN_MB = 256


def memory_cap(memory_mb: int) -> int:
    """The cgroup memory a container needs for runs of `memory_mb`."""
    return memory_mb + memory_mb // 4 + MEM_MARGIN_MB


class SocketConn(Conn):
    """Fork-server frames over a unix socket the runner connected to (both ways)."""

    WHAT = "container runner socket"
    GONE = "the container's runner exited"

    def __init__(self, sock: socket.socket):
        self.sock = sock
        super().__init__(sock.fileno(), sock.fileno())


class AttachConn(Conn):
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
                    raise SlotBroken("garbage on the container's attach stream")
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


_RUNNER_TAR: bytes | None = None


def runner_tar() -> bytes:
    """The archive put into each container: the fork server as one file (made once)."""
    global _RUNNER_TAR
    if _RUNNER_TAR is None:
        data = server_source()
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tf:
            ti = tarfile.TarInfo("forkserver.py")
            ti.size, ti.mode, ti.uid, ti.gid, ti.mtime = len(data), 0o644, 0, 0, int(time.time())
            tf.addfile(ti, io.BytesIO(data))
        _RUNNER_TAR = buf.getvalue()
    return _RUNNER_TAR


def listen_at(path: str, uid: int) -> socket.socket:
    """A listening unix socket at `path` that only `uid` (and root) may connect to."""
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        lst.bind(path)
        os.chown(path, uid, uid)
        os.chmod(path, 0o600)
        lst.listen(1)
    except OSError:
        lst.close()
        raise
    return lst


def close_listener(lst: socket.socket) -> None:
    """Close a listener made by `listen_at` and remove its path: nothing connects to it again."""
    path = lst.getsockname()
    lst.close()
    try:
        os.unlink(path)
    except OSError:
        pass


def accept_runner(lst: socket.socket, uid: int, deadline: float, running) -> socket.socket:
    """The runner's connection to `lst` (made by `uid`), waiting until `deadline` while
    ``running()`` says the container still runs; SlotStartError otherwise."""
    lst.settimeout(0.25)
    checked = time.monotonic()
    while True:
        try:
            conn, _ = lst.accept()
        except TimeoutError:
            now = time.monotonic()
            if now > deadline:
                raise SlotStartError("the runner did not connect in time") from None
            if now - checked > 1.0:
                checked = now
                if not running():
                    raise SlotStartError("the runner exited before it connected") from None
            continue
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", creds)[1] != uid:  # (only the container's uid can reach the path)
            conn.close()
            continue
        conn.setblocking(False)
        return conn


def container_running(client, cid: str) -> bool:
    """Whether container `cid` exists and runs (an engine error counts as running)."""
    try:
        return bool(client.api.inspect_container(cid)["State"].get("Running"))
    except docker.errors.NotFound:
        return False
    except docker.errors.DockerException:
        return True


def remove_container(client, cid: str, uid_lock: socket.socket | None) -> None:
    """Remove a container (killing what runs in it) and only then free its uid."""
    try:
        client.api.remove_container(cid, force=True, v=True)
    except docker.errors.NotFound:
        pass
    except Exception as e:  # noqa: BLE001 - logged; the owner sweep retries later
        if "already in progress" not in str(e):
            log.warning("codegym docker: could not remove container %s: %s", cid[:12], e)
        else:  # the engine removes it (auto_remove): gone only when that is done
            try:
                client.api.wait(cid, timeout=60, condition="removed")
            except Exception:  # noqa: BLE001 - NotFound: already gone
                pass
    finally:
        if uid_lock is not None:
            uid_lock.close()


@dataclass(frozen=True)
class Want:
    """What the current request needs from a container (set per thread by build/run)."""

    image: str
    scope: str | None
    memory_mb: int


class ContainerSlot(Slot):
    """One slot of the pool: at most one container, replaced whenever it does not fit."""

    def __init__(self, sb, index: int):  # sb: the `DockerSandbox` that owns the slot
        self.sb = sb
        self.index = index
        self.container_id: str | None = None
        self.conn: SocketConn | AttachConn | None = None
        self.sio = None
        self.want: Want | None = None
        self.disk_mb = 0
        self.mem_mb = 0
        self.runs = 0
        self._uid: tuple[int, socket.socket] | None = None
        self._removing = None     # future of the previous container's removal

    @property
    def alive(self) -> bool:
        return self.conn is not None

    def fits(self, disk_mb: int, phase: str, want: Want | None = None) -> bool:
        want = want or self.sb._want()
        if not self.alive or self.want is None:
            return False
        if (self.want.image, self.want.scope) != (want.image, want.scope):
            return False  # never across tasks or images
        if self.mem_mb < memory_cap(want.memory_mb):
            return False
        return super().fits(disk_mb, phase)

    def ensure(self, disk_mb: int, phase: str = "run") -> None:
        want = self.sb._want()
        if self.fits(disk_mb, phase, want):
            return
        self.stop()
        self.settle()  # at most `max_containers` containers exist at any time
        if phase == "compile":
            # a compiler takes any container with room; start one the runs of the
            # build can reuse (runs need their exact disk size, see fits)
            disk_mb = max(min(disk_mb, MIN_COMPILE_DISK_MB), Limits().disk_mb)
        self.start(want, disk_mb)

    def start(self, want: Want, disk_mb: int) -> None:
        sb = self.sb
        uid, lock = claim_uid(UID_BASE, UID_RANGE, "docker", UID_BASE + (os.getpid() * 7919) % UID_RANGE)
        mem = max(sb.container_memory_mb, memory_cap(want.memory_mb))
        cfg = {"box": "/box", "wipe": ["/tmp", "/dev/shm"], "kill_all": True,
               "keep_stderr": bool(os.environ.get("CODEGYM_SANDBOX_DEBUG"))}
        tmpfs_opt = f"size={disk_mb}m,mode=700,uid={uid},gid={uid},exec"
        cid = None
        listener = None
        via_socket = sb.transport == "socket"
        mounts = None
        if via_socket:
            try:
                listener, host_sock = sb._listener(uid)
            except OSError as e:  # (e.g. a TMPDIR too long for a socket's path)
                log.info("codegym docker: no runner socket (%s); frames over the attach socket", e)
                sb.fall_back_to_attach()
                lock.close()
                return self.start(want, disk_mb)
            cfg["connect"] = SOCKET_PATH
            mounts = [docker.types.Mount(f"{RUNNER_DIR}/forkserver.py", sb._runner_file(), type="bind",
                                         read_only=True),
                      docker.types.Mount(SOCKET_PATH, host_sock, type="bind", read_only=True)]
        try:
            c = sb._client.api.create_container(
                want.image,
                command=[sb._python, "-I", "-S", *RUNNER_COMMAND, json.dumps(cfg)],
                user=f"{uid}:{uid}", working_dir="/box", stdin_open=not via_socket, tty=False,
                hostname="sandbox", network_disabled=True,
                environment={"PATH": SANDBOX_PATH, "HOME": "/tmp", "LANG": "C.UTF-8"},
                volumes=None if via_socket else [RUNNER_DIR],
                labels={LABEL: "docker", LABEL_OWNER: sb._owner, LABEL_HOST: socket.gethostname(),
                        LABEL_SCOPE: want.scope or "", LABEL_INSTANCE: sb._instance},
                host_config=sb._client.api.create_host_config(
                    network_mode="none", read_only=True,
                    tmpfs={"/box": tmpfs_opt, "/tmp": tmpfs_opt},
                    shm_size=min(disk_mb, 64) << 20,
                    mem_limit=mem << 20, memswap_limit=mem << 20,
                    pids_limit=sb.pids_limit, nano_cpus=int(sb.cpus * 1e9),
                    cap_drop=["ALL"], security_opt=["no-new-privileges"],
                    # the runner exits when the host's end of the attach socket closes (the
                    # sandbox's process died): the engine then removes the container
                    auto_remove=True,
                    oom_score_adj=500, init=False, ipc_mode="private", mounts=mounts,
                    **({"cgroup_parent": sb.cgroup_parent} if sb.cgroup_parent else {})))
            cid = c["Id"]
            sio = None
            conn: Conn
            if listener is not None:
                sb._client.api.start(cid)
                conn = SocketConn(accept_runner(listener, uid, time.monotonic() + START_TIMEOUT_S,
                                                lambda: container_running(sb._client, cid)))
            else:
                sb._client.api.put_archive(cid, RUNNER_DIR, runner_tar())
                # attach before start: nothing the runner writes can be missed
                sio = sb._client.api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1,
                                                                 "stream": 1})
                sock = getattr(sio, "_sock", sio)
                if not isinstance(sock, socket.socket):
                    raise SlotStartError("the docker backend needs a unix or plain tcp DOCKER_HOST "
                                         "(TLS attach sockets are not supported)")
                conn = AttachConn(sock)
                sb._client.api.start(cid)
        except docker.errors.ImageNotFound:
            if cid:
                remove_container(sb._client, cid, None)
            lock.close()
            raise SlotStartError(missing_image_message(want.image)) from None
        except (docker.errors.DockerException, OSError, SlotStartError) as e:
            if cid:
                remove_container(sb._client, cid, None)
            lock.close()
            if via_socket and cid is None and "mount" in str(e).lower():
                # the engine does not see this host's files (a remote or virtualised engine):
                # the attach socket from now on
                log.info("codegym docker: bind mounts refused (%s); frames over the attach socket", e)
                sb.fall_back_to_attach()
                return self.start(want, disk_mb)
            raise SlotStartError(f"cannot start a container of {want.image}: {e}") from None
        finally:
            if listener is not None:
                close_listener(listener)
        self.container_id, self.conn, self.sio, self.want = cid, conn, sio, want
        self._uid = (uid, lock)
        self.disk_mb, self.mem_mb, self.runs = disk_mb, mem, 0
        self.handshake(time.monotonic() + START_TIMEOUT_S, f"the runner in a container of {want.image}",
                       f"does the image have {sb._python}?", uid)
        with sb._lock:
            sb.stats["slot_starts"] += 1
            sb.stats["containers_started"] += 1

    def send_request(self, header: dict, blobs: list[bytes]) -> None:
        self.runs += 1  # (every request passes here, called or streamed)
        super().send_request(header, blobs)

    def _drop(self) -> tuple[str | None, tuple[int, socket.socket] | None]:
        """Close the attach socket and let go of the container; (its id, its uid)."""
        cid, uid = self.container_id, self._uid
        for s in (self.sio, self.conn.sock if self.conn else None):
            try:
                if s is not None:
                    s.close()
            except OSError:
                pass
        self.container_id = self.conn = self.sio = self.want = None
        self._uid = None
        return cid, uid

    def stop(self) -> None:
        """Drop the container: close the attach socket now, remove it in the background."""
        cid, uid = self._drop()
        if cid is None:
            if uid:
                uid[1].close()
            return
        with self.sb._lock:
            self.sb.stats["containers_removed"] += 1
        try:
            self._removing = self.sb._reaper.submit(remove_container, self.sb._client, cid, uid[1] if uid else None)
        except RuntimeError:  # reaper already shut down (interpreter exit): remove inline
            remove_container(self.sb._client, cid, uid[1] if uid else None)

    def settle(self) -> None:
        """Wait until this slot's previous container is gone."""
        f, self._removing = self._removing, None
        if f is not None:
            try:
                f.result(timeout=self.sb._api_timeout)
            except Exception:  # noqa: BLE001 - remove_container logs; the owner sweep retries
                pass

    def forget(self) -> None:
        """In a forked child: let go of the parent's container without touching it."""
        self._drop()


def owner_alive(owner: str) -> bool:
    """Whether the process a ``codegym.owner`` label names (``<pid>-<start time>``) runs."""
    try:
        pid, start = owner.split("-", 1)
        return proc_start(int(pid)) == start
    except (ValueError, OSError):
        return False


def stale_containers(client, everything: bool = False) -> list[dict]:
    """Containers of this host's docker sandboxes whose process died (`everything`: all
    of this host's, live owners included): the engine's summaries (Id, Labels, State)."""
    found = client.api.containers(all=True, filters={
        "label": [f"{LABEL}=docker", f"{LABEL_HOST}={socket.gethostname()}"]})
    return [c for c in found if everything or not owner_alive((c.get("Labels") or {}).get(LABEL_OWNER, ""))]


def prune_containers(client, everything: bool = False, dry_run: bool = False) -> list[dict]:
    """Remove (unless `dry_run`) the `stale_containers`; returns what was found."""
    stale = stale_containers(client, everything)
    if not dry_run:
        for c in stale:
            remove_container(client, c["Id"], None)
    return stale


