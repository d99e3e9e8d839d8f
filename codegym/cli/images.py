"""``codegym images``: build and list the Docker images of the docker sandbox backend.

    codegym images build [NAME ...] [--method auto|dockerfile|debootstrap] [--rebuild]
    codegym images list [--json]

Owns the recipes (`RECIPES`: name -> tags, packages, Dockerfile) and the two ways
of making them, both shipped inside the package (nothing outside it is needed):

- ``dockerfile``: ``docker build`` of ``codegym/_scripts/docker/<name>.Dockerfile``
  (``FROM debian:bookworm-slim`` + apt packages) -- for a normal machine whose
  engine can pull from a registry;
- ``debootstrap``: ``codegym/_scripts/docker-up.sh``, which also starts an engine
  when none answers and builds the same root filesystems with mmdebstrap from the
  host's Debian mirror, then ``docker import``s them -- no registry pull at all
  (Debian, root). This is what CI runs (``.ci/run``).

``auto`` (default) uses the Dockerfiles when a registry answers and the script
otherwise. Names: ``python`` (codegym/python:3.11), ``polyglot``
(codegym/polyglot:latest, python3 + g++ + make: C and C++ need a python for the
sandbox's runner), ``cpp`` (codegym/cpp:latest, no python: not usable by the
sandbox, kept for tools). Default: the images of the default pool.

This module defines ``register(subparsers)`` for `codegym.cli.main.COMMAND_MODULES`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

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


def default_names() -> list[str]:
    """The recipes of the images the default docker pool uses."""
    from codegym.sandbox.docker import DEFAULT_IMAGES, IMAGE_RECIPES
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


def _client():
    import docker
    c = docker.from_env(timeout=600)
    c.ping()
    return c


def image_info(client, tag: str) -> dict | None:
    import docker.errors
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


def cmd_build(args: argparse.Namespace) -> int:
    names = args.names or default_names()
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        print(f"codegym images: unknown image {unknown} (known: {', '.join(RECIPES)})", file=sys.stderr)
        return 2
    method = args.method
    if method == "auto":
        method = "dockerfile" if registry_reachable() else "debootstrap"
        print(f"codegym images: {'a registry answers' if method == 'dockerfile' else 'no registry answers'}"
              f"; using the {method} method", file=sys.stderr)
    if method == "debootstrap":
        return build_with_script(names, args.rebuild)
    try:
        client = _client()
    except Exception as e:  # noqa: BLE001
        print(f"codegym images: no Docker engine answers ({e}); start one, or use --method debootstrap "
              "(as root on Debian: it starts dockerd)", file=sys.stderr)
        return 1
    for n in names:
        try:
            build_with_dockerfile(client, RECIPES[n], args.rebuild)
        except Exception as e:  # noqa: BLE001 - reported per image
            print(f"codegym images: building {n} failed: {e}", file=sys.stderr)
            return 1
    return 0


def list_rows(client) -> list[dict]:
    from codegym.sandbox.docker import DEFAULT_IMAGES
    rows = []
    for r in RECIPES.values():
        info = image_info(client, r.tags[0]) if client is not None else None
        langs = sorted(lang for lang, img in DEFAULT_IMAGES.items() if img in r.tags)
        rows.append({"name": r.name, "image": r.tags[0], "present": info is not None,
                     "languages": langs, "packages": list(r.packages), **(info or {}), "note": r.note})
    return rows


def cmd_list(args: argparse.Namespace) -> int:
    try:
        client = _client()
        engine = None
    except Exception as e:  # noqa: BLE001
        client, engine = None, f"no Docker engine answers ({e})"
    rows = list_rows(client)
    if args.json:
        print(json.dumps({"engine_error": engine, "images": rows}, indent=2))
        return 0 if engine is None else 1
    if engine:
        print(f"codegym images: {engine}; presence unknown", file=sys.stderr)
    print(f"{'name':<9} {'image':<26} {'present':<8} {'id':<13} {'size':>7}  languages")
    for r in rows:
        size = f"{r['size_mb']} MB" if r.get("size_mb") is not None else "-"
        present = "?" if engine else ("yes" if r["present"] else "no")
        print(f"{r['name']:<9} {r['image']:<26} {present:<8} {r.get('id', '-'):<13} {size:>7}  "
              f"{', '.join(r['languages']) or '-'}")
    missing = [r["name"] for r in rows if not r["present"] and r["languages"]]
    if missing and not engine:
        print(f"\nmissing images of the default pool: run `codegym images build {' '.join(missing)}`",
              file=sys.stderr)
    return 0 if engine is None else 1


def register(subparsers) -> None:
    """Add the ``images`` command group."""
    p = subparsers.add_parser("images", help="build and list the docker sandbox's images",
                              description="Images of the docker sandbox backend (make_sandbox('docker')).")
    p.set_defaults(_group_parser=p)
    sub = p.add_subparsers(dest="images_command", metavar="COMMAND")
    b = sub.add_parser("build", help="build images (Dockerfile with a registry, else debootstrap)",
                       description="Build the docker sandbox's images. dockerfile: `docker build` of the "
                                   "Dockerfiles shipped in codegym/_scripts/docker (needs a registry); "
                                   "debootstrap: the shipped docker-up.sh, which starts an engine if needed "
                                   "and builds the same images from the host's Debian mirror without any "
                                   "registry (root, Debian). Existing images are kept unless --rebuild.")
    b.add_argument("names", nargs="*", metavar="NAME",
                   help=f"images to build: {', '.join(RECIPES)} (default: those of the default pool)")
    b.add_argument("--method", choices=("auto", "dockerfile", "debootstrap"), default="auto",
                   help="dockerfile: docker build FROM debian:bookworm-slim; debootstrap: the shipped "
                        "docker-up.sh (root, Debian, no registry); auto: dockerfile if a registry answers")
    b.add_argument("--rebuild", action="store_true", help="rebuild images that exist")
    b.set_defaults(func=cmd_build)
    ls = sub.add_parser("list", help="the images, whether present, and which languages use them")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)


__all__ = ["RECIPES", "Recipe", "register", "registry_reachable", "default_names", "SCRIPT", "DOCKERFILES"]
