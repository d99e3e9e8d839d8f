"""How the local backend isolates a slot on this machine.

Owns the choice's facts (is bubblewrap usable: `bwrap_available`), bubblewrap's
command line for a slot (`bwrap_argv`: read-only system, private /box, /tmp and
/dev/shm, no network, a 3-line passwd), the slot uids claimed machine-wide when
the host is root (`claim_uid`, also the docker backend's), the per-process
instance directories and their removal, and the rule for running without
isolation: refused (`IsolationUnavailable`, naming the remedies) unless the user
opts in by `isolation="rlimits"` or `CODEGYM_UNSAFE_NO_ISOLATION=1`, then one
warning.  docs/sandbox.md describes what each mode guarantees.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from codegym.core.languages import SANDBOX_PATH, list_languages
from codegym.sandbox.slots import SlotStartError

log = logging.getLogger("codegym.sandbox")

#: the local slots' uids when the host runs as root (the docker backend has its own range)
UID_BASE = 61000
UID_RANGE = 4000


@functools.cache
def bwrap_features() -> frozenset[str]:
    try:
        out = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(f for f in ("--disable-userns", "--size", "--remount-ro", "--as-pid-1",
                                 "--die-with-parent", "--clearenv", "--perms") if f in out)


_warned: set[str] = set()
_warn_lock = threading.Lock()


def warn_once(key: str, message: str) -> None:
    """Log `message` as a warning, once per process for each `key`."""
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning(message)


def warn_rlimits(reason: str) -> None:
    warn_once("rlimits", f"codegym sandbox: {reason}; programs run with rlimits only (no filesystem, "
                         "network or process-namespace isolation)")


#: set to 1: programs run without isolation (rlimits only), even where bubblewrap is usable
UNSAFE_ENV = "CODEGYM_UNSAFE_NO_ISOLATION"


class IsolationUnavailable(RuntimeError):
    """No isolating sandbox on this machine, and no opt-in to run programs without one."""


def unsafe_opted_in() -> bool:
    """True when the user's environment asks for runs without isolation (`UNSAFE_ENV`)."""
    if os.environ.get("CODEGYM_NO_BWRAP", "") not in ("", "0"):
        raise IsolationUnavailable(f"CODEGYM_NO_BWRAP is no longer read: set {UNSAFE_ENV}=1 to run "
                                   "programs without isolation")
    return os.environ.get(UNSAFE_ENV, "") not in ("", "0")


def refusal(reason: str) -> IsolationUnavailable:
    """The error that refuses to run untrusted programs unconfined, naming the remedies."""
    return IsolationUnavailable(
        f"untrusted programs run only in a sandbox that isolates them, and {reason}. Either "
        "install bubblewrap (Debian/Ubuntu, as root: apt-get install bubblewrap), or use the Docker "
        "backend (gym.make(..., sandbox=\"docker\"), make_sandbox(\"docker\") or CODEGYM_SANDBOX=docker), "
        "or opt in to unconfined runs (rlimits only: the programs can read and write your files and "
        f"use the network) with isolation=\"rlimits\" or {UNSAFE_ENV}=1.")


def confinement_problem() -> str | None:
    """Why the local backend's default (``isolation="auto"``) would refuse to start here, or
    None (bubblewrap looks usable, or the user opted in); nothing is started to find out."""
    if unsafe_opted_in() or bwrap_available():
        return None
    return "bubblewrap (bwrap >= 0.5) is not installed or lacks the features it needs"


def bwrap_available() -> bool:
    """True when bubblewrap is installed with the features the local backend needs."""
    need = {"--size", "--remount-ro", "--as-pid-1", "--die-with-parent", "--clearenv"}
    return shutil.which("bwrap") is not None and need <= bwrap_features()


def claim_uid(base: int = UID_BASE, count: int = UID_RANGE, tag: str = "sandbox",
              first: int | None = None) -> tuple[int, socket.socket]:
    """An unprivileged uid in ``base .. base + count`` that no other slot (of any process)
    of this machine uses, held for as long as the returned abstract socket is open.
    The search starts at `first` (default `base`) and wraps around."""
    first = base if first is None else first
    for i in range(count):
        uid = base + (first - base + i) % count
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind(f"\0codegym-{tag}-uid-{uid}")
            return uid, s
        except OSError:
            s.close()
    raise SlotStartError(f"no free {tag} uid")


def kill_uid(uid: int) -> None:
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


def proc_start(pid: int) -> str | None:
    """A process's start time (distinguishes a live pid from a reused one)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def instance_dir() -> str:
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
            alive = proc_start(int(pid)) == start
        except ValueError:
            alive = False
        if not alive:
            rmtree(os.path.join(root, name))
    me = os.getpid()
    d = tempfile.mkdtemp(prefix=f"{me}-{proc_start(me)}-", dir=root)
    os.chmod(d, 0o711)
    return d


def rmtree(path: str) -> None:
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


#: the pieces of a Python root's /etc a slot on that root sees (its passwd and group are the
#: slot's own): the dynamic linker's cache, alternatives (cc, c++ ...), the time zone, the CA
#: certificates (pip, git), the release's name and Python's own configuration (``/etc/python3*``)
ROOT_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "ssl",
            "ca-certificates", "ca-certificates.conf", "debian_version", "os-release")


def system_binds(root: str = "/") -> list[str]:
    """bubblewrap arguments for the system directories: the host's (`root` "/": /usr, /lib*,
    /bin, /sbin and a few /etc files) or a Python root's (its /usr, /lib*, /bin, /sbin and
    the /etc pieces of ROOT_ETC), all read-only, each at its usual place."""
    host = root == "/"
    a = ["--ro-bind", os.path.join(root, "usr"), "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        src = os.path.join(root, top[1:])
        if os.path.islink(src):
            a += ["--symlink", os.readlink(src), top]
        elif os.path.isdir(src):
            a += ["--ro-bind", src, top]
    etc = os.path.join(root, "etc")
    if host:
        names = ["ld.so.cache", "ld.so.conf", "alternatives", "localtime"]
    else:
        names = [*ROOT_ETC, *sorted(n for n in os.listdir(etc) if n.startswith("python3"))]
    for name in names:
        src = os.path.join(etc, name)
        if os.path.islink(src):
            a += ["--symlink", os.readlink(src), f"/etc/{name}"]
        elif os.path.exists(src) and (not host or name != "localtime"):
            a += ["--ro-bind", src, f"/etc/{name}"]
    return a


def bwrap_argv(disk_mb: int, passwd: str, group: str, extra_binds: list[str], sandbox_path: str,
               root: str = "/") -> list[str]:
    """bubblewrap's command line for a slot, up to the program it runs: a fresh
    user/pid/net/ipc/uts/cgroup namespace, the system read-only (the host's, or with `root`
    a Python root's: `codegym.sandbox.roots`), /box and /tmp tmpfs mounts of `disk_mb` each,
    `passwd`/`group` as /etc's, PATH, HOME, LANG only."""
    size = str(disk_mb << 20)
    shm = str(min(disk_mb, 64) << 20)
    a = ["bwrap", "--unshare-all", "--unshare-user", "--as-pid-1", "--die-with-parent",
         "--new-session", "--hostname", "sandbox"]
    if "--disable-userns" in bwrap_features():
        a.append("--disable-userns")
    a += system_binds(root)
    a += ["--ro-bind", passwd, "/etc/passwd", "--ro-bind", group, "/etc/group"]
    for src in extra_binds:
        a += ["--ro-bind", src, src]
    a += ["--proc", "/proc", "--dev", "/dev",
          "--size", shm, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
          "--size", size, "--tmpfs", "/tmp",
          "--size", size, "--tmpfs", "/box",
          "--remount-ro", "/", "--chdir", "/box",
          "--clearenv", "--setenv", "PATH", sandbox_path, "--setenv", "HOME", "/tmp",
          "--setenv", "LANG", "C.UTF-8"]
    return a


def etc_files(directory: str, index: int, uid: int, gid: int) -> tuple[str, str]:
    """passwd and group files (in `directory`) for slot `index`, naming its uid."""
    d = os.path.join(directory, "etc")
    os.makedirs(d, mode=0o755, exist_ok=True)
    passwd = os.path.join(d, f"passwd{index}")
    group = os.path.join(d, f"group{index}")
    with open(passwd, "w") as f:
        f.write(f"root:x:0:0:root:/root:/bin/sh\nsandbox:x:{uid}:{gid}:sandbox:/tmp:/bin/sh\n"
                "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    with open(group, "w") as f:
        f.write(f"root:x:0:\nsandbox:x:{gid}:\nnogroup:x:65534:\n")
    os.chmod(passwd, 0o644)
    os.chmod(group, 0o644)
    return passwd, group


def toolchain_binds(python: str) -> tuple[list[str], str]:
    """Install prefixes of toolchains outside the system dirs, and the sandbox PATH."""
    binds: list[str] = []
    path = SANDBOX_PATH.split(":")
    system = ("/usr/", "/bin/", "/sbin/", "/lib")
    forbidden = ("/root", "/home", "/work", "/tmp", "/proc", "/sys", "/dev", "/etc", "/var", "/run")
    tools = [python]
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


