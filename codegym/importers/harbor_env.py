"""Harbor environments on the local Docker engine: confined reads, images, trials.

- `read_text_inside` / `inside` / `check_tree`: files of a Harbor folder are read only
  when their real path (symlinks resolved) is inside the folder;
- `dockerfile_bases` and `build_env_image`: the environment image, built from
  ``environment/`` with no registry pull (a base image that is not local is a
  `HarborError` naming it);
- `build_judge_image`: for an imported task, the environment plus ``/tests``, the reward
  reporter (`codegym.importers.harbor_reward`) and the links that let codegym's docker
  sandbox run Harbor's verifier step (the agent's working directory is the sandbox's
  run directory, ``/logs/verifier`` a private /tmp folder); also reads the working
  directory's files out of the environment image (the imported task's repository);
- `run_trial`: a Harbor-style trial in the task's container (copy ``solution/`` and run
  ``solve.sh`` unless told not to, copy ``tests/``, run ``test.sh``, read the reward).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.sandbox.images import docker_client

__all__ = ["HarborError", "HarborTask", "read_harbor_task", "find_task_folders", "exists_inside", "read_text_inside",
           "check_tree", "dockerfile_bases", "build_env_image",
           "build_judge_image", "run_trial", "TrialResult", "WORKDIR_DEFAULT", "REWARD_REPORTER"]

WORKDIR_DEFAULT = "/app"
REWARD_REPORTER = Path(__file__).with_name("harbor_reward.py")
#: how the sandbox lays out a repo command's files (codegym.judge.kinds.repo: ws/ in the run directory /box)
SANDBOX_WORKDIR = "/box/ws"
VERIFIER_TMP = "/tmp/codegym-verifier"


class HarborError(ValueError):
    """A Harbor folder that cannot be read, built or run (the message names the file)."""


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
    p = _resolved_inside(Path(root), rel)
    try:
        if p.stat().st_size > limit:
            raise HarborError(f"{p}: larger than {limit >> 20} MiB")
        return p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise HarborError(f"{Path(root) / rel}: missing") from None
    except UnicodeDecodeError:
        raise HarborError(f"{Path(root) / rel}: not UTF-8 text") from None


def check_tree(root: Path, rel: str) -> Path:
    """The directory `rel` of `root`, every entry of which resolves inside `root`."""
    top = _resolved_inside(Path(root), rel)
    for dirpath, dirs, files in os.walk(top):
        for n in dirs + files:
            _resolved_inside(Path(root), os.path.relpath(os.path.join(dirpath, n), Path(root).resolve()))
    return top


def dockerfile_bases(text: str, where: Path) -> list[str]:
    """The external images a Dockerfile starts from (stage names and ``scratch`` left out)."""
    args = {m.group(1): m.group(2) for m in re.finditer(r"^\s*ARG\s+(\w+)=(\S+)", text, re.M | re.I)}
    stages: set[str] = set()
    bases: list[str] = []
    for m in re.finditer(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", text, re.M | re.I):
        image = re.sub(r"\$\{?(\w+)\}?", lambda a: args.get(a.group(1), a.group(0)), m.group(1))
        if "$" in image:
            raise HarborError(f"{where}: FROM {m.group(1)}: an unresolved build argument")
        if image.lower() != "scratch" and image not in stages and image not in bases:
            bases.append(image)
        if m.group(2):
            stages.add(m.group(2))
    if not bases and "scratch" not in text.lower():
        raise HarborError(f"{where}: no FROM line")
    return bases


def _client():
    try:
        return docker_client()
    except Exception as e:  # noqa: BLE001 -- no engine, no SDK: say what is needed
        raise HarborError(f"Harbor environments need a running Docker engine and the docker SDK "
                          f"(pip install 'codegym[docker]'): {e}") from None


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for n in sorted(files):
            p = Path(dirpath) / n
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def build_env_image(ht: Any, client: Any = None) -> tuple[str, str]:
    """(tag, working directory) of the task's environment image, built once per content."""
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    client = client or _client()
    where = ht.path / "environment/Dockerfile"
    for base in ht.bases:
        try:
            client.images.get(base)
        except docker.errors.ImageNotFound:
            raise HarborError(f"{where if ht.dockerfile else ht.path / 'task.toml'}: base image {base!r} is not "
                              "available locally (codegym builds without pulling from a registry): build or "
                              "load it first (docker build / docker load)") from None
    if ht.dockerfile is None:
        tag = ht.bases[0]
    else:
        env = check_tree(ht.path, "environment")
        tag = f"codegym/harbor-env:{_digest(env)}"
        try:
            client.images.get(tag)
        except docker.errors.ImageNotFound:
            try:
                client.images.build(path=str(env), tag=tag, pull=False, rm=True, forcerm=True,
                                     labels={"codegym.harbor": "env"})
            except (docker.errors.BuildError, docker.errors.APIError) as e:
                log = " | ".join(str(x.get("stream") or x.get("error") or "").strip()
                                 for x in list(getattr(e, "build_log", []) or [])[-4:] if isinstance(x, dict))
                raise HarborError(f"{where}: docker build failed: {getattr(e, 'msg', e)} {log}".strip()) from None
    workdir = ht.workdir or (client.images.get(tag).attrs.get("Config") or {}).get("WorkingDir") or ""
    if not workdir or workdir == "/":
        raise HarborError(f"{where}: the environment sets no WORKDIR (the agent's working directory); set "
                          "WORKDIR or [environment].workdir")
    return tag, workdir


def _extract_workdir(client: Any, tag: str, workdir: str, dest: Path) -> int:
    """Copy the text files of `workdir` in image `tag` into `dest`; returns how many."""
    import docker.errors  # noqa: PLC0415
    c = client.containers.create(tag, command=["true"], network_disabled=True)
    try:
        try:
            stream, _ = c.get_archive(workdir.rstrip("/") + "/.")
        except docker.errors.NotFound:
            stream = []
        data = b"".join(stream)
    finally:
        import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
        try:
            c.remove(force=True)
        except docker.errors.APIError:  # already gone, or its auto-removal under way
            pass
    dest.mkdir(parents=True, exist_ok=True)
    n = 0
    if not data:
        return 0
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        for m in tf.getmembers():
            name = m.name.split("/", 1)[1] if "/" in m.name else ""
            if not m.isfile() or not name or name.startswith("/") or ".." in name.split("/"):
                continue
            content = tf.extractfile(m).read()
            try:
                content.decode("utf-8")
            except UnicodeDecodeError:
                continue   # binary files are not workspace text
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            (dest / name).write_bytes(content)
            n += 1
    return n


def build_judge_image(ht: Any, repo_dir: Path, client: Any = None) -> tuple[str, str]:
    """(judge image tag, working directory) for an imported task; writes the agent's
    starting files (the environment's working directory) into `repo_dir`."""
    import docker.errors  # noqa: PLC0415
    client = client or _client()
    env_tag, workdir = build_env_image(ht, client)
    if not re.fullmatch(r"/[A-Za-z0-9._/-]+", workdir):
        raise HarborError(f"{ht.path}: working directory {workdir!r} is not a plain absolute path")
    _extract_workdir(client, env_tag, workdir, repo_dir)
    tests = check_tree(ht.path, "tests")
    digest = hashlib.sha256((env_tag + _digest(tests) + workdir).encode()
                            + REWARD_REPORTER.read_bytes()).hexdigest()[:16]
    tag = f"codegym/harbor:{digest}"
    try:
        client.images.get(tag)
        return tag, workdir
    except docker.errors.ImageNotFound:
        pass
    parent = os.path.dirname(workdir) or "/"
    dockerfile = (f"FROM {env_tag}\nUSER root\nCOPY tests/ /tests/\n"
                  "COPY harbor_reward.py /opt/codegym-harbor/reward_report.py\n"
                  f"RUN chmod -R a+rX /tests /opt/codegym-harbor && rm -rf {workdir} && mkdir -p {parent} "
                  f"&& ln -s {SANDBOX_WORKDIR} {workdir} && mkdir -p /logs && ln -sfn {VERIFIER_TMP} /logs/verifier\n")
    with tempfile.TemporaryDirectory(prefix="codegym-harbor-") as ctx:
        shutil.copytree(tests, Path(ctx) / "tests", symlinks=False)
        shutil.copy(REWARD_REPORTER, Path(ctx) / "harbor_reward.py")
        (Path(ctx) / "Dockerfile").write_text(dockerfile)
        try:
            client.images.build(path=ctx, tag=tag, pull=False, rm=True, forcerm=True, network_mode="none",
                                labels={"codegym.harbor": "judge"})
        except (docker.errors.BuildError, docker.errors.APIError) as e:
            raise HarborError(f"{ht.path}: the judge image could not be built: {getattr(e, 'msg', e)}") from None
    try:
        client.containers.run(tag, ["python3", "-c", "pass"], remove=True, network_disabled=True)
    except docker.errors.ContainerError:
        raise HarborError(f"{ht.path}: the environment has no python3, which codegym's docker sandbox needs to "
                          "run the verifier") from None
    return tag, workdir


@dataclass
class HarborTask:
    """One Harbor folder as read (confined to the folder)."""

    path: Path
    name: str
    instruction: str
    config: dict[str, Any]
    dockerfile: str | None
    bases: list[str]
    workdir: str
    verifier_timeout_s: float
    memory_mb: int


def read_harbor_task(folder: str | Path) -> HarborTask:
    """Read and check a Harbor folder; HarborError names the file and field."""
    root = Path(folder).resolve()
    raw = read_text_inside(root, "task.toml")
    try:
        cfg = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as e:
        raise HarborError(f"{root / 'task.toml'}: not TOML: {e}") from None
    text = read_text_inside(root, "instruction.md")
    if not exists_inside(root, "tests/test.sh"):
        raise HarborError(f"{root}: no tests/test.sh (the verifier Harbor runs)")
    env_cfg = cfg.get("environment") or {}
    if not isinstance(env_cfg, dict):
        raise HarborError(f"{root / 'task.toml'}: environment: expected a table")
    dockerfile = (read_text_inside(root, "environment/Dockerfile")
                  if exists_inside(root, "environment/Dockerfile") else None)
    image = env_cfg.get("docker_image")
    if dockerfile is None and not image:
        raise HarborError(f"{root}: neither environment/Dockerfile nor [environment].docker_image")
    bases = dockerfile_bases(dockerfile, root / "environment/Dockerfile") if dockerfile else [str(image)]
    name = ((cfg.get("task") or {}).get("name") if isinstance(cfg.get("task"), dict) else None) or root.name
    ver = cfg.get("verifier") or {}
    try:
        timeout = float(ver.get("timeout_sec", 600.0))
        memory = int(env_cfg.get("memory_mb") or 2048)
    except (TypeError, ValueError) as e:
        raise HarborError(f"{root / 'task.toml'}: verifier.timeout_sec / environment.memory_mb: {e}") from None
    return HarborTask(root, str(name), text, cfg, dockerfile, bases, str(env_cfg.get("workdir") or ""),
                      timeout, memory)


def find_task_folders(src: str | Path) -> list[Path]:
    """`src` itself when it is a task folder, else its sub-folders that are (sorted; no symlinks)."""
    root = Path(src)
    if (root / "task.toml").is_file():
        return [root]
    if not root.is_dir():
        raise HarborError(f"{root}: not a Harbor task folder nor a folder of them")
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and (p / "task.toml").is_file())


# =========================================================================== trials


@dataclass
class TrialResult:
    """What a Harbor-style trial gave: the reward (None: no reward file), all reward keys,
    the verifier's files (judge.json etc.) and the outputs of solve.sh and test.sh."""

    reward: float | None
    rewards: dict[str, float] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    solve_output: str = ""
    test_output: str = ""


def _tar_dir(src: Path, arcname: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.add(str(src), arcname=arcname)
    return buf.getvalue()


def _exec(c: Any, script: str, workdir: str, timeout_s: float) -> str:
    r = c.exec_run(["timeout", "-k", "5", str(int(timeout_s)), "bash", "-c", script], workdir=workdir)
    return (r.output or b"").decode("utf-8", "replace")


def run_trial(folder: str | Path, solve: bool = True, files: dict[str, str] | None = None,
              client: Any = None) -> TrialResult:
    """A Harbor-style trial of the task in `folder` (see the module docstring). `files`
    are written into the working directory first (an agent's work)."""
    ht = read_harbor_task(folder)
    client = client or _client()
    tag, workdir = build_env_image(ht, client)
    # it lives no longer than the trial may (solve + verify): a trial whose owner died does not
    # leave its container behind (auto-removed when the sleep ends)
    life_s = int(1800 + ht.verifier_timeout_s + 60)
    c = client.containers.run(tag, ["sleep", str(life_s)], detach=True, network_mode="none", auto_remove=True,
                              labels={"codegym.harbor": "trial"}, mem_limit=f"{max(512, ht.memory_mb)}m")
    try:
        res = TrialResult(None)
        if files:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tf:
                for rel, text in files.items():
                    data = text.encode("utf-8")
                    info = tarfile.TarInfo(rel)
                    info.size = len(data)
                    tf.addfile(info, io.BytesIO(data))
            c.put_archive(workdir, buf.getvalue())
        if solve:
            c.put_archive("/", _tar_dir(check_tree(ht.path, "solution"), "solution"))
            res.solve_output = _exec(c, "mkdir -p /logs/agent && chmod +x /solution/solve.sh && (/solution/"
                                        "solve.sh) > /logs/agent/oracle.txt 2>&1; cat /logs/agent/oracle.txt",
                                     workdir, 1800)
        c.put_archive("/", _tar_dir(check_tree(ht.path, "tests"), "tests"))
        res.test_output = _exec(c, "mkdir -p /logs/verifier && rm -f /logs/verifier/reward.txt "
                                   "/logs/verifier/reward.json && chmod +x /tests/test.sh && (/tests/test.sh) > "
                                   "/logs/verifier/test-stdout.txt 2>&1; cat /logs/verifier/test-stdout.txt",
                                workdir, ht.verifier_timeout_s)
        stream, _ = c.get_archive("/logs/verifier/.")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tf:
            for m in tf.getmembers():
                if m.isfile():
                    res.files[m.name.split("/", 1)[-1]] = tf.extractfile(m).read().decode("utf-8", "replace")
        if "reward.json" in res.files:
            res.rewards = {k: float(v) for k, v in json.loads(res.files["reward.json"]).items()}
            res.reward = res.rewards.get("reward")
        elif "reward.txt" in res.files:
            res.reward = float(res.files["reward.txt"].strip())
            res.rewards = {"reward": res.reward}
        return res
    finally:
        import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
        try:
            c.remove(force=True)
        except docker.errors.APIError:  # already gone, or its auto-removal under way
            pass
