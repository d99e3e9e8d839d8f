"""Python environments for repository tests: built once on the host, read-only in the sandbox.

A repository's tests need packages (pytest, the repository's dependencies). `EnvSpec`
names them (pip requirement strings) and what they are for (repository and version,
labels in the cache key). `build_env` makes a virtual environment of the sandbox's
Python once per key under `env_root()`, in a trusted build step that may use the package
registry (pip); tests then run offline with the env's ``bin`` first on PATH. The local
backend binds `env_root()` read-only into every slot (`sandbox_binds`); `env_image` builds
the Docker backend's image of the same key (``FROM codegym/python:3.11``, no pull, no
network). docs/swe.md, "Environments", says more.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from codegym.core.languages import python_path
from codegym.sandbox.images import build_local, docker_client

__all__ = ["EnvSpec", "PythonEnv", "EnvBuildError", "env_root", "build_env", "find_env", "env_image",
           "sandbox_binds", "ENV_FORMAT"]

#: bump when the layout of a built environment changes (part of every key)
ENV_FORMAT = 1
_MARKER = ".codegym-env.json"


class EnvBuildError(RuntimeError):
    """An environment that could not be built (pip failed, no interpreter, no registry)."""


@dataclass(frozen=True)
class EnvSpec:
    """What a repository's tests need.

    repo      the repository (``owner/name``; a label, part of the key)
    version   its version (SWE-bench's ``version``; a label, part of the key)
    packages  pip requirement strings (``pytest>=7``, ``hypothesis``); installed in order
    python    the interpreter the env is made from (default: the sandbox's, `python_path`)
    """

    repo: str = ""
    version: str = ""
    packages: tuple[str, ...] = ()
    python: str | None = None

    def interpreter(self) -> str:
        return self.python or python_path()

    @property
    def key(self) -> str:
        """sha256 of (format, repository, version, packages, interpreter and its version)."""
        py = self.interpreter()
        doc = {"format": ENV_FORMAT, "repo": self.repo, "version": self.version,
               "packages": list(self.packages), "python": os.path.realpath(py), "pyver": _py_version(py)}
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()

    def describe(self) -> str:
        label = self.repo + (f"@{self.version}" if self.version else "")
        return f"{label or 'environment'} [{', '.join(self.packages) or 'no packages'}]"


@functools.cache
def _py_version(python: str) -> str:
    try:
        out = subprocess.run([python, "-c", "import sys; print(sys.version)"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise EnvBuildError(f"cannot run the environment's interpreter {python}: {e}") from None
    if out.returncode != 0:
        raise EnvBuildError(f"cannot run the environment's interpreter {python}: {out.stderr.strip()[-300:]}")
    return out.stdout.strip()


@dataclass(frozen=True)
class PythonEnv:
    """A built environment: `path` (a virtual environment), its `spec` and `key`, and what
    it installed (`installed`: ``name==version`` lines)."""

    path: Path
    spec: EnvSpec
    key: str
    installed: tuple[str, ...] = ()

    @property
    def bin(self) -> Path:
        return self.path / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def path_dirs(self) -> list[str]:
        """Directories to put first on PATH (``python``, ``python3``, ``pytest`` ... resolve here)."""
        return [str(self.bin)]

    def env_vars(self) -> dict[str, str]:
        """Variables of the test commands that name the environment."""
        return {"VIRTUAL_ENV": str(self.path)}

    def to_dict(self) -> dict:
        return {"path": str(self.path), "key": self.key, "repo": self.spec.repo, "version": self.spec.version,
                "packages": list(self.spec.packages), "installed": list(self.installed)}


def env_root() -> Path:
    """Where environments are built: ``$CODEGYM_ENVS``, else ``/usr/local/lib/codegym/envs``
    as root (inside /usr, which every slot already sees read-only; the sandbox's uids
    cannot enter /root), else ``~/.cache/codegym/envs``. Created world-readable: the sandbox
    reads it as another uid. Not under /tmp: a slot mounts its own /tmp over it."""
    base = os.environ.get("CODEGYM_ENVS")
    if base:
        root = Path(base)
    elif os.geteuid() == 0:
        root = Path("/usr/local/lib/codegym/envs")
    else:
        root = Path.home() / ".cache" / "codegym" / "envs"
    root = root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    return root


def sandbox_binds() -> list[str]:
    """Directories the local backend binds read-only into its slots: the environments."""
    try:
        root = env_root()
    except OSError:
        return []
    return [] if str(root).startswith("/usr/") else [str(root)]  # /usr is bound already


def _dir_name(spec: EnvSpec, key: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec.repo.replace("/", "__")).strip("-.")[:40] or "env"
    return f"{slug}-{key[:16]}"


_ENVS: dict[str, PythonEnv] = {}
_ENVS_LOCK = threading.Lock()


def find_env(spec: EnvSpec) -> PythonEnv | None:
    """The built environment of `spec`, or None (nothing is built)."""
    key = spec.key
    hit = _ENVS.get(key)
    if hit is not None and (hit.path / _MARKER).is_file():
        return hit
    path = env_root() / _dir_name(spec, key)
    try:
        info = json.loads((path / _MARKER).read_text())
    except (OSError, ValueError):
        return None
    env = PythonEnv(path, spec, key, tuple(info.get("installed", ())))
    _ENVS[key] = env
    return env


def build_env(spec: EnvSpec, log: Callable[[str], None] | None = None) -> PythonEnv:
    """The environment of `spec`, built now if it is not yet (once per key, across threads
    and processes: a lock file). Raises EnvBuildError with pip's last lines on failure."""
    env = find_env(spec)
    if env is not None:
        return env
    key = spec.key
    root = env_root()
    with _ENVS_LOCK, open(root / f".lock-{key[:16]}", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env = find_env(spec)  # built by another process meanwhile
        if env is not None:
            return env
        path = root / _dir_name(spec, key)
        if path.exists():  # a build that died half-way
            shutil.rmtree(path, ignore_errors=True)
        t0 = time.monotonic()
        if log:
            log(f"building the environment {spec.describe()} in {path}")
        try:
            installed = _make(spec, path)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
        info = {"spec": {"repo": spec.repo, "version": spec.version, "packages": list(spec.packages),
                         "python": spec.interpreter()}, "key": key, "installed": installed,
                "built_s": round(time.monotonic() - t0, 2)}
        (path / _MARKER).write_text(json.dumps(info, indent=1))
        _readable(path)
        env = PythonEnv(path, spec, key, tuple(installed))
        _ENVS[key] = env
        if log:
            log(f"built {path.name} in {info['built_s']} s: {len(installed)} packages")
        return env


def _run(argv: Sequence[str], what: str, timeout: float = 1800) -> str:
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})
    except (OSError, subprocess.SubprocessError) as e:
        raise EnvBuildError(f"{what}: {e}") from None
    if p.returncode != 0:
        tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-12:])
        raise EnvBuildError(f"{what} failed (exit {p.returncode}):\n{tail}")
    return p.stdout


def _make(spec: EnvSpec, path: Path) -> list[str]:
    """Create the virtual environment and install the packages; the installed list."""
    python = spec.interpreter()
    _run([python, "-m", "venv", "--without-pip", str(path)], f"making a virtual environment with {python}")
    target = str(path / "bin" / "python")
    # the installing pip is this process's (pip --python installs into another interpreter),
    # so the environment itself carries no pip: nothing in it can reach the registry
    pip = [sys.executable, "-m", "pip", "--python", target]
    if spec.packages:
        _run([*pip, "install", "--no-warn-script-location", *spec.packages],
             f"pip install {' '.join(spec.packages)}")
    out = _run([*pip, "list", "--format=freeze"], "pip list")
    return [line for line in out.splitlines() if "==" in line]


def _readable(path: Path) -> None:
    for root, dirs, files in os.walk(path):
        for n in dirs:
            p = os.path.join(root, n)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o755)
        for n in files:
            p = os.path.join(root, n)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o444)


# --------------------------------------------------------------------------- docker

_IMAGE_LOCK = threading.Lock()
_IMAGES: set[str] = set()


def env_image(env: PythonEnv, base: str = "codegym/python:3.11", client=None) -> str:
    """The tag of the Docker backend's image of `env` (``codegym/env:<key>``): `base` with the
    environment copied to the same path, built once per key and base, with no network and
    no pull (`base` must be a local image). RuntimeError with the build's last lines on failure."""
    tag = "codegym/env:" + hashlib.sha256(f"{env.key}\0{base}".encode()).hexdigest()[:16]
    if tag in _IMAGES:
        return tag
    import docker.errors  # noqa: PLC0415 -- the [docker] extra
    client = client or docker_client()
    with _IMAGE_LOCK:
        try:
            client.images.get(tag)
            _IMAGES.add(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        dockerfile = (f"FROM {base}\nCOPY env/ {env.path}/\n"
                      f"LABEL codegym.env-key={env.key} codegym.env-repo=\"{env.spec.repo}\"\n")
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tf:
            data = dockerfile.encode()
            ti = tarfile.TarInfo("Dockerfile")
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
            tf.add(str(env.path), arcname="env")
        buf.seek(0)
        try:
            build_local(client, tag, fileobj=buf, custom_context=True, labels={"codegym.task-image": "1"})
        except RuntimeError as e:
            raise RuntimeError(f"{tag}: {e}") from None
        _IMAGES.add(tag)
    return tag
