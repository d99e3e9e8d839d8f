"""The Docker backend's images of built environments (`codegym.sandbox.repoenv`).

`env_image`: the system's image (a Python root's, `BuildSystem.image`) with the shared
environment copied to the same path. `instance_image`: that image with the per-instance
layer: only what the repository's install changed (new and replaced files, removals),
written over the shared environment's path, and the instance's own path a link to it --
so the scripts and metadata that name either path resolve, and the layer costs what the
install added, not another copy of the environment. Both are built locally once per key,
with no network and no pull (`codegym.sandbox.images.build_local`); the tests then run
in containers of them with no network. docs/swe.md, "Environments", says more.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
import threading

from codegym.sandbox.envbuild import EnvBuildError
from codegym.sandbox.images import build_local, docker_client
from codegym.sandbox.repoenv import InstanceEnv, PythonEnv

_LOCK = threading.Lock()
_KNOWN: set[str] = set()


def _exists(client, tag: str) -> bool:
    import docker.errors  # noqa: PLC0415 -- the [docker] extra
    if tag in _KNOWN:
        return True
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    _KNOWN.add(tag)
    return True


def _build(client, tag: str, dockerfile: str, add) -> None:
    """Build `tag` from `dockerfile` and a context filled by `add(tarfile)`; no network, no pull."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        data = dockerfile.encode()
        ti = tarfile.TarInfo("Dockerfile")
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
        add(tf)
    buf.seek(0)
    try:
        build_local(client, tag, fileobj=buf, custom_context=True, labels={"codegym.task-image": "1"})
    except RuntimeError as e:
        raise EnvBuildError(f"{tag}: {e}") from None
    _KNOWN.add(tag)


def env_image(env: PythonEnv, client=None) -> str:
    """The tag of the Docker image of `env` (``codegym/env:<key>``): its system's image with the
    environment at the same path; built once per key."""
    base = env.system.image or "codegym/python:3.11"
    # (the path is part of the image: the same key built under another environment folder is another image)
    tag = "codegym/env:" + hashlib.sha256(f"{env.key}\0{base}\0{env.path}".encode()).hexdigest()[:16]
    if tag in _KNOWN:
        return tag
    client = client or docker_client()
    with _LOCK:
        if not _exists(client, tag):
            dockerfile = (f"FROM {base}\nCOPY env/ {env.path}/\n"
                          f'LABEL codegym.env-key={env.key} codegym.env-repo="{env.spec.repo}"\n')
            _build(client, tag, dockerfile, lambda tf: tf.add(str(env.path), arcname="env"))
    return tag


def layer_changes(inst: InstanceEnv) -> tuple[list[str], list[str]]:
    """(paths of the instance that are not the shared environment's own files -- new, replaced
    or links -- , paths of the shared environment the instance no longer has), relative to
    the environment; read with lstat only (a hard link to the shared file is unchanged)."""
    base, top = str(inst.env.path), str(inst.path)
    changed: list[str] = []
    removed: list[str] = []

    def walk(rel: str) -> None:
        here, there = os.path.join(top, rel), os.path.join(base, rel)
        try:
            names = set(os.listdir(here))
        except OSError:
            return
        try:
            old = set(os.listdir(there))
        except OSError:
            old = set()
        removed.extend(os.path.join(rel, n) for n in sorted(old - names))
        for n in sorted(names):
            r = os.path.join(rel, n)
            st = os.lstat(os.path.join(top, r))
            try:
                ost = os.lstat(os.path.join(base, r))
            except OSError:
                ost = None
            if stat.S_ISDIR(st.st_mode) and (ost is None or stat.S_ISDIR(ost.st_mode)):
                if ost is None:
                    changed.append(r)
                walk(r)
            elif ost is None or (st.st_ino, st.st_dev) != (ost.st_ino, ost.st_dev) or stat.S_ISLNK(st.st_mode):
                if stat.S_ISLNK(st.st_mode) and ost is not None and stat.S_ISLNK(ost.st_mode) \
                        and os.readlink(os.path.join(top, r)) == os.readlink(os.path.join(base, r)):
                    continue
                if ost is not None and stat.S_ISDIR(ost.st_mode):
                    removed.append(r)
                changed.append(r)
    walk("")
    return changed, removed


def instance_image(inst: InstanceEnv, client=None) -> str:
    """The tag of the Docker image of `inst` (``codegym/env:<key>``): `env_image` of its shared
    environment plus what the install changed, at the shared environment's path, and the
    instance's path a link to it; built once per key."""
    tag = "codegym/env:" + hashlib.sha256(f"{inst.key}\0instance\0{inst.path}".encode()).hexdigest()[:16]
    if tag in _KNOWN:
        return tag
    client = client or docker_client()
    base = env_image(inst.env, client)
    with _LOCK:
        if _exists(client, tag):
            return tag
        changed, removed = layer_changes(inst)
        env_path, inst_path = str(inst.env.path), str(inst.path)
        listing = "".join(os.path.join(env_path, r) + "\0" for r in removed).encode()
        steps = [f"FROM {base}", "COPY removed.list /tmp/codegym-removed.list",
                 f"RUN xargs -0 -r rm -rf < /tmp/codegym-removed.list && rm /tmp/codegym-removed.list"
                 f" && mkdir -p {os.path.dirname(inst_path)} && ln -s {env_path} {inst_path}"]
        if changed:
            steps.append(f"COPY layer/ {env_path}/")
        steps.append(f"LABEL codegym.env-key={inst.key}")

        def add(tf: tarfile.TarFile) -> None:
            ti = tarfile.TarInfo("removed.list")
            ti.size = len(listing)
            tf.addfile(ti, io.BytesIO(listing))
            for r in changed:
                tf.add(os.path.join(inst_path, r), arcname=f"layer/{r}", recursive=False)
        _build(client, tag, "\n".join(steps) + "\n", add)
    return tag
