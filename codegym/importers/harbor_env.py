"""Harbor environments on the local Docker engine: which images, the environment image, the judge image.

- `plan_environment`: before anything is built, where each image the task needs comes
  from -- already local; pulled (the user allows it: ``pull="yes"``, or ``"auto"`` when a
  registry answers); a local stand-in made without a registry (`StandIn`, e.g. a Python
  base from Debian's packages: `codegym.importers.harbor_bases`), with the difference said;
  else a `HarborError` naming the image and why none can be had. Harbor's own order: a
  ``[environment].docker_image`` is used as is; only when it cannot be had is
  ``environment/Dockerfile`` built instead (as ``harbor run --force-build`` does).
- `realize_plan` does the pulls and makes the stand-ins; `build_env_image` builds
  ``environment/`` (every image reference checked, rewritten to its stand-in; no network
  unless the user allows it: Docker's default network, or the host's where containers
  have no DNS; within the task's ``build_timeout_sec`` and the user's bound;
  `codegym.sandbox.imagebuild`).
- `extract_workdir`: the agent's working directory read out of the image as a stream:
  text files up to `WORKSPACE_FILE_BYTES` become the task's repository, the rest (binary
  or large files, e.g. a 200 MB data file) stay in the image and are listed.
- `build_judge_image`: the environment plus ``/tests`` (``test.sh`` made executable as
  root, as Harbor's ``chmod +x`` does), the reward reporter, the working directory's files
  that are not in the task kept aside to be restored before the verifier runs, and the
  links that let codegym's docker sandbox run Harbor's verifier step. Tags are content
  hashes that cover file modes.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.importers.harbor_read import HarborError, HarborTask, check_tree, tree_digest
from codegym.sandbox.docker import CONTAINER_PYTHON
from codegym.sandbox.dockerfile import substitute
from codegym.sandbox.hostnet import with_host_settings
from codegym.sandbox.imagebuild import ImageBuildError, build_image, pull_image
from codegym.sandbox.images import docker_client, registry_reachable

REWARD_REPORTER = Path(__file__).with_name("harbor_reward.py")
#: how the sandbox lays out a repo command's files (codegym.judge.kinds.repo: ws/ in the run directory /box)
SANDBOX_WORKDIR = "/box/ws"
VERIFIER_TMP = "/tmp/codegym-verifier"
#: where the judge image keeps the working directory's files that are not part of the task
BASE_COPY = "/opt/codegym-harbor/base"
#: "auto": pull a missing image when a registry answers; "yes": always try; "no": never
PULL_POLICIES = ("auto", "yes", "no")
#: a working-directory file larger than this is not copied into the task (it stays in the image)
WORKSPACE_FILE_BYTES = 4 << 20
WORKSPACE_TOTAL_BYTES = 128 << 20
WORKSPACE_FILES = 20_000


@dataclass(frozen=True)
class StandIn:
    """A local image made without a registry for an image that cannot be had: its tag, a
    callable that makes it (returns the tag), and the difference from the original."""

    image: str
    make: Callable[[Any], str]
    note: str


@dataclass
class EnvPlan:
    """Where each image comes from: `use` an existing image as the environment (else the
    Dockerfile is built), `pull` these, `stand_ins` for these, and notes for the report."""

    use: str | None = None
    pull: list[str] = field(default_factory=list)
    stand_ins: dict[str, StandIn] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def replace(self) -> dict[str, str]:
        return {img: s.image for img, s in self.stand_ins.items()}


def docker_or_error():
    """A client of the engine, or HarborError saying what is needed."""
    try:
        return docker_client()
    except Exception as e:  # noqa: BLE001 -- no engine, no SDK: say what is needed
        raise HarborError(f"Harbor environments need a running Docker engine and the docker SDK "
                          f"(pip install 'codegym[docker]'): {e}") from None


def _local(client: Any, image: str) -> bool:
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    try:
        client.images.get(image)
        return True
    except docker.errors.ImageNotFound:
        return False
    except docker.errors.APIError as e:
        raise HarborError(f"image {image!r}: {e.explanation or e}") from None


def plan_environment(ht: HarborTask, client: Any, pull: str = "auto",
                     stand_in: Callable[[str], StandIn | None] | None = None,
                     registry: Callable[[], bool] = registry_reachable, network: bool | str = False) -> EnvPlan:
    """Where the images of `ht` come from (see the module docstring); nothing is built or
    pulled here. HarborError names the first image none can be had for."""
    if pull not in PULL_POLICIES:
        raise ValueError(f"pull must be one of {PULL_POLICIES}")
    plan = EnvPlan()
    reachable: list[bool] = []

    def can_pull() -> bool:
        if pull == "no":
            return False
        if pull == "yes":
            return True
        if not reachable:
            reachable.append(registry())
        return reachable[0]

    where = ht.path / "task.toml"
    if ht.image:
        sub = None
        if _local(client, ht.image):
            plan.use = ht.image
        elif can_pull():
            plan.use, plan.pull = ht.image, [ht.image]
        elif (sub := stand_in(ht.image) if stand_in else None) is not None:
            plan.use, plan.stand_ins[ht.image] = sub.image, sub
            plan.notes.append(sub.note)
        elif ht.dockerfile is None:
            raise HarborError(_unavailable(where, ht.image, pull, "environment.docker_image"))
        else:
            plan.notes.append(f"environment.docker_image {ht.image!r} is not local and not pulled: "
                              "environment/Dockerfile is built instead (as `harbor run --force-build` does)")
        if plan.use:
            return plan
    dockerfile = ht.path / ht.dockerfile_path
    for line, src in ht.remote:
        if not network:
            raise HarborError(f"{dockerfile}:{line}: ADD {src}: the engine would download it during the build "
                              "(builds have no network; --build-network allows it)")
    for ref in ht.refs:
        if ref.image in plan.pull or ref.image in plan.stand_ins or _local(client, ref.image):
            continue
        if can_pull():
            plan.pull.append(ref.image)
            continue
        sub = stand_in(ref.image) if stand_in else None
        if sub is None:
            raise HarborError(_unavailable(f"{dockerfile}:{ref.line}", ref.image, pull, ref.how))
        plan.stand_ins[ref.image] = sub
        plan.notes.append(sub.note)
    return plan


def _unavailable(where: Any, image: str, pull: str, how: str) -> str:
    why = {"no": "pulling is off (--no-pull)", "yes": "", "auto": "no registry answers (--pull to try anyway)"}[pull]
    low = image.lower().split("/")[-1]
    if low.startswith("ubuntu"):
        made = "Ubuntu's images cannot be made from the Debian mirror this machine builds roots from"
    else:
        made = "no local stand-in can be made for it here (codegym makes them for python:3.x and debian:<suite>)"
    return (f"{where}: {how} {image!r} is not available locally; {why + '; ' if why else ''}{made}: "
            "load it (docker load / docker pull) and import again")


def realize_plan(plan: EnvPlan, client: Any, progress: Callable[[str], None] | None = None,
                 pull_timeout_s: float = 900.0) -> list[str]:
    """Pull what the plan pulls and make its stand-ins; returns the report's lines (the pulls,
    then the plan's notes: each stand-in and how it differs)."""
    lines = []
    for image in plan.pull:
        if _local(client, image):
            continue
        try:
            pull_image(image, timeout_s=pull_timeout_s)
        except ImageBuildError as e:
            raise HarborError(f"image {image!r}: {e}") from None
        lines.append(f"{image} was pulled from its registry")
    for image, sub in plan.stand_ins.items():
        try:
            sub.make(client)
        except Exception as e:  # noqa: BLE001 -- a stand-in that cannot be made: one line for this task
            raise HarborError(f"image {image!r}: its local stand-in {sub.image} could not be made: {e}") from None
    return lines + plan.notes


@dataclass
class EnvImage:
    """The environment image: its tag, the working directory (None: the environment sets
    none, and Harbor runs the task in ``/``), and the report's notes of its build."""

    tag: str
    workdir: str | None
    notes: list[str] = field(default_factory=list)


def build_env_image(ht: HarborTask, plan: EnvPlan, client: Any, network: bool | str = False,
                    timeout_cap_s: float | None = None) -> EnvImage:
    """The task's environment image (built once per content: the environment's files and
    modes, the stand-ins, the network setting and what the host gave a networked build:
    `codegym.sandbox.hostnet.with_host_settings`)."""
    where = ht.path / ht.dockerfile_path
    notes: list[str] = []
    if plan.use is not None:
        tag = plan.use
    else:
        env = check_tree(ht.path, ht.context)
        text = ht.dockerfile or ""
        if plan.stand_ins:
            text = substitute(text, plan.replace, str(where))
        host = with_host_settings(text, str(where)) if network else None
        if host is not None:
            text = host.dockerfile
            notes.append(host.note)
        # the files and modes of environment/, the Dockerfile as built, the ids of the images it
        # names (a re-pulled or remade base gives a new image), the network setting and what the host gave
        ids = sorted({client.images.get(plan.replace.get(r.image, r.image)).id for r in ht.refs})
        key = hashlib.sha256("\0".join([tree_digest(env), text, *ids, str(network),
                                         host.digest if host else ""]).encode()).hexdigest()[:16]
        tag = f"codegym/harbor-env:{key}"
        if not _local(client, tag):
            bound = min(ht.build_timeout_s, timeout_cap_s) if timeout_cap_s else ht.build_timeout_s
            with tempfile.TemporaryDirectory(prefix="codegym-harbor-df-") as tmp:
                df = Path(tmp) / "Dockerfile"
                df.write_text(text, encoding="utf-8")
                try:
                    build_image(tag, path=str(env), dockerfile=str(df), network=network, timeout_s=bound,
                                labels={"codegym.harbor": "env"}, files=host.files if host else None,
                                buildargs=host.buildargs if host else None)
                except ImageBuildError as e:
                    hint = ""
                    if not network and re.search(r"\b(apt-get|apt|apk|pip3?|npm|curl|wget|git|go|cargo|gem|uv)\b",
                                                 str(e)):
                        hint = " [builds have no network: --build-network lets RUN reach it]"
                    raise HarborError(f"{where}: {e}{hint}") from None
    workdir = ht.workdir or (client.images.get(tag).attrs.get("Config") or {}).get("WorkingDir") or ""
    if not workdir or workdir == "/":
        return EnvImage(tag, None, notes)
    if not re.fullmatch(r"/[A-Za-z0-9._/-]+", workdir):
        raise HarborError(f"{ht.path}: working directory {workdir!r} is not a plain absolute path")
    return EnvImage(tag, workdir.rstrip("/"), notes)


class _ChunkReader(io.RawIOBase):
    """A file over an iterator of byte chunks (a container archive, streamed)."""

    def __init__(self, chunks: Iterator[bytes]):
        self._chunks = iter(chunks)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not self._buf:
            try:
                self._buf = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n], self._buf = self._buf[:n], self._buf[n:]
        return n


@dataclass
class WorkdirCopy:
    """What `extract_workdir` copied: text files into the task, and what it left in the image."""

    files: int = 0
    bytes: int = 0
    kept: list[tuple[str, int, str]] = field(default_factory=list)   # (path, size, why)


def extract_workdir(client: Any, tag: str, workdir: str, dest: Path | None) -> tuple[WorkdirCopy, dict[str, bytes]]:
    """Stream `workdir` of image `tag`: text files within the caps are written under `dest`
    (when given) and returned; the others are listed as kept in the image."""
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    c = client.containers.create(tag, command=["true"], network_disabled=True, labels={"codegym.harbor": "read"})
    try:
        return read_workdir(c, workdir, dest)
    finally:
        try:
            c.remove(force=True)
        except docker.errors.APIError:
            pass


def read_workdir(c: Any, workdir: str, dest: Path | None) -> tuple[WorkdirCopy, dict[str, bytes]]:
    """`extract_workdir` from container `c` (created or running)."""
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    copy, files = WorkdirCopy(), {}
    try:
        stream, _ = c.get_archive(workdir.rstrip("/") + "/.", chunk_size=1 << 20)
    except docker.errors.NotFound:
        return copy, files
    with tarfile.open(fileobj=io.BufferedReader(_ChunkReader(stream), 1 << 20), mode="r|") as tf:
        for m in tf:
            name = m.name.split("/", 1)[1] if "/" in m.name else ""
            if not name or name.startswith("/") or ".." in name.split("/"):
                continue
            if not m.isfile():
                if m.issym() or m.islnk():
                    copy.kept.append((name, 0, "a link"))
                continue
            why = None
            if m.size > WORKSPACE_FILE_BYTES:
                why = f"larger than {WORKSPACE_FILE_BYTES >> 20} MiB"
            elif copy.bytes + m.size > WORKSPACE_TOTAL_BYTES or copy.files >= WORKSPACE_FILES:
                why = "beyond the task's size caps"
            data = b""
            if why is None:
                data = tf.extractfile(m).read()
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    why = "not UTF-8 text"
            if why is not None:
                copy.kept.append((name, m.size, why))
                continue
            files[name] = data
            copy.files += 1
            copy.bytes += m.size
            if dest is not None:
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                (dest / name).write_bytes(data)
    return copy, files


def _runs_python(client: Any, tag: str) -> bool:
    """Whether the docker sandbox's runner interpreter starts in image `tag` (the container removed)."""
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    c = client.containers.create(tag, [CONTAINER_PYTHON, "-c", "pass"], network_disabled=True, entrypoint=[],
                                 labels={"codegym.harbor": "check"})
    try:
        c.start()
        return c.wait(timeout=120).get("StatusCode") == 0
    except docker.errors.APIError:
        return False
    finally:
        try:
            c.remove(force=True)
        except docker.errors.APIError:
            pass


def build_judge_image(ht: HarborTask, env_tag: str, workdir: str, kept: list[str], client: Any,
                      timeout_s: float = 1800.0) -> str:
    """The judge image of an imported task (see the module docstring); checks it has python3."""
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    tests = check_tree(ht.path, "tests")
    restore = "\n".join(kept) + ("\n" if kept else "")
    parent = os.path.dirname(workdir) or "/"
    keep = (f"mkdir -p {BASE_COPY} && (cd {workdir} && tar -cf - -T /opt/codegym-harbor/restore.txt "
            f"--no-recursion 2>/dev/null | tar -C {BASE_COPY} -xf -) ; " if kept else "")
    dockerfile = (f"FROM {env_tag}\nUSER root\nENTRYPOINT []\nCOPY tests/ /tests/\n"
                  "COPY harbor_reward.py /opt/codegym-harbor/reward_report.py\n"
                  "COPY restore.txt /opt/codegym-harbor/restore.txt\n"
                  f"RUN {keep}chmod -R a+rX /tests /opt/codegym-harbor && chmod +x /tests/test.sh && "
                  f"{{ [ -e {CONTAINER_PYTHON} ] || {{ p=$(command -v python3) && ln -s \"$p\" {CONTAINER_PYTHON}; }} "
                  f"|| true; }} && rm -rf {workdir} "
                  f"&& mkdir -p {parent} && ln -s {SANDBOX_WORKDIR} {workdir} && mkdir -p /logs "
                  f"&& ln -sfn {VERIFIER_TMP} /logs/verifier\n")
    # the environment's image id (a re-pulled base gives a new judge image), the tests' names, modes
    # and bytes, this recipe, the kept files and the reporter
    env_id = client.images.get(env_tag).id
    digest = hashlib.sha256("\0".join((env_id, tree_digest(tests), dockerfile, restore)).encode()
                            + REWARD_REPORTER.read_bytes()).hexdigest()[:16]
    tag = f"codegym/harbor:{digest}"
    if _local(client, tag) and _runs_python(client, tag):
        return tag
    with tempfile.TemporaryDirectory(prefix="codegym-harbor-") as ctx:
        shutil.copytree(tests, Path(ctx) / "tests", symlinks=False)
        shutil.copy(REWARD_REPORTER, Path(ctx) / "harbor_reward.py")
        (Path(ctx) / "restore.txt").write_text(restore, encoding="utf-8")
        (Path(ctx) / "Dockerfile").write_text(dockerfile)
        try:
            build_image(tag, path=ctx, labels={"codegym.harbor": "judge"}, timeout_s=timeout_s)
        except ImageBuildError as e:
            raise HarborError(f"{ht.path}: the judge image could not be built: {e}") from None
    if not _runs_python(client, tag):
        try:
            client.images.remove(tag, force=True)
        except docker.errors.APIError:
            pass
        raise HarborError(f"{ht.path}: the environment has no python3 ({CONTAINER_PYTHON} or on PATH), which "
                          "codegym's docker sandbox needs to run the verifier") from None
    return tag
