"""Confined build steps: how an environment is built inside the sandbox, never on the host.

Every step that installs or builds (creating the virtual environment, pip, a repository's
pre-install and install commands) is one `run_step`: a program run as an unprivileged uid
of its own (`build_uid`), on a `BuildSystem` (a root filesystem read-only: a Python root
of `codegym.sandbox.roots`, or this host's own system until one is there), with the
network shared for that step only, a private /tmp and HOME, and nothing of the host
visible but the system, its resolver and CA files and the folders the step may write
(the environment's folder; a scratch checkout at ``/box/ws``, where the tests later run).
Local backend: bubblewrap. Docker backend: a build container of the system's image with
``--network host`` (the engine here has no bridge), read-only, no capabilities.

The host prepares and finishes the folders a step writes without running anything from
them and without following their links (`link_farm`, `own_dirs`, `finish_tree`,
`changed_files`). A step that fails raises `EnvBuildError` naming the step and the tail
of its own log (what the sandbox printed: no host file is readable there).
docs/swe.md, "Environments", describes the recipe; docs/sandbox.md what is confined.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codegym.core.languages import python_path
from codegym.sandbox.containers import LABEL, LABEL_HOST, LABEL_OWNER
from codegym.sandbox.hostnet import CA_INSIDE, host_ca_bundle, network_variables
from codegym.sandbox.images import docker_client
from codegym.sandbox.isolation import bwrap_available, claim_uid, kill_uid, proc_start, system_binds

#: the build steps' uids (the local slots use 61000-64999, docker containers 170000-189999)
UID_BASE = 66000
UID_RANGE = 2000
#: where a step sees the repository's checkout: the directory the tests later run in
#: (the fork server's /box, its ``ws`` folder), so an editable install stays valid there
CHECKOUT = "/box/ws"
#: seconds one step may take (a large sdist compiles for a while)
BUILD_TIMEOUT_S = 1800.0
#: the program a step runs first: rlimits, its HOME, then exec of the step's argv
_LAUNCH = ("import os, resource, sys\n"
           "for r, v in ((resource.RLIMIT_NPROC, 4096), (resource.RLIMIT_FSIZE, 8 << 30), (resource.RLIMIT_CORE, 0)):\n"
           "    try:\n        resource.setrlimit(r, (v, v))\n    except (ValueError, OSError):\n        pass\n"
           "os.makedirs(os.environ.get('HOME') or '/tmp/home', exist_ok=True)\n"
           "os.execvp(sys.argv[1], sys.argv[1:])\n")
_TAIL = 1200


class EnvBuildError(RuntimeError):
    """An environment that could not be built: the step that failed and the tail of its log."""


@dataclass(frozen=True)
class BuildSystem:
    """The system a build step runs on, and the tests later.

    backend  "local" (bubblewrap on `root`) or "docker" (containers of `image`)
    version  its Python's version ("3.11")
    python   the interpreter's path inside it
    root     local: the host path of the root filesystem ("/": this host's own system)
    image    docker: the image's tag
    ident    what an environment's key names (suite and Python version, or the host's interpreter)
    note     why it is not the version asked for (None: it is)
    """

    backend: str
    version: str
    python: str
    root: str = "/"
    image: str | None = None
    ident: str = ""
    note: str | None = None


def _python_version(python: str) -> str:
    try:
        out = subprocess.run([python, "-I", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise EnvBuildError(f"cannot run the sandbox's interpreter {python}: {e}") from None
    if out.returncode != 0:
        raise EnvBuildError(f"cannot run the sandbox's interpreter {python}: {out.stderr.strip()[-300:]}")
    return out.stdout.strip()


_HOST: dict[tuple, BuildSystem] = {}


def host_system(backend: str, requested: str | None = None, strict: bool = False,
                image: str = "codegym/python:3.11") -> BuildSystem:
    """This host's own system (local: its root read-only; docker: `image`) as a `BuildSystem`
    for Python `requested` (None: whatever it has). Another version is a note, or with
    `strict` an EnvBuildError: this system has one Python."""
    python = python_path() if backend == "local" else "/usr/bin/python3"
    key = (backend, python, image)
    hit = _HOST.get(key)
    if hit is None:
        full = _python_version(python_path())
        version = ".".join(full.split(".")[:2])
        ident = f"host:{os.path.realpath(python)}:{full}" if backend == "local" else f"image:{image}:{full}"
        hit = _HOST[key] = BuildSystem(backend, version, python, "/", image if backend == "docker" else None, ident)
    if requested and str(requested).strip() and str(requested).strip() != hit.version:
        why = f"Python {requested} was asked; this system has Python {hit.version} only"
        if strict:
            raise EnvBuildError(why + " (strict)")
        return BuildSystem(hit.backend, hit.version, hit.python, hit.root, hit.image, hit.ident,
                           why + f": using {hit.version}")
    return hit


# ----------------------------------------------------------------------------- uids


@contextlib.contextmanager
def build_uid() -> Iterator[int]:
    """An unprivileged uid no other build or slot of this machine uses, for one build; its
    stray processes are killed at the end (host is root). Without root: this process's uid."""
    if os.geteuid() != 0:
        yield os.getuid()
        return
    uid, lock = claim_uid(UID_BASE, UID_RANGE, "envbuild", UID_BASE + (os.getpid() * 7919) % UID_RANGE)
    try:
        yield uid
    finally:
        kill_uid(uid)
        lock.close()


# ----------------------------------------------------------------------------- one step


def _variables(env: Mapping[str, str]) -> dict[str, str]:
    out = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/tmp/home",
           "TMPDIR": "/tmp", "LANG": "C.UTF-8", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
           "PIP_ROOT_USER_ACTION": "ignore", "PYTHONDONTWRITEBYTECODE": "1", "PIP_NO_CACHE_DIR": "1"}
    # the user's pip and proxy settings; the host's CA bundle, bound at Debian's path (a proxy's CA may be in it)
    out.update(network_variables(CA_INSIDE if host_ca_bundle() else None))
    out.update({str(k): str(v) for k, v in env.items()})
    return out


def _tail(text: str, n: int = _TAIL) -> str:
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def run_step(system: BuildSystem, what: str, argv: Sequence[str], *, uid: int,
             writable: Sequence[tuple[str, str]] = (), cwd: str = "/tmp", env: Mapping[str, str] | None = None,
             timeout: float = BUILD_TIMEOUT_S, network: bool = True) -> str:
    """Run `argv` as one confined build step on `system` (see the module docstring); its
    output. `writable`: (host folder, path inside) pairs, the only places it may write
    besides its private /tmp; `network` is shared for this step only. EnvBuildError naming
    `what` with the tail of the output when it fails or outlives `timeout`."""
    variables = _variables(env or {})
    argv = [system.python, "-I", "-c", _LAUNCH, *map(str, argv)]
    if system.backend == "docker":
        rc, out = _docker_step(system, argv, uid, writable, cwd, variables, timeout, network)
    else:
        rc, out = _local_step(system, argv, uid, writable, cwd, variables, timeout, network)
    if rc != 0:
        why = "timed out" if rc == "timeout" else f"failed (exit {rc})"
        raise EnvBuildError(f"{what} {why}:\n{_tail(out)}")
    return out


def _etc_files(directory: str, uid: int) -> tuple[str, str]:
    passwd, group = os.path.join(directory, "passwd"), os.path.join(directory, "group")
    with open(passwd, "w") as f:
        f.write(f"root:x:0:0:root:/root:/bin/sh\nbuild:x:{uid}:{uid}:build:/tmp/home:/bin/sh\n"
                "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
    with open(group, "w") as f:
        f.write(f"root:x:0:\nbuild:x:{uid}:\nnogroup:x:65534:\n")
    for p in (passwd, group):
        os.chmod(p, 0o644)
    return passwd, group


def _local_step(system: BuildSystem, argv: list[str], uid: int, writable: Sequence[tuple[str, str]], cwd: str,
                variables: dict[str, str], timeout: float, network: bool) -> tuple[int | str, str]:
    if not bwrap_available():
        raise EnvBuildError("building an environment needs bubblewrap (bwrap >= 0.5) on the local backend: "
                            "install it, or use the docker backend")
    with tempfile.TemporaryDirectory(prefix="codegym-envbuild-") as tmp:
        os.chmod(tmp, 0o755)
        passwd, group = _etc_files(tmp, uid)
        a = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "build"]
        if network:
            a.append("--share-net")
        a += system_binds(system.root)
        ca = host_ca_bundle()
        if ca:
            a += ["--ro-bind", ca, CA_INSIDE]
        for f in ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"):
            if network and os.path.isfile(f):
                a += ["--ro-bind", f, f]
        a += ["--ro-bind", passwd, "/etc/passwd", "--ro-bind", group, "/etc/group",
              "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/tmp/home"]
        for host, inside in writable:
            a += ["--bind", host, inside]
        a += ["--remount-ro", "/", "--chdir", cwd, "--clearenv"]
        for k, v in variables.items():
            a += ["--setenv", k, v]
        a += argv
        kw: dict = {"user": uid, "group": uid, "extra_groups": []} if os.geteuid() == 0 else {}
        try:
            p = subprocess.Popen(a, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 start_new_session=True, close_fds=True, cwd="/", env={"PATH": "/usr/bin:/bin"},
                                 **kw)
        except OSError as e:
            raise EnvBuildError(f"cannot start bubblewrap for a build step: {e}") from None
        timed_out, out = _read_until(p, timeout)
        return ("timeout" if timed_out else p.returncode), out


def _read_until(p: subprocess.Popen, timeout: float) -> tuple[bool, str]:
    """(whether it outlived `timeout` and was killed, its output: the last 1 MiB)."""
    chunks: list[bytes] = []
    size = [0]

    def pump() -> None:
        out = p.stdout
        assert out is not None
        for b in iter(lambda: out.read(65536), b""):
            chunks.append(b)
            size[0] += len(b)
            while size[0] > (1 << 20) and len(chunks) > 1:
                size[0] -= len(chunks.pop(0))
    t = threading.Thread(target=pump, daemon=True)
    t.start()
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        t.join(5)
        return True, b"".join(chunks).decode("utf-8", "replace")
    t.join(30)
    return False, b"".join(chunks).decode("utf-8", "replace")


def _docker_step(system: BuildSystem, argv: list[str], uid: int, writable: Sequence[tuple[str, str]], cwd: str,
                 variables: dict[str, str], timeout: float, network: bool) -> tuple[int | str, str]:
    import docker.errors  # noqa: PLC0415 -- the [docker] extra
    import requests.exceptions  # noqa: PLC0415 -- docker's own dependency
    try:
        client = docker_client()
    except Exception as e:  # noqa: BLE001 -- no engine
        raise EnvBuildError(f"no Docker engine for the build container: {e}") from None
    volumes = {host: {"bind": inside, "mode": "rw"} for host, inside in writable}
    ca = host_ca_bundle()
    if ca:
        volumes[ca] = {"bind": CA_INSIDE, "mode": "ro"}
    me = os.getpid()
    try:
        c = client.containers.run(
            system.image, argv, detach=True, user=f"{uid}:{uid}", working_dir=cwd, environment=variables,
            network_mode="host" if network else "none", read_only=True,
            tmpfs={"/tmp": "size=8g,mode=1777,exec"}, volumes=volumes, cap_drop=["ALL"],
            security_opt=["no-new-privileges"], pids_limit=4096, hostname="build" if not network else None,
            labels={LABEL: "docker", LABEL_HOST: socket.gethostname(), LABEL_OWNER: f"{me}-{proc_start(me)}",
                    "codegym.envbuild": "1"})
    except docker.errors.ImageNotFound:
        raise EnvBuildError(f"the build container's image {system.image} is not on the engine") from None
    except docker.errors.APIError as e:
        raise EnvBuildError(f"cannot start the build container: {e.explanation or e}") from None
    try:
        try:
            rc: int | str = int(c.wait(timeout=timeout).get("StatusCode", 1))
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            rc = "timeout"
            with contextlib.suppress(docker.errors.APIError):
                c.kill()
        out = c.logs(stdout=True, stderr=True, tail=2000).decode("utf-8", "replace")
    finally:
        with contextlib.suppress(docker.errors.APIError):
            c.remove(force=True)
    return rc, out


# ----------------------------------------------------------------------------- host-side tree work


def _walk(top: str) -> Iterator[tuple[str, os.stat_result]]:
    """(path, lstat) of everything under `top`, parents first, never through a link."""
    stack = [top]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield e.path, st
                if stat.S_ISDIR(st.st_mode):
                    stack.append(e.path)


def link_farm(src: str | Path, dst: str | Path, max_entries: int = 500_000) -> int:
    """`dst` (absent) made a copy of the finished tree `src` in which every regular file is a
    hard link to src's (no data copied; ``*.pth`` files are copied, as a develop install
    appends to them), directories are new and links are links; nothing else is taken.
    Returns the number of entries. Nothing is followed."""
    src, dst = str(src), str(dst)
    os.mkdir(dst, 0o755)
    n = 0
    for path, st in _walk(src):
        n += 1
        if n > max_entries:
            raise EnvBuildError(f"the environment {src} holds more than {max_entries} entries")
        target = os.path.join(dst, os.path.relpath(path, src))
        if stat.S_ISDIR(st.st_mode):
            os.mkdir(target, 0o755)
        elif stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(path), target)
        elif stat.S_ISREG(st.st_mode):
            if path.endswith(".pth"):
                data = _read_nofollow(path, 1 << 20)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                with os.fdopen(fd, "wb") as f:
                    f.write(data or b"")
            else:
                os.link(path, target, follow_symlinks=False)
    return n


def own_dirs(top: str | Path, uid: int) -> None:
    """Give `top` and every directory under it to `uid` (a build step then adds and removes
    entries there; the files themselves stay the host's, read-only to the step)."""
    if os.geteuid() != 0:
        return
    os.lchown(top, uid, uid)
    for path, st in _walk(str(top)):
        if stat.S_ISDIR(st.st_mode):
            os.lchown(path, uid, uid)


def finish_tree(top: str | Path) -> None:
    """A built folder made the host's and read-only to everyone else: owned by root (when the
    host is root), group and others may read (and enter directories) but not write, no
    set-id bits, links untouched (and never followed)."""
    top = str(top)
    root = os.geteuid() == 0
    for path, st in [(top, os.lstat(top)), *_walk(top)]:
        if stat.S_ISLNK(st.st_mode):
            if root and st.st_uid != 0:
                os.lchown(path, 0, 0)
            continue
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            os.unlink(path)  # a FIFO or socket a step left: not part of an environment
            continue
        if root and (st.st_uid != 0 or st.st_gid != 0):
            os.lchown(path, 0, 0)
        mode = stat.S_IMODE(st.st_mode)
        want = (0o755 if stat.S_ISDIR(st.st_mode) else (mode & 0o755) | 0o444) & ~0o7000
        if stat.S_ISDIR(st.st_mode):
            want |= 0o755
        if want != mode:
            os.chmod(path, want)


def _read_nofollow(path: str, cap: int) -> bytes | None:
    """The bytes of the regular file `path` (not through a link), None beyond `cap` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            return None
        return f.read(cap + 1)[:cap]


def _inside(top: str, rel: str) -> str | None:
    """``top/rel`` when no link takes it out of `top` (else None: it is not read)."""
    path = os.path.join(top, rel)
    real, root = os.path.realpath(path), os.path.realpath(top)
    return path if real.startswith(root + os.sep) and real == os.path.join(root, rel) else None


#: what a checkout's build leaves that the tests do not need: git's data, byte code, build scratch
_SKIP_DIRS = {".git", "__pycache__", ".eggs", ".tox", ".nox", ".pytest_cache"}


def changed_files(checkout: str | Path, base: str | Path, max_files: int = 20_000,
                  max_bytes: int = 256 << 20) -> tuple[dict[str, bytes], list[str]]:
    """({path: bytes} of the files a build added to or changed in `checkout` against the
    pristine tree `base`, notes). Not taken: git's data, byte code, the top-level ``build/``
    folder (intermediate objects), links (a note each). EnvBuildError beyond the caps."""
    checkout, base = str(checkout), str(base)
    out: dict[str, bytes] = {}
    notes: list[str] = []
    total = 0
    for path, st in _walk(checkout):
        rel = os.path.relpath(path, checkout)
        parts = rel.split(os.sep)
        if any(p in _SKIP_DIRS for p in parts) or parts[0] == "build" or rel.endswith((".pyc", ".pyo")):
            continue
        if stat.S_ISLNK(st.st_mode):
            try:
                base_link = os.readlink(os.path.join(base, rel))
            except OSError:
                base_link = None
            if base_link != os.readlink(path):
                notes.append(f"{rel}: a link the build made, not kept")
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        data = _read_nofollow(path, max_bytes)
        if data is None:
            raise EnvBuildError(f"the repository's install made {rel}, larger than {max_bytes >> 20} MiB")
        old = _read_nofollow(base_file, max_bytes) if (base_file := _inside(base, rel)) else None
        if old == data:
            continue
        out[rel.replace(os.sep, "/")] = data
        total += len(data)
        if len(out) > max_files or total > max_bytes:
            raise EnvBuildError(f"the repository's install made more than {max_files} files or "
                                f"{max_bytes >> 20} MiB in its checkout")
    return out, notes


def copy_checkout(base: str | Path, dest: str | Path, uid: int) -> None:
    """`dest` (absent) made a copy of the pristine tree `base` (its git data included; links
    copied as links), owned by `uid`: the checkout a build step installs from."""
    shutil.copytree(str(base), str(dest), symlinks=True)
    if os.geteuid() == 0:
        os.lchown(dest, uid, uid)
        for path, _st in _walk(str(dest)):
            os.lchown(path, uid, uid)

