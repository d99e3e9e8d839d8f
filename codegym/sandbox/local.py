"""The local sandbox backend: warm fork servers on this machine, one slot per worker.

Owns `LocalSandbox` (the `Sandbox` behind ``make_sandbox("local")``), its slots
(`ProcessSlot`: one fork server process, inside bubblewrap namespaces or with
rlimits only, see `codegym.sandbox.isolation`) and the first-come-first-served
queue of callers for them.  Builds, requests and retries are the shared
`codegym.sandbox.server_sandbox.ServerSandbox`'s; docs/sandbox.md explains the
shape, the limits and what each isolation mode guarantees.

    >>> from codegym.sandbox import RunRequest
    >>> sb = LocalSandbox(workers=2)          # or make_sandbox("local"): shared
    >>> b = sb.build("c", {"main.c": "int main(void){return 0;}"})
    >>> [r.status for r in sb.run_many(b, [RunRequest()] * 3)]
    ['ok', 'ok', 'ok']
    >>> sb.close()
"""

from __future__ import annotations

import collections
import json
import os
import signal
import socket
import subprocess
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codegym.core.languages import SANDBOX_PATH, LanguageSpec, python_path
from codegym.core.limits import Limits
from codegym.sandbox.buildcache import BuildCache, shared_cache
from codegym.sandbox.forkserver.source import server_source
from codegym.sandbox.isolation import (
    UNSAFE_ENV,
    bwrap_argv,
    bwrap_available,
    claim_uid,
    etc_files,
    instance_dir,
    kill_uid,
    refusal,
    rmtree,
    toolchain_binds,
    unsafe_opted_in,
    warn_once,
    warn_rlimits,
)
from codegym.sandbox.repoenv import env_root, sandbox_binds
from codegym.sandbox.roots import PythonRoot, RootError, sandbox_root
from codegym.sandbox.server_sandbox import PIPELINE, ServerSandbox
from codegym.sandbox.slots import Conn, Slot, SlotBroken, SlotStartError

#: seconds a slot may take to start and say ready
START_TIMEOUT_S = 20.0
#: the command line runs only this; the server's source follows on its stdin
#: (length-prefixed), so that nothing outside the sandbox has to be readable inside it
BOOTSTRAP = ("import os\n"
             "def _r(n):\n"
             " b = bytearray()\n"
             " while len(b) < n:\n"
             "  c = os.read(0, n - len(b))\n"
             "  if not c: raise SystemExit(1)\n"
             "  b += c\n"
             " return bytes(b)\n"
             "exec(compile(_r(int.from_bytes(_r(4), 'big')), 'codegym-forkserver', 'exec'),"
             " {'__name__': '__main__'})\n")


def _debug_cfg() -> dict:
    return {"keep_stderr": bool(os.environ.get("CODEGYM_SANDBOX_DEBUG"))}


class ProcessSlot(Slot):
    """One fork server process of this machine: started lazily, restarted after any failure."""

    def __init__(self, sb: LocalSandbox, index: int):
        self.sb = sb
        self.index = index
        self.proc: subprocess.Popen | None = None
        self.conn: Conn | None = None
        self.disk_mb = 0
        self.uid: int | None = None
        self.uid_lock: socket.socket | None = None
        self.pid1 = False
        self.dir = os.path.join(sb._dir, f"slot{index}")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def ensure(self, disk_mb: int, phase: str = "run") -> None:
        if self.fits(disk_mb, phase):
            return
        self.stop()
        self.start(disk_mb)

    def start(self, disk_mb: int) -> None:
        sb = self.sb
        if sb._root and self.uid is None:
            self.uid, self.uid_lock = claim_uid()
        try:
            argv, env, cwd = (self._bwrap_cmd(disk_mb) if sb.isolation == "bwrap"
                              else self._plain_cmd())
        except OSError as e:
            raise SlotStartError(f"cannot prepare sandbox slot: {e}") from None
        kw: dict = {}
        if sb._root:
            kw = {"user": self.uid, "group": self.uid, "extra_groups": []}
        # PR_SET_PDEATHSIG (bwrap --die-with-parent, and the server itself) fires when
        # the *thread* that forked exits, so every slot is spawned by one long-lived thread
        stderr = None if os.environ.get("CODEGYM_SANDBOX_DEBUG") else subprocess.DEVNULL

        def spawn() -> subprocess.Popen[bytes]:
            return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env,
                                    cwd=cwd, start_new_session=True, close_fds=True, **kw)
        fut = sb._spawner.submit(spawn)
        try:
            self.proc = fut.result()
        except (OSError, subprocess.SubprocessError) as e:
            raise SlotStartError(f"cannot start sandbox slot: {e}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None  # (pipes asked)
        self.conn = Conn(self.proc.stdin.fileno(), self.proc.stdout.fileno())
        self.disk_mb = disk_mb
        source = server_source()
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            self.conn.send([len(source).to_bytes(4, "big"), source], deadline)
        except SlotBroken as e:
            self.stop()
            raise SlotStartError(f"sandbox slot did not start ({e}); isolation={sb.isolation}") from None
        hdr = self.handshake(deadline, "sandbox slot", f"isolation={sb.isolation}")
        self.pid1 = hdr.get("pid") == 1
        if not hdr.get("seccomp"):
            warn_once("seccomp", "codegym sandbox: no seccomp filter on this machine; programs may "
                      "leave kernel objects (keyrings, System V IPC) behind between executions")
        with sb._lock:
            sb.stats["slot_starts"] += 1

    def _bwrap_cmd(self, disk_mb: int) -> tuple[list[str], dict, str]:
        sb = self.sb
        uid = self.uid if self.uid is not None else os.getuid()
        gid = self.uid if self.uid is not None else os.getgid()
        passwd, group = etc_files(sb._dir, self.index, uid, gid)
        a = bwrap_argv(disk_mb, passwd, group, sb._extra_binds, sb._sandbox_path,
                       str(sb.root.path) if sb.root is not None else "/")
        cfg = {"box": "/box", "wipe": ["/tmp", "/dev/shm"], "kill_all": True, **_debug_cfg()}
        a += [sb._python, "-I", "-S", "-c", BOOTSTRAP, json.dumps(cfg)]
        return a, {"PATH": SANDBOX_PATH}, "/"

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
            kill_uid(self.uid)  # strays of a crashed earlier owner of this uid
        cfg = {"box": box, "wipe": [tmp],
               # kill(-1) is only safe as a uid that belongs to this slot alone
               "kill_all": self.uid is not None, **_debug_cfg()}
        env = {"PATH": sb._sandbox_path, "HOME": tmp, "TMPDIR": tmp, "LANG": "C.UTF-8"}
        self.shown_paths = ((box.encode(), b"/box"), (tmp.encode(), b"/tmp"))
        return [sb._python, "-I", "-S", "-c", BOOTSTRAP, json.dumps(cfg)], env, box

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
            kill_uid(self.uid)

    def forget(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout) if self.proc else ():
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        if self.uid_lock is not None:
            self.uid_lock.close()

    def release_uid(self) -> None:
        if self.uid_lock is not None:
            self.uid_lock.close()
            self.uid_lock = None
            self.uid = None


class LocalSandbox(ServerSandbox[ProcessSlot]):
    """Fork-server slots on this machine; see the module docstring.

    workers    number of slots (default: os.cpu_count())
    isolation  "auto" (bwrap; where bubblewrap is not usable, IsolationUnavailable naming the
               remedies), "bwrap" or "rlimits" (no isolation: an explicit opt-in);
               CODEGYM_UNSAFE_NO_ISOLATION=1 makes "auto" mean "rlimits"
    python     interpreter for the fork servers and Python programs (default: python_path()), or
               a Python version ("3.9") or `PythonRoot`: every slot then runs on that version's
               root filesystem (`codegym.sandbox.roots`; built once; needs bubblewrap); a version
               without a root falls back to the nearest (`python_note` says so) unless
    strict     is true (RootError)
    pipeline   requests a slot holds at once in `run_many` (1: send the next request only
               after the answer to the last)

    `stats` counts compiles, build cache hits, executions and slot starts.
    """

    def __init__(self, workers: int | None = None, isolation: str = "auto",
                 python: str | PythonRoot | None = None, pipeline: int = PIPELINE, strict: bool = False):
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        self.pipeline = max(1, int(pipeline))
        if isolation not in ("auto", "bwrap", "rlimits"):
            raise ValueError(f"isolation must be auto, bwrap or rlimits, not {isolation!r}")
        if isolation == "auto" and unsafe_opted_in():
            isolation = "rlimits"
        #: the Python root every slot runs on (None: this host's system), and why it is not
        #: the version asked for
        self.root, self.python_note = sandbox_root(python, strict)
        if self.root is not None:
            if isolation == "rlimits" or not bwrap_available():
                raise RootError(f"a Python {self.root.version} root needs bubblewrap (bwrap >= 0.5, "
                                "namespaces): without it the slots would run on this host's own system "
                                + ("(isolation='rlimits' or CODEGYM_UNSAFE_NO_ISOLATION was asked)"
                                   if isolation == "rlimits" else "(bwrap is not usable here)"))
            self._python = self.root.python
            exe = self.root.host_path(self._python)
        else:
            assert not isinstance(python, PythonRoot)  # (a root is self.root)
            self._python = python or python_path()
            exe = Path(self._python)
        if not os.path.isfile(exe):
            raise RuntimeError(f"the sandbox needs a Python interpreter at {exe} (set CODEGYM_PYTHON)")
        if isolation in ("auto", "bwrap"):
            if not bwrap_available():
                raise refusal("bubblewrap (bwrap >= 0.5) is not usable here" if isolation == "bwrap" else
                              "bubblewrap (bwrap >= 0.5) is not installed or lacks the features it needs")
            isolation = "bwrap"
        else:
            warn_rlimits(f"no isolation requested (isolation='rlimits' or {UNSAFE_ENV}=1)")
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
                except SlotStartError as e:
                    slot.stop()
                    error = e
            if error is not None:
                self.close()
                if self.root is not None:
                    raise RootError(f"slots on the Python {self.root.version} root do not start: {error}")
                raise refusal(f"bubblewrap is installed but failed ({error})")

    # ----- state (re-created in a forked child)

    def _init_state(self, forked: bool = False) -> None:
        self._pid = os.getpid()
        self._dir = instance_dir()
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codegym-sandbox-spawn")
        self._slots = [ProcessSlot(self, i) for i in range(self.workers)]
        self._free: list[ProcessSlot] = []
        self._mutex = threading.RLock()
        self._cond = threading.Condition(self._mutex)
        # callers waiting for a slot, first come first served: one condition each on
        # the same lock, so a freed slot wakes exactly the longest waiter (a plain
        # Condition lets the thread that just gave a slot back take it again, and at
        # concurrency 32 some callers waited seconds for their turn)
        self._waiters: collections.deque[threading.Condition] = collections.deque()
        self._lock = threading.Lock()
        self._ids = 0
        if self.root is None:
            self._extra_binds, self._sandbox_path = toolchain_binds(self._python)
            self._extra_binds += sandbox_binds()  # repository test environments, read-only
        else:  # the root's own system only (the host's toolchains are built for the host's)
            self._extra_binds, self._sandbox_path = root_env_binds(self.root), SANDBOX_PATH
        self._finalizer = weakref.finalize(self, _cleanup, self._slots, self._dir, self._spawner)
        # slots start lazily, when first taken
        self._lazy = list(reversed(self._slots))

    # ----- slots

    def _pick(self, disk_mb: int, phase: str) -> ProcessSlot | None:
        """A free slot, preferring one that needs no restart for this request (lock held)."""
        for i in range(len(self._free) - 1, -1, -1):  # most recently used first
            if self._free[i].fits(disk_mb, phase):
                return self._free.pop(i)
        if self._lazy:
            return self._lazy.pop()
        if self._free:
            return self._free.pop()
        return None

    def _take(self, disk_mb: int, phase: str) -> ProcessSlot:
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

    def _give(self, slot: ProcessSlot) -> None:
        with self._cond:
            self._free.append(slot)
            if self._waiters:
                self._waiters[0].notify()


    def _build_cache(self) -> BuildCache:
        return shared_cache((type(self), self.isolation, self.root.key if self.root is not None else None))

    def _missing_tools(self, spec: LanguageSpec) -> str | None:
        if self.root is None:
            return super()._missing_tools(spec)
        missing = [t for t in dict.fromkeys(spec.required_tools()) if not _in_root(self.root, t)]
        if not missing:
            return None
        return (f"language {spec.name!r} is not in the Python {self.root.version} root "
                f"({', '.join(f'`{t}`' for t in missing)} not found); the roots hold Python, gcc and g++")

    @property
    def closed(self) -> bool:
        return self._closed

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


def _in_root(root: PythonRoot, tool: str) -> bool:
    """Whether `tool` (a name looked up on the sandbox's PATH, or a path) is an executable of `root`."""
    dirs = [""] if "/" in tool else SANDBOX_PATH.split(":")
    for d in dirs:
        p = root.host_path(os.path.join(d, tool) if d else tool)
        # (a symlink of the root resolves inside the root, not on the host)
        for _ in range(8):
            if not p.is_symlink():
                break
            target = os.readlink(p)
            p = root.host_path(target) if target.startswith("/") else p.parent / target
        if p.is_file() and os.access(p, os.X_OK):
            return True
    return False


def root_env_binds(root: PythonRoot) -> list[str]:
    """The repository environments (`env_root`, read-only) for slots on `root`, at their host
    path; one under /usr gets its mount point made in the root once (the root's /usr is bound)."""
    try:
        envs = env_root()
    except OSError:
        return []
    if str(envs).startswith("/usr/"):
        point = root.host_path(str(envs))
        try:
            point.mkdir(parents=True, exist_ok=True)
        except OSError:
            return []
    return [str(envs)]


def _cleanup(slots: list[ProcessSlot], directory: str, spawner: ThreadPoolExecutor) -> None:
    for s in slots:
        try:
            s.stop()
        finally:
            s.release_uid()
    spawner.shutdown(wait=True)
    rmtree(directory)


