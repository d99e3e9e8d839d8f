"""Reading a Harbor task folder from a stranger: confined, capped, checked before any image is built.

`read_harbor_task(folder)` -> `HarborTask`, or `HarborError` with one line naming the file
and the reason. In order:

- the folder is scanned once (`scan_folder`): at most `FolderCaps.files` entries and
  `FolderCaps.total_bytes` (each file at most `FolderCaps.file_bytes`), no FIFO, socket or
  device (reading one hangs or reads a host device), no symlink that resolves outside the
  folder, no hard link to a file outside it (every link of a multiply-linked file must be
  in the folder);
- ``task.toml`` through `codegym.core.tomldoc` (size, nesting, dotted keys; ``inf`` / ``nan``
  anywhere refused) and its numbers in range (timeouts finite and positive, at most
  `MAX_TIMEOUT_S`; memory, storage, CPUs positive and bounded);
- what codegym does not run is refused by name: multi-step tasks (``[[steps]]``), Windows
  tasks, GPUs/TPUs, multi-container environments (a ``docker-compose.yaml`` with services
  besides ``main``; one ``main`` service that only says how to build is read:
  `read_compose`), a separate
  verifier environment, environment variables taken from the host (``${VAR}``);
- ``instruction.md``, ``tests/test.sh``, the environment: ``[environment].docker_image`` and /
  or ``environment/Dockerfile``, whose every image reference (``FROM``, ``COPY --from``,
  ``RUN --mount=from=``) and ``ADD <url>`` is found here (`codegym.sandbox.dockerfile`).

`find_task_folders` lists the task folders under a folder. The content digests of
``environment/`` and ``tests/`` (`tree_digest`) cover names, bytes and file modes.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.core.tomldoc import TomlError, load_toml, non_finite
from codegym.core.yamldoc import parse_yaml
from codegym.sandbox.dockerfile import DockerfileError, ImageRef, image_refs, remote_sources

WORKDIR_DEFAULT = "/app"
#: the longest verifier / agent / build timeout accepted (a day)
MAX_TIMEOUT_S = 86400.0
#: the most memory / storage a task may ask for (1 TiB), in MiB
MAX_MB = 1 << 20
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class HarborError(ValueError):
    """A Harbor folder that cannot be read, built or run (the message names the file)."""


@dataclass(frozen=True)
class FolderCaps:
    """What one task folder may hold: entries, bytes of each file, bytes in all."""

    files: int = 20_000
    file_bytes: int = 256 << 20
    total_bytes: int = 1 << 30


DEFAULT_CAPS = FolderCaps()


def _resolved_inside(root: Path, rel: str) -> Path:
    root = root.resolve()
    p = (root / rel).resolve()
    if p != root and root not in p.parents:
        raise HarborError(f"{root / rel}: resolves outside the task folder ({p})")
    return p


def exists_inside(root: Path, rel: str) -> bool:
    """True when `rel` exists in `root` (HarborError when it resolves outside)."""
    return _resolved_inside(Path(root), rel).exists()


def read_text_inside(root: Path, rel: str, limit: int = 8 << 20) -> str:
    """The UTF-8 text of the regular file `rel` of `root` (confined, at most `limit` bytes)."""
    p = _resolved_inside(Path(root), rel)
    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            raise HarborError(f"{Path(root) / rel}: not a regular file")
        if st.st_size > limit:
            raise HarborError(f"{p}: larger than {limit >> 20} MiB")
        with open(p, "rb") as f:
            data = f.read(limit + 1)
        return data.decode("utf-8")
    except FileNotFoundError:
        raise HarborError(f"{Path(root) / rel}: missing") from None
    except UnicodeDecodeError:
        raise HarborError(f"{Path(root) / rel}: not UTF-8 text") from None


def scan_folder(root: Path, caps: FolderCaps = DEFAULT_CAPS, top: Path | None = None,
                hardlinks: bool = True) -> dict[str, os.stat_result]:
    """{path relative to `top` (default `root`): lstat} of every entry under `top`, checked
    as the module says (links must resolve inside `root`; `hardlinks`: every link of a
    multiply-linked file must be under `top`)."""
    root = Path(root).resolve()
    top = root if top is None else Path(top)
    out: dict[str, os.stat_result] = {}
    total = 0
    inodes: dict[tuple[int, int], int] = {}
    for dirpath, dirs, names in os.walk(top):
        for n in sorted(dirs + names):
            full = os.path.join(dirpath, n)
            rel = os.path.relpath(full, top).replace(os.sep, "/")
            st = os.lstat(full)
            out[rel] = st
            if len(out) > caps.files:
                raise HarborError(f"{top}: more than {caps.files} files and folders (the cap of a task folder)")
            mode = st.st_mode
            if stat.S_ISLNK(mode):
                _resolved_inside(root, os.path.relpath(full, root))
            elif stat.S_ISREG(mode):
                if st.st_size > caps.file_bytes:
                    raise HarborError(f"{full}: {st.st_size >> 20} MiB, larger than the {caps.file_bytes >> 20} MiB "
                                      "a file of a task folder may be")
                total += st.st_size
                if total > caps.total_bytes:
                    raise HarborError(f"{top}: more than {caps.total_bytes >> 20} MiB in all (the cap of a task "
                                      "folder)")
                if st.st_nlink > 1:
                    key = (st.st_dev, st.st_ino)
                    inodes[key] = inodes.get(key, 0) + 1
            elif not stat.S_ISDIR(mode):
                kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
                        else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file")
                raise HarborError(f"{full}: {kind} (a task folder holds regular files, folders and links only)")
    for rel, st in out.items():
        key = (st.st_dev, st.st_ino)
        if hardlinks and stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and inodes.get(key, 0) < st.st_nlink:
            raise HarborError(f"{top / rel}: a hard link to a file outside the task folder ({st.st_nlink} links, "
                              f"{inodes.get(key, 0)} inside)")
    return out


def check_tree(root: Path, rel: str, caps: FolderCaps = DEFAULT_CAPS) -> Path:
    """The directory `rel` of `root`, scanned again right before use (`scan_folder`)."""
    top = _resolved_inside(Path(root), rel)
    if top.is_dir():
        scan_folder(Path(root), caps, top, hardlinks=False)
    return top


def tree_digest(top: Path) -> str:
    """sha256 over the names, file modes and bytes (link targets for links) under `top`."""
    h = hashlib.sha256()
    if not top.is_dir():
        return h.hexdigest()[:16]
    for dirpath, dirs, names in os.walk(top):
        dirs.sort()
        for n in sorted(names + dirs):
            p = Path(dirpath) / n
            st = os.lstat(p)
            h.update(str(p.relative_to(top)).encode() + b"\0" + oct(st.st_mode).encode() + b"\0")
            if stat.S_ISLNK(st.st_mode):
                h.update(os.readlink(p).encode())
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    while chunk := f.read(1 << 20):
                        h.update(chunk)
            h.update(b"\0")
    return h.hexdigest()[:16]


@dataclass
class HarborTask:
    """One Harbor folder as read (confined to the folder, checked)."""

    path: Path
    name: str
    instruction: str
    config: dict[str, Any]
    dockerfile: str | None
    image: str | None                       # [environment].docker_image
    refs: list[ImageRef]                    # images the Dockerfile's build needs
    remote: list[tuple[int, str]]           # ADD sources the daemon would download
    workdir: str
    verifier_timeout_s: float
    build_timeout_s: float
    memory_mb: int
    cpus: float
    has_solution: bool
    verifier_env: dict[str, str] = field(default_factory=dict)
    solution_env: dict[str, str] = field(default_factory=dict)
    verifier_user: str | None = None
    context: str = "environment"                 # the build context, relative to the task folder
    dockerfile_path: str = "environment/Dockerfile"

    @property
    def bases(self) -> list[str]:
        """The external images the environment needs (docker_image, else the Dockerfile's)."""
        return [self.image] if self.image and self.dockerfile is None else list(dict.fromkeys(
            r.image for r in self.refs))


def _table(cfg: dict, key: str, where: Path) -> dict:
    v = cfg.get(key) or {}
    if not isinstance(v, dict):
        raise HarborError(f"{where}: [{key}]: expected a table, not {type(v).__name__}")
    return v


def _number(table: dict, key: str, section: str, where: Path, default: float | None, low: float, high: float,
            integer: bool = False) -> float | None:
    v = table.get(key, default)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise HarborError(f"{where}: {section}.{key}: expected a number, not {v!r}")
    if not (low < v <= high) or (integer and v != int(v)):
        raise HarborError(f"{where}: {section}.{key} = {v!r}: out of range (a {'whole ' if integer else ''}"
                          f"number above {low:g}, at most {high:g})")
    return v


def _size_mb(table: dict, key: str, legacy: str, section: str, where: Path) -> int | None:
    v = table.get(key)
    if v is None and isinstance(table.get(legacy), str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([GMK])\s*", table[legacy].upper())
        if not m:
            raise HarborError(f"{where}: {section}.{legacy} = {table[legacy]!r}: expected e.g. '2G' or '512M'")
        v = int(float(m.group(1)) * {"G": 1024, "M": 1, "K": 1 / 1024}[m.group(2)])
        table = {key: v}
    got = _number(table, key, section, where, None, 0, MAX_MB, integer=True)
    return None if got is None else int(got)


def _env_table(table: dict, section: str, where: Path) -> dict[str, str]:
    env = table.get("env") or {}
    if not isinstance(env, dict):
        raise HarborError(f"{where}: {section}.env: expected a table")
    out = {}
    for k, v in env.items():
        if not _ENV_NAME.fullmatch(str(k)) or not isinstance(v, str):
            raise HarborError(f"{where}: {section}.env.{k}: expected NAME = \"text\"")
        if "${" in v or re.search(r"\$[A-Za-z_]", v):
            raise HarborError(f"{where}: {section}.env.{k} = {v!r}: takes a value from the host's environment, "
                              "which codegym never passes to a task (secrets)")
        out[str(k)] = v
    return out


def read_harbor_task(folder: str | Path, caps: FolderCaps = DEFAULT_CAPS) -> HarborTask:
    """Read and check a Harbor folder (see the module docstring); HarborError names the file."""
    root = Path(folder).resolve()
    if not root.is_dir():
        raise HarborError(f"{root}: not a folder")
    scan_folder(root, caps)
    toml_path = root / "task.toml"
    try:
        cfg = load_toml(read_text_inside(root, "task.toml", limit=256 << 10), str(toml_path))
    except TomlError as e:
        raise HarborError(str(e)) from None
    bad = non_finite(cfg)
    if bad:
        raise HarborError(f"{toml_path}: {bad}: not a finite number")
    steps = cfg.get("steps")
    if steps or (root / "steps").is_dir():
        n = len(steps) if isinstance(steps, list) else "?"
        raise HarborError(f"{toml_path}: a multi-step task ([[steps]]: {n} steps): codegym imports single-step "
                          "Harbor tasks only (one instruction, one verifier, one reward)")
    env_cfg = _table(cfg, "environment", toml_path)
    ver = _table(cfg, "verifier", toml_path)
    agent = _table(cfg, "agent", toml_path)
    sol_cfg = _table(cfg, "solution", toml_path)
    if "command" in ver and not exists_inside(root, "tests/test.sh"):
        raise HarborError(f"{toml_path}: verifier.command: not Harbor's task format (another framework's task.toml; "
                          "Harbor's verifier is tests/test.sh)")
    env_type = env_cfg.get("type")
    if env_type is not None and str(env_type).lower() != "docker":
        raise HarborError(f"{toml_path}: environment.type = {env_type!r}: codegym runs Docker environments only")
    os_name = str(env_cfg.get("os") or "linux").lower()
    if os_name != "linux":
        raise HarborError(f"{toml_path}: environment.os = {os_name!r}: codegym runs Linux containers only")
    if env_cfg.get("gpus") or env_cfg.get("tpu"):
        raise HarborError(f"{toml_path}: the task asks for GPUs/TPUs, which codegym's sandbox does not provide")
    if ver.get("environment") is not None or str(ver.get("environment_mode") or "shared").lower() == "separate":
        raise HarborError(f"{toml_path}: a separate verifier environment ([verifier].environment / "
                          "environment_mode = 'separate') is not supported: the verifier runs in the task's image")
    if env_cfg.get("mcp_servers"):
        raise HarborError(f"{toml_path}: MCP servers ([environment].mcp_servers) are not supported")
    timeout = float(_number(ver, "timeout_sec", "verifier", toml_path, 600.0, 0, MAX_TIMEOUT_S))
    _number(agent, "timeout_sec", "agent", toml_path, None, 0, MAX_TIMEOUT_S)
    build_timeout = float(_number(env_cfg, "build_timeout_sec", "environment", toml_path, 600.0, 0, MAX_TIMEOUT_S))
    memory = _size_mb(env_cfg, "memory_mb", "memory", "environment", toml_path) or 2048
    _size_mb(env_cfg, "storage_mb", "storage", "environment", toml_path)
    cpus = float(_number(env_cfg, "cpus", "environment", toml_path, 1, 0, 1024) or 1)
    verifier_env = _env_table(ver, "verifier", toml_path)
    solution_env = _env_table(sol_cfg, "solution", toml_path)
    user = ver.get("user")
    if user is not None and not re.fullmatch(r"[A-Za-z0-9_.-]{1,32}", str(user)):
        raise HarborError(f"{toml_path}: verifier.user = {user!r}: not a user name or id")
    text = read_text_inside(root, "instruction.md")
    if not exists_inside(root, "tests/test.sh"):
        raise HarborError(f"{root}: no tests/test.sh (the verifier Harbor runs)")
    context, dockerfile_rel = "environment", "environment/Dockerfile"
    for compose in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml"):
        if exists_inside(root, f"environment/{compose}"):
            context, dockerfile_rel = read_compose(root, f"environment/{compose}")
            break
    dockerfile = (read_text_inside(root, dockerfile_rel, limit=1 << 20)
                  if exists_inside(root, dockerfile_rel) else None)
    image = env_cfg.get("docker_image")
    if image is not None and (not isinstance(image, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}",
                                                                               image)):
        raise HarborError(f"{toml_path}: environment.docker_image = {image!r}: not an image reference")
    if dockerfile is None and not image:
        raise HarborError(f"{root}: neither environment/Dockerfile nor [environment].docker_image")
    refs, remote = [], []
    if dockerfile is not None:
        try:
            refs = image_refs(dockerfile, str(root / dockerfile_rel))
            remote = remote_sources(dockerfile, str(root / dockerfile_rel))
        except DockerfileError as e:
            raise HarborError(str(e)) from None
    workdir = str(env_cfg.get("workdir") or "")
    if workdir and not re.fullmatch(r"/[A-Za-z0-9._/-]*", workdir):
        raise HarborError(f"{toml_path}: environment.workdir = {workdir!r}: not a plain absolute path")
    task = _table(cfg, "task", toml_path)
    name = str(task.get("name") or root.name)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/@+-]{0,199}", name):
        raise HarborError(f"{toml_path}: task.name = {name!r}: not a task name")
    return HarborTask(root, name, text, cfg, dockerfile, image, refs, remote, workdir, timeout, build_timeout,
                      int(memory), cpus, exists_inside(root, "solution/solve.sh"), verifier_env, solution_env,
                      None if user is None else str(user), context, dockerfile_rel)


#: keys of a compose service that do not change what runs (Harbor's own override sets most of them)
_COMPOSE_IGNORED = {"image", "command", "volumes", "deploy", "network_mode", "environment", "init", "container_name",
                    "healthcheck", "restart", "tty", "stdin_open", "mem_limit", "cpus", "platform"}


def _compose_path(value: str, root: Path, base: str, where: Path, key: str) -> str:
    """A compose path (``${CONTEXT_DIR}`` = environment/) as a path relative to the task folder."""
    v = value.replace("${CONTEXT_DIR}", "environment").replace("$CONTEXT_DIR", "environment")
    if "$" in v or v.startswith("/"):
        raise HarborError(f"{where}: {key} = {value!r}: only paths inside the task folder (${{CONTEXT_DIR}}) are "
                          "supported")
    rel = os.path.normpath(v if v.split("/", 1)[0] == "environment" else os.path.join(base, v))
    full = _resolved_inside(root, rel)
    return os.path.relpath(full, root.resolve())


def read_compose(root: Path, rel: str) -> tuple[str, str]:
    """(build context, Dockerfile), relative to the task folder, of an environment's compose
    file with one service (``main``, as Harbor's own override names it); HarborError for
    more services or settings codegym does not run."""
    where = root / rel
    parsed = parse_yaml(read_text_inside(root, rel, limit=256 << 10), str(where))
    if parsed.errors or not isinstance(parsed.data, dict):
        raise HarborError(f"{where}: not a compose file: {parsed.errors[0] if parsed.errors else 'not a mapping'}")
    services = parsed.data.get("services")
    if not isinstance(services, dict) or not services:
        raise HarborError(f"{where}: no services")
    if len(services) > 1 or "main" not in services:
        names = ", ".join(map(str, services))
        raise HarborError(f"{where}: multi-container environments are not supported (services: {names}; codegym "
                          "runs the task in one container)")
    main = services["main"] or {}
    if not isinstance(main, dict):
        raise HarborError(f"{where}: services.main: expected a mapping")
    other = sorted(set(main) - _COMPOSE_IGNORED - {"build"})
    if other:
        raise HarborError(f"{where}: services.main.{other[0]}: not supported (codegym builds one image and runs "
                          "it with its own settings)")
    build = main.get("build") or {}
    if isinstance(build, str):
        build = {"context": build}
    if not isinstance(build, dict) or set(build) - {"context", "dockerfile"}:
        raise HarborError(f"{where}: services.main.build: only context and dockerfile are supported")
    context = _compose_path(str(build.get("context") or "${CONTEXT_DIR}"), root, "environment", where,
                            "services.main.build.context")
    dockerfile = _compose_path(str(build.get("dockerfile") or "Dockerfile"), root, context, where,
                               "services.main.build.dockerfile")
    return context, dockerfile


def find_task_folders(src: str | Path) -> list[Path]:
    """`src` itself when it is a task folder, else its sub-folders that are (sorted; no symlinks)."""
    root = Path(src)
    if (root / "task.toml").is_file():
        return [root]
    if not root.is_dir():
        raise HarborError(f"{root}: not a Harbor task folder nor a folder of them")
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and (p / "task.toml").is_file())
