"""Python environments for repository tests, built inside the sandbox, read-only to the tests.

Two layers, each built once and kept under `env_root()`:

- `PythonEnvSpec` -> `PythonEnv`: a virtual environment of the requested Python with pip,
  setuptools and wheel and the packages the tests need (PEP 508 requirements, checked by
  `codegym.sandbox.pyreqs`), shared by every instance of one repository and version
  (`build_env`; its key: repository, version, packages, the system and its Python).
- `RepoInstall` -> `InstanceEnv`: that environment with the repository itself installed
  at one base commit, as SWE-bench's harness does (pre-install commands, then e.g.
  ``python -m pip install -e .`` in the checkout at ``/box/ws``, where the tests later run):
  its metadata, entry points and the files the install generates in the checkout
  (`InstanceEnv.files`, which the grading tree lays under the candidate's files) exist
  when the tests run. A hard-link copy of the shared environment (`build_instance`), so
  it costs what the install adds.

Every step runs confined (`codegym.sandbox.envbuild.run_step`: bubblewrap or a build
container, an unprivileged uid, network for the step only); the host only prepares the
folders, reads what was built (never through a link) and records it in markers of its
own (``.meta/``, out of the sandbox's reach). The local backend binds `env_root()`
read-only into every slot (`sandbox_binds`); the docker backend runs the tests in images
of the same folders (`codegym.sandbox.envimage`). docs/swe.md, "Environments", says more.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from codegym.sandbox.envbuild import (
    CHECKOUT,
    BuildSystem,
    EnvBuildError,
    build_uid,
    changed_files,
    copy_checkout,
    finish_tree,
    host_system,
    link_farm,
    own_dirs,
    run_step,
)
from codegym.sandbox.isolation import rmtree
from codegym.sandbox.pyreqs import check_requirements
from codegym.sandbox.roots import (
    RootError,
    choose_python,
    ensure_root,
    find_root,
    root_image,
    root_info,
    roots_unbuildable,
)

#: bump when the layout of a built environment changes (part of every key)
ENV_FORMAT = 2
#: what every environment gets first, as the harness's conda environments have them (the
#: spec's own pins come later and win); setuptools < 71 still has pkg_resources and
#: ``setup.py develop``, wheel < 0.46 its bdist_wheel for those setuptools
BASE_TOOLS = ("pip", "setuptools<71", "wheel<0.46")
#: how a repository is installed when its recipe does not say (editable, as SWE-bench does)
DEFAULT_INSTALL = "python -m pip install -e ."
_META = ".meta"


@dataclass(frozen=True)
class PythonEnvSpec:
    """What a repository's tests need (the shared part).

    repo          the repository (``owner/name``; a label, part of the key)
    version       its version (SWE-bench's ``version``; a label, part of the key)
    packages      PEP 508 requirements installed first, in one pip call
    python        the Python version asked for ("3.9"; None: the sandbox's own)
    pip_packages  PEP 508 requirements installed after (SWE-bench's ``pip_packages``: its pins win)
    trusted       requirements the user gave on the command line: these may be URLs or paths
    strict        the Python version must be had exactly (else the nearest, with a note)

    Requirements are checked when the spec is made (`codegym.sandbox.pyreqs`): a pip option
    or, unless trusted, a URL or local path raises RequirementError (a ValueError)."""

    repo: str = ""
    version: str = ""
    packages: tuple[str, ...] = ()
    python: str | None = None
    pip_packages: tuple[str, ...] = ()
    trusted: tuple[str, ...] = ()
    strict: bool = False

    def __post_init__(self) -> None:
        for name in ("packages", "pip_packages"):
            object.__setattr__(self, name, check_requirements(getattr(self, name), self.trusted))

    def key(self, system: BuildSystem) -> str:
        """sha256 of (format, repository, version, packages, the system and its Python)."""
        doc = {"format": ENV_FORMAT, "repo": self.repo, "version": self.version, "packages": list(self.packages),
               "pip_packages": list(self.pip_packages), "tools": list(BASE_TOOLS), "system": system.ident}
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()

    def describe(self) -> str:
        label = self.repo + (f"@{self.version}" if self.version else "")
        pkgs = [*self.packages, *self.pip_packages]
        return f"{label or 'environment'} [{', '.join(pkgs) or 'no packages'}]"


@dataclass(frozen=True)
class PythonEnv:
    """A built environment: `path` (a virtual environment), its `spec`, `key`, the `system`
    it was built on, and what it holds (`installed`: ``name==version`` lines)."""

    path: Path
    spec: PythonEnvSpec
    key: str
    system: BuildSystem
    installed: tuple[str, ...] = ()

    @property
    def bin(self) -> Path:
        return self.path / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def path_dirs(self) -> list[str]:
        """Directories to put first on PATH (``python``, ``pytest`` ... resolve here)."""
        return [str(self.bin)]

    def env_vars(self) -> dict[str, str]:
        """Variables of the test commands that name the environment."""
        return {"VIRTUAL_ENV": str(self.path)}

    def to_dict(self) -> dict:
        return {"path": str(self.path), "key": self.key, "repo": self.spec.repo, "version": self.spec.version,
                "packages": [*self.spec.packages, *self.spec.pip_packages], "python": self.system.version,
                "system": self.system.ident, "note": self.system.note, "installed": list(self.installed)}


@dataclass(frozen=True)
class RepoInstall:
    """The per-instance part: the repository installed at one base commit.

    checkout     the pristine base tree on the host (copied; a step never writes it)
    digest       what names that tree (``BaseTree.digest``)
    command      the repository's install command, run in the checkout (``/box/ws``)
    pre_install  shell commands run there before it (SWE-bench's ``pre_install``)
    scm_version  the version setuptools-scm / hatch-vcs report (the checkout has no tags)
    """

    checkout: Path
    digest: str
    command: str = DEFAULT_INSTALL
    pre_install: tuple[str, ...] = ()
    scm_version: str | None = None


@dataclass(frozen=True)
class InstanceEnv:
    """A shared environment with the repository installed at one base commit: `path` (a
    virtual environment of its own), the `env` it copies, its `key`, and `files`: what
    the install generated in the checkout ({path: bytes}: egg-info, ``_version.py``,
    compiled extensions), laid under the candidate's files when grading."""

    path: Path
    env: PythonEnv
    key: str
    files: Mapping[str, bytes] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def system(self) -> BuildSystem:
        return self.env.system

    def path_dirs(self) -> list[str]:
        return [str(self.path / "bin")]

    def env_vars(self) -> dict[str, str]:
        return {"VIRTUAL_ENV": str(self.path)}


# ----------------------------------------------------------------------------- where


def env_root() -> Path:
    """Where environments are built: ``$CODEGYM_ENVS``, else ``/var/lib/codegym/envs`` as
    root, else ``~/.cache/codegym/envs``; created world-readable (the sandbox's uids read it;
    its ``.meta`` is the host's alone). Not under /tmp: a slot mounts its own /tmp."""
    base = os.environ.get("CODEGYM_ENVS")
    if base:
        root = Path(base)
    elif os.geteuid() == 0:
        root = Path("/var/lib/codegym/envs")
    else:
        root = Path.home() / ".cache" / "codegym" / "envs"
    root = root.resolve()
    if not (root / _META).is_dir():
        missing = [p for p in (root, *root.parents) if not p.exists()]
        for d in reversed(missing):
            d.mkdir(exist_ok=True)
            os.chmod(d, 0o755)
        (root / _META).mkdir(mode=0o700, exist_ok=True)
        (root / "i").mkdir(mode=0o755, exist_ok=True)
        (root / "s").mkdir(mode=0o711, exist_ok=True)  # build checkouts: each step's uid enters its own
    return root


def sandbox_binds() -> list[str]:
    """Directories the local backend binds read-only into its slots: the environments."""
    try:
        return [str(env_root())]
    except OSError:
        return []


def resolve_system(spec: PythonEnvSpec, backend: str = "local") -> BuildSystem:
    """The system the environment of `spec` is built on, and its tests run on, for `backend`
    ("local" or "docker").

    A spec that asks for a Python gets the Python root of that version (`codegym.sandbox.roots`:
    the nearest available with a note, `spec.strict`: EnvBuildError; the root built first when
    this machine has none); the docker backend then uses the root's image (``docker import``
    of the same root). A spec that asks for none, or a machine that cannot have roots (no
    mmdebstrap, no Debian mirror), gets this host's own system: its Python (a note says so
    when another was asked), and for the docker backend the default image
    (``codegym/python:3.11``, Debian's python3 as on this host) with a copy of the
    environment built here by bubblewrap (that image has no venv to build in)."""
    hit = _SYSTEMS.get((spec.python, spec.strict, backend))
    if hit is not None:
        return hit
    system = _resolve(spec, backend)
    _SYSTEMS[(spec.python, spec.strict, backend)] = system
    return system


_SYSTEMS: dict[tuple, BuildSystem] = {}


def _resolve(spec: PythonEnvSpec, backend: str) -> BuildSystem:
    if spec.python:
        try:
            version, note = choose_python(spec.python, spec.strict)
        except RootError as e:
            raise EnvBuildError(str(e)) from None
        why = None if find_root(version) is not None else _roots_unbuildable()
        if why is None:
            try:
                root = ensure_root(version)
                image = root_image(version) if backend == "docker" else None
            except RootError as e:
                raise EnvBuildError(f"the Python {version} root: {e}") from None
            full = root_info(root).get("python_version") or version
            return BuildSystem(backend, version, root.python, str(root.path), image, f"root:{root.suite}:{full}", note)
        if spec.strict:
            raise EnvBuildError(f"Python {spec.python} was asked (strict) but this machine has no Python roots: {why}")
    system = host_system("local", spec.python, spec.strict)
    if backend == "docker":
        return BuildSystem("local", system.version, system.python, system.root, "codegym/python:3.11", system.ident,
                           system.note)
    return system


_UNBUILDABLE: list[str | None] = []


def _roots_unbuildable() -> str | None:
    """Why this machine cannot build Python roots (asked once per process), or None."""
    if not _UNBUILDABLE:
        _UNBUILDABLE.append(roots_unbuildable())
    return _UNBUILDABLE[0]


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label.replace("/", "__")).strip("-.")[:40] or "env"


def _meta(name: str) -> Path:
    return env_root() / _META / name


def _read_meta(name: str) -> dict | None:
    try:
        return json.loads(_meta(f"{name}.json").read_text())
    except (OSError, ValueError):
        return None


def _write_meta(name: str, info: dict) -> None:
    tmp = _meta(f".{name}.json.tmp")
    tmp.write_text(json.dumps(info, indent=1))
    os.replace(tmp, _meta(f"{name}.json"))


_LOCK = threading.Lock()
_ENVS: dict[tuple, PythonEnv] = {}
_INSTANCES: dict[tuple, InstanceEnv] = {}


def _locked(name: str):
    """An exclusive file lock on `name` (held while the returned file is open)."""
    f = open(_meta(f".lock-{name}"), "w")  # noqa: SIM115 -- closed by the caller's `with`
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


# ----------------------------------------------------------------------------- the shared layer


def find_env(spec: PythonEnvSpec, backend: str = "local") -> PythonEnv | None:
    """The built environment of `spec`, or None (nothing is built)."""
    system = resolve_system(spec, backend)
    key = spec.key(system)
    root = env_root()
    hit = _ENVS.get((str(root), key, system))
    if hit is not None and hit.path.is_dir():
        return hit
    name = f"{_slug(spec.repo)}-{key[:16]}"
    info = _read_meta(name)
    if info is None or info.get("key") != key or not (root / name).is_dir():
        return None
    env = PythonEnv(root / name, spec, key, system, tuple(info.get("installed", ())))
    _ENVS[(str(root), key, system)] = env
    return env


def build_env(spec: PythonEnvSpec, backend: str = "local", log: Callable[[str], None] | None = None) -> PythonEnv:
    """The environment of `spec`, built now if it is not yet (once per key, across threads
    and processes), every step inside the sandbox. EnvBuildError names the failed step."""
    env = find_env(spec, backend)
    if env is not None:
        return env
    system = resolve_system(spec, backend)
    key = spec.key(system)
    name = f"{_slug(spec.repo)}-{key[:16]}"
    with _LOCK, _locked(name):
        env = find_env(spec, backend)
        if env is not None:
            return env
        path = env_root() / name
        if path.exists() or path.is_symlink():  # a build that died half-way
            rmtree(str(path))
        t0 = time.monotonic()
        if log:
            log(f"building the environment {spec.describe()} (Python {system.version}) in {path}")
        try:
            installed = _make_env(spec, system, path)
            finish_tree(path)
        except BaseException:
            rmtree(str(path))
            raise
        info = {"key": key, "spec": {"repo": spec.repo, "version": spec.version, "packages": list(spec.packages),
                                     "pip_packages": list(spec.pip_packages), "python": spec.python},
                "system": system.ident, "python": system.version, "note": system.note, "installed": installed,
                "built_s": round(time.monotonic() - t0, 2)}
        _write_meta(name, info)
        env = PythonEnv(path, spec, key, system, tuple(installed))
        _ENVS[(str(env_root()), key, system)] = env
        if log:
            log(f"built {name} in {info['built_s']} s: {len(installed)} packages")
        return env


def _pip(env_path: Path, *args: str) -> list[str]:
    return [str(env_path / "bin" / "python"), "-m", "pip", *args]


def _make_env(spec: PythonEnvSpec, system: BuildSystem, path: Path) -> list[str]:
    """The virtual environment and its packages, each step confined; the installed list."""
    with build_uid() as uid:
        path.mkdir(mode=0o755)
        own_dirs(path, uid)
        rw = [(str(path), str(path))]
        run_step(system, f"making a Python {system.version} virtual environment",
                 [system.python, "-m", "venv", str(path)], uid=uid, writable=rw, network=False)
        run_step(system, f"pip install -U {' '.join(BASE_TOOLS)}",
                 _pip(path, "install", "-U", *BASE_TOOLS), uid=uid, writable=rw)
        for group in (spec.packages, spec.pip_packages):
            if group:
                run_step(system, f"pip install {' '.join(group)}", _pip(path, "install", *group), uid=uid,
                         writable=rw)
        out = run_step(system, "pip list", _pip(path, "list", "--format=freeze"), uid=uid, writable=rw,
                       network=False)
    return [line.strip() for line in out.splitlines() if re.match(r"^[A-Za-z0-9_.\-]+==\S+$", line.strip())][:5000]


# ----------------------------------------------------------------------------- the per-instance layer

#: bump when what an instance layer holds changes
INSTANCE_FORMAT = 1
#: run by the instance's own Python inside the sandbox: the scripts copied from the shared
#: environment name its interpreter; they are made to name the instance's own
_RETARGET = ("import os, sys\n"
             "old, new = (a.encode() + b'/bin/' for a in sys.argv[1:3])\n"
             "d = os.path.join(sys.argv[2], 'bin')\n"
             "for n in os.listdir(d):\n"
             "    p = os.path.join(d, n)\n"
             "    if os.path.islink(p) or not os.path.isfile(p):\n        continue\n"
             "    with open(p, 'rb') as f:\n        data = f.read()\n"
             "    head = data[:1024]\n"
             "    if not head.startswith(b'#!') or old not in head:\n        continue\n"
             "    os.unlink(p)\n"
             "    with open(p, 'wb') as f:\n        f.write(head.replace(old, new) + data[1024:])\n"
             "    os.chmod(p, 0o755)\n")


def _instance_key(env: PythonEnv, inst: RepoInstall) -> str:
    doc = {"format": INSTANCE_FORMAT, "env": env.key, "tree": inst.digest, "command": inst.command,
           "pre_install": list(inst.pre_install), "scm_version": inst.scm_version}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _load_files(name: str) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    try:
        with tarfile.open(_meta(f"{name}.files.tar")) as tf:
            for m in tf:
                if m.isfile():
                    f = tf.extractfile(m)
                    if f is not None:
                        out[m.name] = f.read()
    except (OSError, tarfile.TarError):
        return {}
    return out


def _store_files(name: str, files: Mapping[str, bytes]) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for rel, data in sorted(files.items()):
            ti = tarfile.TarInfo(rel)
            ti.size, ti.mode = len(data), 0o644
            tf.addfile(ti, io.BytesIO(data))
    tmp = _meta(f".{name}.files.tar.tmp")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, _meta(f"{name}.files.tar"))


def find_instance(env: PythonEnv, inst: RepoInstall) -> InstanceEnv | None:
    """The built instance layer of `inst` over `env`, or None."""
    key = _instance_key(env, inst)
    hit = _INSTANCES.get((str(env.path), key))
    if hit is not None and hit.path.is_dir():
        return hit
    name = f"{env.path.name[:40]}-{key[:16]}"
    info = _read_meta(name)
    path = env_root() / "i" / name
    if info is None or info.get("key") != key or not path.is_dir():
        return None
    found = InstanceEnv(path, env, key, _load_files(name), tuple(info.get("notes", ())))
    _INSTANCES[(str(env.path), key)] = found
    return found


def build_instance(env: PythonEnv, inst: RepoInstall, log: Callable[[str], None] | None = None) -> InstanceEnv:
    """`env` with the repository installed at the base commit of `inst`, built now if it is
    not yet (once per key), every step inside the sandbox. EnvBuildError names the step."""
    found = find_instance(env, inst)
    if found is not None:
        return found
    key = _instance_key(env, inst)
    name = f"{env.path.name[:40]}-{key[:16]}"
    with _LOCK, _locked(name):
        found = find_instance(env, inst)
        if found is not None:
            return found
        path = env_root() / "i" / name
        if path.exists() or path.is_symlink():
            rmtree(str(path))
        t0 = time.monotonic()
        if log:
            log(f"installing the repository ({inst.command}) into a copy of {env.path.name}")
        scratch = Path(tempfile.mkdtemp(prefix=f"{name[:40]}-", dir=env_root() / "s"))
        try:
            files, notes = _make_instance(env, inst, path, scratch)
            finish_tree(path)
        except BaseException:
            rmtree(str(path))
            raise
        finally:
            rmtree(str(scratch))
        _store_files(name, files)
        _write_meta(name, {"key": key, "env": env.key, "tree": inst.digest, "command": inst.command,
                           "pre_install": list(inst.pre_install), "scm_version": inst.scm_version,
                           "files": sorted(files)[:2000], "notes": notes,
                           "built_s": round(time.monotonic() - t0, 2)})
        found = InstanceEnv(path, env, key, files, tuple(notes))
        _INSTANCES[(str(env.path), key)] = found
        if log:
            log(f"installed in {time.monotonic() - t0:.1f} s: {len(files)} generated files")
        return found


def _make_instance(env: PythonEnv, inst: RepoInstall, path: Path, scratch: Path) -> tuple[dict[str, bytes], list]:
    system = env.system
    with build_uid() as uid:
        link_farm(env.path, path)
        own_dirs(path, uid)
        ws = scratch / "ws"
        os.chmod(scratch, 0o755)
        copy_checkout(inst.checkout, ws, uid)
        rw = [(str(path), str(path)), (str(ws), CHECKOUT)]
        variables = {"PATH": f"{path}/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": str(path)}
        if inst.scm_version:
            variables["SETUPTOOLS_SCM_PRETEND_VERSION"] = inst.scm_version
        run_step(system, "pointing the copied scripts at the instance's interpreter",
                 [f"{path}/bin/python", "-I", "-c", _RETARGET, str(env.path), str(path)], uid=uid, writable=rw,
                 network=False)
        if inst.pre_install:  # one script, as the harness's setup script runs them
            run_step(system, f"the pre-install commands ({'; '.join(inst.pre_install)[:200]})",
                     ["sh", "-c", "set -e\n" + "\n".join(inst.pre_install) + "\n"], uid=uid, writable=rw,
                     cwd=CHECKOUT, env=variables)
        run_step(system, f"installing the repository ({inst.command})", ["sh", "-c", inst.command], uid=uid,
                 writable=rw, cwd=CHECKOUT, env=variables)
    return changed_files(ws, inst.checkout)

