"""One ``docker build`` with a time bound: the client runs in a child process that is killed at the deadline.

The Docker SDK's build call streams the daemon's log for as long as the build runs; a
``RUN`` that never ends (or prints forever) holds it without bound, and its ``timeout``
only bounds the silence between two log lines. `build_image` therefore runs the SDK call
in a child process (``python -m codegym.sandbox.imagebuild``) and kills it at the deadline:
the daemon sees its client go and cancels the build, removing the build's containers
(``forcerm``). No pull (``pull=False``), no network unless the caller asks
(``network_mode="none"``: what a ``RUN`` can reach; ``network="bridge"`` is Docker's
default network, ``"host"`` the host's own, e.g. where containers have no DNS), labels
as given; a folder's context can get extra files and the build arguments (what a
networked build takes from the host: `codegym.sandbox.hostnet`). Raises
`ImageBuildError` with the tail of the build log. `codegym.sandbox.images.build_local`
and the Harbor importer build through here.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

#: the bound of a build when the caller names none
DEFAULT_BUILD_TIMEOUT_S = 1800.0
#: the bound of a pull when the caller names none
DEFAULT_PULL_TIMEOUT_S = 900.0


class ImageBuildError(RuntimeError):
    """A build that failed, timed out or could not start (the message has the log's tail)."""


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _tail(log: list[str], n: int = 4) -> str:
    lines = [ln.strip() for x in log for ln in _ANSI.sub("", x).splitlines() if ln.strip()]
    return " | ".join(lines[-n:])


def _network_mode(network: bool | str) -> str:
    """Docker's network mode of a build: False "none", True "bridge", else as named."""
    if isinstance(network, bool):
        return "bridge" if network else "none"
    return network


def build_image(tag: str, *, path: str | None = None, fileobj: Any = None, dockerfile: str | None = None,
                labels: dict[str, str] | None = None, network: bool | str = False,
                timeout_s: float = DEFAULT_BUILD_TIMEOUT_S,
                progress: Callable[[str], None] | None = None, files: dict[str, str] | None = None,
                buildargs: dict[str, str] | None = None) -> str:
    """Build `tag` from the folder `path` or the tar `fileobj` (a whole context), with no
    pull, no network unless `network` (True or "bridge": Docker's default; "host"), within
    `timeout_s` seconds; returns the image id. `files` (name in the context -> host file,
    with `path` only) are added to the folder's context; `buildargs` are passed (a
    networked build's host settings: `codegym.sandbox.hostnet.with_host_settings`)."""
    if (path is None) == (fileobj is None):
        raise ValueError("build_image needs exactly one of path= and fileobj=")
    if files and path is None:
        raise ValueError("build_image adds files= to a folder's context (path=) only")
    tmp = None
    try:
        if fileobj is not None:
            fd, tmp = tempfile.mkstemp(prefix="codegym-build-", suffix=".tar")
            with os.fdopen(fd, "wb") as f:
                while chunk := fileobj.read(1 << 20):
                    f.write(chunk)
        spec = {"tag": tag, "path": path, "tar": tmp, "dockerfile": dockerfile, "labels": labels or {},
                "network": _network_mode(network), "files": files or {},
                "buildargs": buildargs or {}}
        return _run_child(spec, timeout_s, progress)
    finally:
        if tmp:
            os.unlink(tmp)


def pull_image(ref: str, timeout_s: float = DEFAULT_PULL_TIMEOUT_S,
               progress: Callable[[str], None] | None = None) -> str:
    """``docker pull`` of `ref` (``name:tag``; ``latest`` when no tag) within `timeout_s`
    seconds; returns the image id. ImageBuildError when the registry refuses or does not answer."""
    return _run_child({"op": "pull", "tag": ref}, timeout_s, progress)


def _run_child(spec: dict, timeout_s: float, progress: Callable[[str], None] | None) -> str:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen([sys.executable, "-m", "codegym.sandbox.imagebuild"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    log: list[str] = []
    result: dict = {}
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    timer = threading.Timer(max(1.0, float(timeout_s)), kill)
    timer.start()
    t0 = time.monotonic()
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(json.dumps(spec).encode())
        proc.stdin.close()
        for raw in proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if "log" in msg:
                log.append(msg["log"])
                del log[:-200]
                if progress and msg["log"].strip():
                    progress(msg["log"].rstrip())
            else:
                result = msg
        err = proc.stderr.read().decode("utf-8", "replace")
        proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:
            kill()
            proc.wait()
    if timed_out.is_set():
        what = "docker pull" if spec.get("op") == "pull" else "docker build"
        raise ImageBuildError(f"{what} of {spec['tag']} stopped after {time.monotonic() - t0:.0f} s (its "
                              f"bound is {timeout_s:g} s); last lines: {_tail(log)}")
    what = "docker pull" if spec.get("op") == "pull" else "docker build"
    if result.get("error"):
        tail = _tail(log) if what == "docker build" else ""
        error = " ".join(str(result["error"]).split())
        raise ImageBuildError(f"{what} failed: {error}" + (f" ({tail})" if tail else ""))
    if not result.get("id"):
        raise ImageBuildError(f"{what} of {spec['tag']} ended without an image: {err.strip()[-500:]}")
    return result["id"]


def _child() -> int:
    """The child: one SDK build, its log as JSON lines, then {"id"} or {"error"}."""
    import docker  # noqa: PLC0415 -- optional dependency (codegym[docker])
    import docker.errors  # noqa: PLC0415
    spec = json.loads(sys.stdin.read())

    def say(obj: dict) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()
    try:
        client = docker.from_env(timeout=24 * 3600)
        if spec.get("op") == "pull":
            repo, tag = _split_ref(spec["tag"])
            error = None
            for chunk in client.api.pull(repo, tag=tag, stream=True, decode=True):
                if "error" in chunk:
                    error = str(chunk["error"]).strip()
                elif chunk.get("status"):
                    say({"log": f"{chunk.get('id', '')} {chunk['status']}".strip()})
            say({"error": error} if error else {"id": client.images.get(spec["tag"]).id})
            return 0
        kw: dict[str, Any] = {"tag": spec["tag"], "pull": False, "rm": True, "forcerm": True, "decode": True,
                              "labels": spec["labels"] or None}
        if spec["network"] in ("none", "host"):
            kw["network_mode"] = spec["network"]
        if spec.get("dockerfile"):
            kw["dockerfile"] = spec["dockerfile"]
        if spec.get("buildargs"):
            kw["buildargs"] = spec["buildargs"]
        f = None
        if spec.get("tar"):
            f = open(spec["tar"], "rb")  # noqa: SIM115 -- closed below
            kw.update(fileobj=f, custom_context=True)
        elif spec.get("files"):
            f, name = _context_with(spec["path"], spec.get("dockerfile"), spec["files"])
            kw.update(fileobj=f, custom_context=True, dockerfile=name)
        else:
            kw["path"] = spec["path"]
        image_id, error = None, None
        try:
            for chunk in client.api.build(**kw):
                if "stream" in chunk:
                    say({"log": chunk["stream"]})
                if "error" in chunk:
                    error = str(chunk["error"]).strip()
                aux = chunk.get("aux") or {}
                if isinstance(aux, dict) and aux.get("ID"):
                    image_id = aux["ID"]
        finally:
            if f is not None:
                f.close()
        if error is None and image_id is None:
            image_id = client.images.get(spec["tag"]).id
        say({"error": error} if error else {"id": image_id})
    except docker.errors.APIError as e:
        say({"error": str(e.explanation or e)})
    except Exception as e:  # noqa: BLE001 -- reported to the parent as the error
        say({"error": f"{type(e).__name__}: {e}"})
    return 0


def _context_with(path: str, dockerfile: str | None, files: dict[str, str]) -> tuple[Any, str]:
    """(an open temporary tar, the Dockerfile's name in it): the folder's build context as the
    SDK makes it (its .dockerignore applied, a Dockerfile outside it added), with `files`
    (name -> host file) appended."""
    from docker import utils  # noqa: PLC0415 -- optional dependency (codegym[docker])
    from docker.api.build import process_dockerfile  # noqa: PLC0415
    exclude = None
    ignore = os.path.join(path, ".dockerignore")
    if os.path.exists(ignore):
        with open(ignore) as fh:
            exclude = [ln.strip() for ln in fh.read().splitlines() if ln.strip() and not ln.strip().startswith("#")]
    df = process_dockerfile(dockerfile, path)
    f = utils.tar(path, exclude=exclude, dockerfile=df)
    with tarfile.open(fileobj=f, mode="a") as tf:
        for name, host in files.items():
            info = tf.gettarinfo(host, arcname=name)
            info.mode, info.uid, info.gid, info.uname, info.gname = 0o644, 0, 0, "root", "root"
            with open(host, "rb") as src:
                tf.addfile(info, src)
    f.seek(0)
    return f, df[0] or "Dockerfile"


def _split_ref(ref: str) -> tuple[str, str | None]:
    """(repository, tag or digest) of an image reference; ``latest`` when it names none."""
    if "@" in ref:
        repo, _, digest = ref.partition("@")
        return repo, digest
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        repo, _, tag = ref.rpartition(":")
        return repo, tag
    return ref, "latest"


if __name__ == "__main__":
    sys.exit(_child())
