"""Where a scaffold works: the episode's files in a directory, and commands run on them.

`ScaffoldBox` lays the workspace out in a fresh host directory, runs shell commands
in it with one of three isolations, reads the files back (`snapshot`) and removes
everything on `close`:

- ``none``: a plain subprocess with the directory as cwd, on the host: only when the user
  opted in to unconfined runs (``CODEGYM_UNSAFE_NO_ISOLATION=1``), whoever asked for it;
- ``bwrap``: bubblewrap, the directory bound at ``/app``, the system read-only, a
  private /tmp, no network unless asked (``network=True``: a command scaffold must
  reach its model endpoint; its model calls go to the loopback proxy);
- ``docker``: one container per episode from a local image (``codegym/python:3.11``
  by default), the directory bound at ``/app``, ``--network none`` (or ``host``).

docs/scaffolds.md says what each isolation protects.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codegym.core.yamldoc import inside
from codegym.sandbox.isolation import UNSAFE_ENV, unsafe_opted_in

ISOLATIONS = ("none", "bwrap", "docker")
#: path components never read back from a workspace (caches, VCS data, build output)
IGNORED_PARTS = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
                           "node_modules", ".venv"})
#: larger files are not taken as edits (reported as ignored)
MAX_FILE_BYTES = 1 << 20
APP = "/app"
DEFAULT_IMAGE = "codegym/python:3.11"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class BoxError(RuntimeError):
    """The box could not be set up (bubblewrap or docker missing, image absent)."""


@dataclass
class CommandResult:
    returncode: int
    output: str
    timed_out: bool = False


class ScaffoldBox:
    """A scaffold's working directory for one episode.

    Args:
        files: the workspace ({relative path: text}).
        isolation: ``none`` | ``bwrap`` | ``docker``.
        image: the docker image (docker isolation).
        ro_binds: host paths made visible read-only inside bwrap (a scaffold installed
            outside the system directories, e.g. a virtualenv).
        env: environment variables of every command.
    """

    def __init__(self, files: Mapping[str, str], isolation: str = "bwrap", image: str | None = None,
                 ro_binds: Sequence[str] = (), env: Mapping[str, str] | None = None):
        if isolation not in ISOLATIONS:
            raise ValueError(f"isolation must be one of {ISOLATIONS}, not {isolation!r}")
        if isolation == "none" and not unsafe_opted_in():
            # the model's commands would run on the host as this user: a config (possibly a
            # stranger's) cannot choose that; only the user's own environment can
            raise BoxError(f"isolation 'none' runs the scaffold's commands on the host, unconfined: set "
                           f"{UNSAFE_ENV}=1 to allow it, or use isolation 'bwrap' or 'docker'")
        if isolation == "bwrap" and shutil.which("bwrap") is None:
            raise BoxError("isolation 'bwrap' needs bubblewrap (apt-get install bubblewrap); "
                           f"use isolation 'docker' (or 'none' with {UNSAFE_ENV}=1: unconfined)")
        if isolation == "docker" and shutil.which("docker") is None:
            raise BoxError("isolation 'docker' needs the docker command and a running engine")
        self.isolation, self.image = isolation, image or DEFAULT_IMAGE
        self.ro_binds, self.env = [str(p) for p in ro_binds], dict(env or {})
        self.root = Path(tempfile.mkdtemp(prefix="codegym-scaffold-"))
        self.path = self.root / "app"
        self.path.mkdir()
        self.meta = self.root / "meta"   # files for the scaffold that are not the workspace
        self.meta.mkdir()
        for rel, text in files.items():
            target = self.path / rel
            if not inside(target.resolve(), self.path.resolve()):
                raise ValueError(f"workspace path escapes the box: {rel!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        self._container: str | None = None
        self._networked: bool | None = None

    @property
    def workdir(self) -> str:
        """The workspace as the scaffold's commands see it."""
        return str(self.path) if self.isolation == "none" else APP

    @property
    def metadir(self) -> str:
        """The meta directory as the scaffold's commands see it (read-only inside a box)."""
        return str(self.meta) if self.isolation == "none" else "/codegym"

    # ------------------------------------------------------------------ commands

    def run(self, command: str, timeout_s: float, network: bool = False,
            env: Mapping[str, str] | None = None) -> CommandResult:
        """Run `command` (bash) in the workspace; output is stdout and stderr merged."""
        env = {**self.env, **(env or {})}
        if self.isolation == "docker":
            argv = self._docker_exec(command, network, env)
            full_env = dict(os.environ)
        else:
            argv = self._bwrap(command, network, env) if self.isolation == "bwrap" else ["bash", "-c", command]
            full_env = ({"PATH": os.environ.get("PATH", PATH), "HOME": os.environ.get("HOME", "/root"),
                         "LANG": "C.UTF-8", **env} if self.isolation == "none" else dict(os.environ))
        proc = subprocess.Popen(argv, cwd=str(self.path), env=full_env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout_s)
            return CommandResult(proc.returncode, out.decode("utf-8", "replace"))
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, _ = proc.communicate()
            return CommandResult(-1, (out or b"").decode("utf-8", "replace"), timed_out=True)

    def _bwrap(self, command: str, network: bool, env: Mapping[str, str]) -> list[str]:
        a = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
        if network:
            a.append("--share-net")
        for top in ("/usr", "/etc", "/opt"):
            if os.path.isdir(top):
                a += ["--ro-bind", top, top]
        for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32"):
            if os.path.islink(top):
                a += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                a += ["--ro-bind", top, top]
        a += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for p in self.ro_binds:  # after /tmp's tmpfs, which would hide a path under /tmp
            a += ["--ro-bind", p, p]
        a += ["--bind", str(self.path), APP, "--ro-bind", str(self.meta), "/codegym", "--chdir", APP,
              "--clearenv", "--setenv", "PATH", PATH, "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8"]
        for k, v in env.items():
            a += ["--setenv", k, v]
        return a + ["bash", "-c", command]

    def _docker_exec(self, command: str, network: bool, env: Mapping[str, str]) -> list[str]:
        if self._container is None or self._networked != network:
            self._stop_container()
            name = f"codegym-scaffold-{uuid.uuid4().hex[:10]}"
            argv = ["docker", "run", "-d", "--rm", "--name", name, "--label", "codegym.scaffold=1",
                    "--network", "host" if network else "none", "-v", f"{self.path}:{APP}",
                    "-v", f"{self.meta}:/codegym:ro", "-w", APP, self.image, "sleep", "infinity"]
            r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                raise BoxError(f"docker could not start a container of {self.image!r}: {r.stderr.strip()[-400:]}")
            self._container, self._networked = name, network
        a = ["docker", "exec", "-w", APP]
        for k, v in env.items():
            a += ["-e", f"{k}={v}"]
        return a + [self._container, "bash", "-c", command]

    # ------------------------------------------------------------------ files

    def snapshot(self) -> tuple[dict[str, str], list[str]]:
        """({path: text} of the workspace now, paths skipped: binary, too large, ignored dirs)."""
        files: dict[str, str] = {}
        skipped: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.path):
            dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_PARTS
                                 and not os.path.islink(os.path.join(dirpath, d)))
            for name in sorted(filenames):
                full = Path(dirpath) / name
                rel = full.relative_to(self.path).as_posix()
                if full.is_symlink() or not full.is_file():
                    skipped.append(rel)
                    continue
                if full.stat().st_size > MAX_FILE_BYTES or name.endswith((".pyc", ".o")):
                    skipped.append(rel)
                    continue
                try:
                    files[rel] = full.read_bytes().decode("utf-8")
                except UnicodeDecodeError:
                    skipped.append(rel)
        return files, skipped

    def close(self) -> None:
        self._stop_container()
        if self.isolation == "docker" and self.root.exists() and os.geteuid() != 0:
            # files a container's root user made may be unreadable to a non-root host user
            subprocess.run(["docker", "run", "--rm", "--network", "none", "-v", f"{self.root}:/r", self.image,
                            "chmod", "-R", "a+rwX", "/r"], capture_output=True, timeout=120, check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    def _stop_container(self) -> None:
        if self._container is not None:
            subprocess.run(["docker", "rm", "-f", self._container], capture_output=True, timeout=120, check=False)
            self._container = None

    def __enter__(self) -> ScaffoldBox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
