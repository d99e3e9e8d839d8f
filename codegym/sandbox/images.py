"""The Docker images of the docker backend: which image runs which language, and how they are made.

Owns `DEFAULT_IMAGES` (language -> image of the default pool), the recipes
(`RECIPES`: name -> tags, packages, Dockerfile) and the ways of making them, all
shipped inside the package: ``dockerfile`` (``docker build`` of
``codegym/_scripts/docker/<name>.Dockerfile``, needs a registry), ``debootstrap``
(``codegym/_scripts/docker-up.sh``: starts an engine if needed and builds the same
root filesystems from the host's Debian mirror, no registry; what CI runs) and
``host`` (`build_from_host`: a local base image plus the host's own program and the
libraries it loads -- the very ``node`` the local backend runs; no registry, no
network).  Also the per-task images built from a task's Dockerfile (`task_image`).
``codegym images`` (`codegym.cli.images`) is the command line over this module.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
from dataclasses import dataclass
from pathlib import Path

from codegym.sandbox.dockerfile import DockerfileError, image_refs, missing_images, remote_sources
from codegym.sandbox.imagebuild import DEFAULT_BUILD_TIMEOUT_S, ImageBuildError, build_image

#: language -> image of the default pool (the runner needs python3 in every image)
DEFAULT_IMAGES: dict[str, str] = {
    "python": "codegym/python:3.11",
    "c": "codegym/polyglot:latest",
    "cpp": "codegym/polyglot:latest",
    "javascript": "codegym/node:latest",
}

SCRIPTS = Path(__file__).resolve().parents[1] / "_scripts"
SCRIPT = SCRIPTS / "docker-up.sh"
DOCKERFILES = SCRIPTS / "docker"
#: repository of the Python roots' images (`codegym.sandbox.roots.root_image`; tag: the version)
ROOT_IMAGE = "codegym/pyroot"
#: hosts a `docker build` FROM line pulls from (Docker Hub)
REGISTRY = ("registry-1.docker.io", 443)


@dataclass(frozen=True)
class Recipe:
    """One image: its tags (the first is the main one), apt packages, Dockerfile; `host`:
    programs the ``host`` method copies from this machine onto the local image `base`."""

    name: str
    tags: tuple[str, ...]
    packages: tuple[str, ...]
    note: str
    host: tuple[str, ...] = ()
    base: str | None = None

    @property
    def dockerfile(self) -> Path:
        return DOCKERFILES / f"{self.name}.Dockerfile"


RECIPES: dict[str, Recipe] = {
    "python": Recipe("python", ("codegym/python:3.11",), ("python3",), "Python programs"),
    "polyglot": Recipe("polyglot", ("codegym/polyglot:latest",), ("python3", "g++", "make"),
                       "C and C++ programs (python3 runs the sandbox's runner)"),
    "cpp": Recipe("cpp", ("codegym/cpp:latest", "codegym/cpp:gcc12"), ("g++", "make"),
                  "toolchain only, no python: not usable by the docker sandbox"),
    "node": Recipe("node", ("codegym/node:latest",), ("python3", "nodejs"),
                   "JavaScript programs (python3 runs the sandbox's runner)", host=("node",),
                   base="codegym/python:3.11"),
}

#: image -> the `codegym images build` recipe that makes it
IMAGE_RECIPES: dict[str, str] = {tag: r.name for r in RECIPES.values() for tag in r.tags}


def missing_image_message(image: str) -> str:
    """What to do about an image the engine does not have."""
    recipe = IMAGE_RECIPES.get(image)
    if recipe is None and image.startswith(ROOT_IMAGE + ":"):
        recipe = "py" + image.split(":", 1)[1]
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


#: libraries of the C library itself: an image brings its own (a program copied from the
#: host must not need a newer one than the image has: `build_from_host` checks it runs)
_LIBC = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so",
         "libresolv.so", "libutil.so", "libanl.so", "libmvec.so", "libnsl.so")


def host_program(name: str) -> tuple[Path, list[tuple[str, Path]]] | None:
    """The host's program `name` (resolved) and the shared libraries it loads beyond the
    C library's own, as (soname, file); None when the host does not have it."""
    exe = shutil.which(name)
    if exe is None:
        return None
    exe = os.path.realpath(exe)
    try:
        out = subprocess.run(["ldd", exe], capture_output=True, text=True, check=False, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    libs = []
    for line in out.splitlines():
        soname, arrow, rest = line.strip().partition(" => ")
        if not arrow or soname.startswith(_LIBC) or not rest.startswith("/"):
            continue
        libs.append((soname, Path(rest.split(" (")[0])))
    return Path(exe), libs


#: a builtin module a distribution's node loads from a file at run time (Debian's nodejs
#: "externalizes" cjs-module-lexer, undici, acorn: its binary names their paths)
_SHARED_BUILTIN = re.compile(rb"NODE_SHARED_BUILTIN_[A-Z0-9_]+_PATH=(/[\w./@+-]+\.js)")


def runtime_files(exe: Path, libs: list[tuple[str, Path]]) -> list[Path]:
    """Files besides its shared libraries that the host's program reads at run time and names
    in its binary (Debian's node: its externalized builtins), those that exist here."""
    found: set[Path] = set()
    for f in [exe, *(p for _, p in libs)]:
        try:
            data = f.read_bytes()
        except OSError:
            continue
        found.update(Path(m.decode()) for m in _SHARED_BUILTIN.findall(data))
    return sorted(p for p in found if p.is_file())


def host_available(recipe: Recipe) -> bool:
    """Whether the ``host`` method can make `recipe` here (its programs are on PATH)."""
    return bool(recipe.host) and all(shutil.which(p) for p in recipe.host)


def _host_context(recipe: Recipe) -> tuple[bytes, str]:
    """The build context (a tar) of `recipe` from this host, and a note of what it holds."""
    files: dict[str, tuple[bytes, int]] = {}
    steps, notes = [], []
    for prog in recipe.host:
        found = host_program(prog)
        if found is None:
            raise RuntimeError(f"the host has no {prog!r} on PATH: install it, or use --method "
                               "debootstrap / dockerfile")
        exe, libs = found
        files[f"bin/{prog}"] = (exe.read_bytes(), 0o755)
        for soname, path in libs:
            files[f"lib/{soname}"] = (path.read_bytes(), 0o644)
            target = os.path.dirname(str(path))
            target = "/usr" + target if target.startswith("/lib") else target
            # only what the image lacks: the image's own copies match its C library
            steps.append(f"{{ [ -e {target}/{soname} ] || {{ mkdir -p {target} && "
                         f"cp /tmp/codegym-host/lib/{soname} {target}/; }}; }}")
        for path in runtime_files(exe, libs):  # at the same place, where the program looks
            files[f"share{path}"] = (path.read_bytes(), 0o644)
            steps.append(f"mkdir -p {path.parent} && cp /tmp/codegym-host/share{path} {path}")
        version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=False,
                                 timeout=60).stdout.strip()
        notes.append(f"{prog} {version}".strip())
        steps.append(f"/usr/local/bin/{prog} --version")
    note = ", ".join(notes)
    files["lib/.keep"] = (b"", 0o644)
    files["share/.keep"] = (b"", 0o644)
    # (the programs straight to their place: a copy made by RUN would be a second layer)
    dockerfile = (f"FROM {recipe.base}\nCOPY bin/ /usr/local/bin/\nCOPY lib/ /tmp/codegym-host/lib/\n"
                  "COPY share/ /tmp/codegym-host/share/\n"
                  f"RUN set -e; {' && '.join(steps)}; rm -rf /tmp/codegym-host\n"
                  f'LABEL codegym.recipe="{recipe.name}" codegym.from-host="{note}"\n')
    files["Dockerfile"] = (dockerfile.encode(), 0o644)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, (data, mode) in files.items():
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode, ti.mtime = len(data), mode, 0
            tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue(), note


def build_local(client, tag: str, timeout_s: float = DEFAULT_BUILD_TIMEOUT_S, **kw):
    """``docker build`` tagged `tag` from local images only: no pull, no network, within
    `timeout_s` (`codegym.sandbox.imagebuild`; `kw`: ``fileobj`` (with ``custom_context``)
    or ``path``, ``labels``, ``dockerfile``). Raises RuntimeError with the tail of the build log."""
    kw.pop("custom_context", None)
    try:
        image_id = build_image(tag, timeout_s=timeout_s, **kw)
    except ImageBuildError as e:
        raise RuntimeError(str(e)) from None
    return client.images.get(image_id)


def build_from_host(client, recipe: Recipe, rebuild: bool, out=sys.stderr) -> None:
    """``host`` method: `recipe.base` (a local image) plus the host's programs and the
    libraries the image lacks, built with no pull and no network; the build runs each
    program once, so an image whose C library is too old for them fails here."""
    import docker.errors  # noqa: PLC0415
    if not recipe.host or recipe.base is None:
        raise RuntimeError(f"image {recipe.name!r} has no host recipe (use --method dockerfile or debootstrap)")
    if not rebuild and image_info(client, recipe.tags[0]) is not None:
        print(f"{recipe.tags[0]} exists (--rebuild to rebuild)", file=out)
        return
    if image_info(client, recipe.base) is None:
        raise RuntimeError(f"the base image {recipe.base} is missing: build it first "
                           f"(`codegym images build {IMAGE_RECIPES.get(recipe.base, 'python')}`)")
    context, note = _host_context(recipe)
    old = image_info(client, recipe.tags[0])
    print(f"docker build {recipe.base} + host's {note} -> {', '.join(recipe.tags)}", file=out)
    image = build_local(client, recipe.tags[0], fileobj=io.BytesIO(context), custom_context=True)
    for t in recipe.tags[1:]:
        image.tag(t)
    if old is not None and not image.id.split(":", 1)[-1].startswith(old["id"]):
        try:  # the image this rebuild replaced, unless something still uses it
            client.images.remove(old["id"])
        except docker.errors.APIError:
            pass


def list_rows(client) -> list[dict]:
    """One row per recipe: image, presence (None client: unknown), languages using it, packages."""
    rows = []
    for r in RECIPES.values():
        info = image_info(client, r.tags[0]) if client is not None else None
        langs = sorted(lang for lang, img in DEFAULT_IMAGES.items() if img in r.tags)
        rows.append({"name": r.name, "image": r.tags[0], "present": info is not None,
                     "languages": langs, "packages": list(r.packages), **(info or {}), "note": r.note})
    return rows


def check_dockerfile(client, text: str, where: str) -> None:
    """RuntimeError unless every image `text` names is on the engine and no ``ADD`` downloads."""
    try:
        missing = missing_images(client, image_refs(text, where))
        remote = [f"line {line}: ADD {src}" for line, src in remote_sources(text, where)]
    except DockerfileError as e:
        raise RuntimeError(str(e)) from None
    if missing:
        raise RuntimeError("; ".join(f"{where}:{r.line}: {r.how} {r.image}: {missing_image_message(r.image)}"
                                     for r in missing))
    if remote:
        raise RuntimeError(f"{where}: {'; '.join(remote)}: the daemon would download it (builds are local only)")


_TASK_IMAGE_LOCK = threading.Lock()
_TASK_IMAGES: set[str] = set()  # tags of task images known to exist on the engine


def task_image(client, dockerfile: str) -> str:
    """The tag of the image built from `dockerfile` (its text), built once per content
    hash (``codegym/task:<sha256[:16]>``) with no network and no pull: every image it
    names (``FROM``, ``COPY --from``, ``RUN --mount=from=``) must be local (e.g.
    ``codegym/python:3.11``; the runner needs a python3), checked before the build, and
    ``ADD <url>`` is refused (the daemon would download it). Raises RuntimeError naming
    the missing image, or with the build log's tail when the build fails."""
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
        check_dockerfile(client, dockerfile, "the task's Dockerfile")
        # the build context is a tar holding the Dockerfile alone (the text itself is not one:
        # the engine answered "unexpected EOF", which a cached image hid until a fresh machine)
        data = dockerfile.encode("utf-8")
        context = io.BytesIO()
        with tarfile.open(fileobj=context, mode="w") as tf:
            ti = tarfile.TarInfo("Dockerfile")
            ti.size, ti.mode = len(data), 0o644
            tf.addfile(ti, io.BytesIO(data))
        context.seek(0)
        build_local(client, tag, fileobj=context, labels={"codegym.task-image": "1"})
        _TASK_IMAGES.add(tag)
    return tag


