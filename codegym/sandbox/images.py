"""The Docker images of the docker backend: which image runs which language, and how they are made.

Owns `DEFAULT_IMAGES` (language -> image of the default pool), the recipes
(`RECIPES`: name -> tags, packages, Dockerfile) and the two ways of making them,
both shipped inside the package: ``dockerfile`` (``docker build`` of
``codegym/_scripts/docker/<name>.Dockerfile``, needs a registry) and
``debootstrap`` (``codegym/_scripts/docker-up.sh``: starts an engine if needed and
builds the same root filesystems from the host's Debian mirror, no registry; what
CI runs).  Also the per-task images built from a task's Dockerfile (`task_image`).
``codegym images`` (`codegym.cli.images`) is the command line over this module.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

#: language -> image of the default pool (the runner needs python3 in every image)
DEFAULT_IMAGES: dict[str, str] = {
    "python": "codegym/python:3.11",
    "c": "codegym/polyglot:latest",
    "cpp": "codegym/polyglot:latest",
}

SCRIPTS = Path(__file__).resolve().parents[1] / "_scripts"
SCRIPT = SCRIPTS / "docker-up.sh"
DOCKERFILES = SCRIPTS / "docker"
#: hosts a `docker build` FROM line pulls from (Docker Hub)
REGISTRY = ("registry-1.docker.io", 443)


@dataclass(frozen=True)
class Recipe:
    """One image: its tags (the first is the main one), apt packages, Dockerfile."""

    name: str
    tags: tuple[str, ...]
    packages: tuple[str, ...]
    note: str

    @property
    def dockerfile(self) -> Path:
        return DOCKERFILES / f"{self.name}.Dockerfile"


RECIPES: dict[str, Recipe] = {
    "python": Recipe("python", ("codegym/python:3.11",), ("python3",), "Python programs"),
    "polyglot": Recipe("polyglot", ("codegym/polyglot:latest",), ("python3", "g++", "make"),
                       "C and C++ programs (python3 runs the sandbox's runner)"),
    "cpp": Recipe("cpp", ("codegym/cpp:latest", "codegym/cpp:gcc12"), ("g++", "make"),
                  "toolchain only, no python: not usable by the docker sandbox"),
}

#: image -> the `codegym images build` recipe that makes it
IMAGE_RECIPES: dict[str, str] = {tag: r.name for r in RECIPES.values() for tag in r.tags}


def missing_image_message(image: str) -> str:
    """What to do about an image the engine does not have."""
    recipe = IMAGE_RECIPES.get(image)
    how = (f"build it with `codegym images build {recipe}`" if recipe
           else "build or pull it (docker build/pull)")
    return f"docker image {image!r} is not present on the engine: {how}"


def default_names() -> list[str]:
    """The recipes of the images the default docker pool uses."""
    names = []
    for img in DEFAULT_IMAGES.values():
        n = IMAGE_RECIPES.get(img)
        if n and n not in names:
            names.append(n)
    return names


def registry_reachable(timeout: float = 3.0) -> bool:
    """Whether Docker Hub answers on its TCP port (a FROM line could be pulled)."""
    try:
        with socket.create_connection(REGISTRY, timeout=timeout):
            return True
    except OSError:
        return False


def docker_client():
    """A client of the engine for image builds (long timeout); raises when none answers."""
    import docker  # noqa: PLC0415 -- optional dependency (extra codegym[docker])
    c = docker.from_env(timeout=600)
    c.ping()
    return c


def image_info(client, tag: str) -> dict | None:
    """Id, size and creation date of the image `tag`, None when absent."""
    import docker.errors  # noqa: PLC0415
    try:
        a = client.api.inspect_image(tag)
    except docker.errors.ImageNotFound:
        return None
    return {"id": a["Id"].split(":", 1)[-1][:12], "size_mb": round(a.get("Size", 0) / 1e6),
            "created": a.get("Created", "")[:19]}


def build_with_dockerfile(client, recipe: Recipe, rebuild: bool, out=sys.stderr) -> None:
    """``docker build`` of the recipe's Dockerfile, tagged with every tag of the recipe."""
    if not rebuild and image_info(client, recipe.tags[0]) is not None:
        print(f"{recipe.tags[0]} exists (--rebuild to rebuild)", file=out)
        return
    print(f"docker build {recipe.dockerfile.name} -> {', '.join(recipe.tags)}", file=out)
    image, logs = client.images.build(path=str(DOCKERFILES), dockerfile=recipe.dockerfile.name,
                                      tag=recipe.tags[0], rm=True, pull=True)
    for t in recipe.tags[1:]:
        image.tag(t)
    for chunk in logs:
        if "error" in chunk:
            raise RuntimeError(chunk["error"])


def build_with_script(names: list[str], rebuild: bool) -> int:
    """Run the shipped docker-up.sh for `names` (starts an engine too); its exit code."""
    if os.geteuid() != 0:
        print("codegym images: the debootstrap method needs root (it may install docker.io and "
              "mmdebstrap and start dockerd); run with sudo, or use --method dockerfile",
              file=sys.stderr)
        return 2
    if shutil.which("apt-get") is None:
        print("codegym images: the debootstrap method needs a Debian host (apt-get); use "
              "--method dockerfile with a registry", file=sys.stderr)
        return 2
    env = dict(os.environ, CODEGYM_IMAGES=" ".join(names), CODEGYM_REBUILD="1" if rebuild else "0")
    return subprocess.run(["bash", str(SCRIPT)], env=env, check=False).returncode


def list_rows(client) -> list[dict]:
    """One row per recipe: image, presence (None client: unknown), languages using it, packages."""
    rows = []
    for r in RECIPES.values():
        info = image_info(client, r.tags[0]) if client is not None else None
        langs = sorted(lang for lang, img in DEFAULT_IMAGES.items() if img in r.tags)
        rows.append({"name": r.name, "image": r.tags[0], "present": info is not None,
                     "languages": langs, "packages": list(r.packages), **(info or {}), "note": r.note})
    return rows


_TASK_IMAGE_LOCK = threading.Lock()
_TASK_IMAGES: set[str] = set()  # tags of task images known to exist on the engine


def task_image(client, dockerfile: str) -> str:
    """The tag of the image built from `dockerfile` (its text), built once per content
    hash (``codegym/task:<sha256[:16]>``) with no network and no pull: ``FROM`` must
    name a local image (e.g. ``codegym/python:3.11``; the runner needs a python3).
    Raises RuntimeError with the build log's tail when the build fails."""
    import docker.errors  # noqa: PLC0415
    tag = "codegym/task:" + hashlib.sha256(dockerfile.encode("utf-8")).hexdigest()[:16]
    if tag in _TASK_IMAGES:  # judged before: no engine round trip per judge
        return tag
    with _TASK_IMAGE_LOCK:
        try:
            client.images.get(tag)
            _TASK_IMAGES.add(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        try:
            client.images.build(fileobj=io.BytesIO(dockerfile.encode("utf-8")), tag=tag, pull=False,
                                rm=True, forcerm=True, network_mode="none",
                                labels={"codegym.task-image": "1"})
        except docker.errors.BuildError as e:
            tail = " | ".join(str(x.get("stream") or x.get("error") or "").strip()
                              for x in list(e.build_log)[-4:] if isinstance(x, dict))
            raise RuntimeError(f"docker build failed: {e.msg}" + (f" ({tail})" if tail else "")) from None
        except docker.errors.APIError as e:
            raise RuntimeError(f"docker build failed: {e.explanation or e}") from None
        _TASK_IMAGES.add(tag)
    return tag


__all__ = ["DEFAULT_IMAGES", "IMAGE_RECIPES", "RECIPES", "Recipe", "SCRIPT", "DOCKERFILES", "default_names",
           "registry_reachable", "docker_client", "image_info", "build_with_dockerfile", "build_with_script",
           "list_rows", "missing_image_message", "task_image"]
