"""Local stand-ins for the base images of Harbor tasks, made without a registry from Debian's packages.

Offline, an image a task names that is not on the engine can sometimes be replaced by
the nearest equivalent this machine can make from its Debian mirror
(`codegym.sandbox.roots`: a Debian bullseye / bookworm / trixie root with its Python
3.9 / 3.11 / 3.13, imported into Docker as ``codegym/pyroot:<version>``):

- ``debian:<suite>[-slim]`` (``bullseye`` / ``bookworm`` / ``trixie``, or ``11`` / ``12`` /
  ``13`` with a point release): that suite's root. It is a superset of the slim image
  (python3, venv, pip, headers, build-essential, git, ca-certificates besides Debian's
  minimal base); a point release (``debian:12.7``) gets the suite's current packages.
- ``python:3.X[-slim][-<suite>]``: the root of the Debian suite whose ``python3`` is
  nearest to 3.X (`choose_python`: 3.10 -> 3.11, 3.12 -> 3.13; a tie goes to the newer),
  as ``codegym/harbor-base:python3.X``: Debian's interpreter at ``/usr/bin/python3``
  (python.org's build at ``/usr/local/bin`` in the original), with ``python`` / ``pip``
  commands and pip's guard against installing into the system off
  (``PIP_BREAK_SYSTEM_PACKAGES=1``: the official images let ``pip install`` write there),
  plus the root's build tools and git. The suite of the tag (``-bullseye``) gives way to
  the version when they disagree, and the note says so.

Everything else -- Ubuntu (not on Debian's mirror), Alpine (musl and apk), Windows
images, other languages' images (``golang``, ``node``, ``rust``), ``latest`` / ``stable``
names that pin no release -- has no stand-in: `stand_in` returns None and the import
says why. Every stand-in's note says what differs; the import report prints it.
"""

from __future__ import annotations

import io
import re
import tarfile
from typing import Any

from codegym.importers.harbor_env import StandIn
from codegym.sandbox.imagebuild import build_image
from codegym.sandbox.images import image_info
from codegym.sandbox.roots import PYTHON_SUITES, RootError, choose_python, root_image

#: Debian release numbers -> suites with a root here
SUITE_NUMBERS = {"11": "bullseye", "12": "bookworm", "13": "trixie"}
#: the tag of a Python stand-in (the version is the one requested)
PYTHON_IMAGE = "codegym/harbor-base"
_VERSION_OF_SUITE = {suite: version for version, suite in PYTHON_SUITES.items()}


def _split(image: str) -> tuple[str, str]:
    """(repository without the Docker Hub prefix, tag) of an image reference."""
    name = image.split("@", 1)[0]
    repo, _, tag = name.rpartition(":") if ":" in name.rsplit("/", 1)[-1] else (name, "", "latest")
    for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/library/", "library/"):
        if repo.startswith(prefix):
            repo = repo[len(prefix):]
    return repo, tag or "latest"


def _root_tag(version: str):
    def make(client: Any) -> str:
        return root_image(version, client)
    return make


def _debian(image: str, tag: str) -> StandIn | None:
    m = re.fullmatch(r"(bullseye|bookworm|trixie|11|12|13)(?:\.\d+)*(?:-slim)?(?:-\d{8})?", tag)
    if not m:
        return None
    suite = SUITE_NUMBERS.get(m.group(1), m.group(1))
    version = _VERSION_OF_SUITE[suite]
    point = " (a point release: the suite's current packages)" if re.match(r"\d+\.\d", tag) else ""
    note = (f"{image} is not available: stands in codegym/pyroot:{version}, a Debian {suite} root made from the "
            f"Debian mirror{point}; besides the slim image it holds python3 {version}, venv, pip, headers, "
            "build-essential, git and ca-certificates")
    return StandIn(f"codegym/pyroot:{version}", _root_tag(version), note)


def _python_image(version: str, base: str) -> Any:
    tag = f"{PYTHON_IMAGE}:python{version}"

    def make(client: Any) -> str:
        root = root_image(base, client)
        dockerfile = (f"FROM {root}\n"
                      "ENV PIP_BREAK_SYSTEM_PACKAGES=1 LANG=C.UTF-8\n"
                      "RUN set -e; for p in python pip; do [ -e /usr/local/bin/$p ] || [ -e /usr/bin/$p ] || "
                      "ln -s /usr/bin/${p}3 /usr/local/bin/$p; done; python --version; pip --version\n"
                      f'LABEL codegym.harbor="base" codegym.base-of="python:{version}" codegym.root="{root}"\n')
        # rebuilt whenever the root image changed (its id is in the build cache key of FROM)
        info = image_info(client, tag)
        parent = (client.images.get(tag).attrs.get("Config") or {}).get("Labels", {}) if info else {}
        if info is None or parent.get("codegym.root") != root:
            build_image(tag, fileobj=_context(dockerfile), timeout_s=600, labels={"codegym.harbor": "base"})
        return tag
    return tag, make


def _context(dockerfile: str) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        data = dockerfile.encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def _python(image: str, tag: str) -> StandIn | None:
    m = re.fullmatch(r"(3)\.(\d{1,2})(\.\d+)?((?:-[a-z0-9]+)*)", tag)
    if not m:
        return None
    variants = [v for v in m.group(4).split("-") if v]
    if any(v.startswith(("alpine", "windowsservercore", "nanoserver")) for v in variants):
        return None
    if any(v not in ("slim", "bullseye", "bookworm", "trixie") for v in variants):
        return None
    requested = f"3.{m.group(2)}"
    try:
        version, why = choose_python(requested)
    except RootError:
        return None
    suite = PYTHON_SUITES[version]
    named = next((v for v in variants if v in _VERSION_OF_SUITE), None)
    tag_name, make = _python_image(requested, version)
    parts = [f"{image} is not available: stands in {tag_name}, made from a Debian {suite} root: Debian's python3 "
             f"{version} at /usr/bin/python3 (python.org's {requested}{m.group(3) or ''} at /usr/local/bin in the "
             "original)"]
    if why:
        parts.append(f"Python {requested} is in no Debian suite here, {version} is the nearest")
    if named and named != suite:
        parts.append(f"the tag names Debian {named}, whose Python is not {version}: {suite} is used")
    parts.append("`python` / `pip` commands and pip installs into the system allowed (PIP_BREAK_SYSTEM_PACKAGES=1), "
                 "as in the official image; build-essential and git besides")
    return StandIn(tag_name, make, "; ".join(parts))


def stand_in(image: str) -> StandIn | None:
    """The local stand-in for `image`, or None when none can be made here (module docstring)."""
    repo, tag = _split(image)
    if repo == "debian":
        return _debian(image, tag)
    if repo == "python":
        return _python(image, tag)
    return None
