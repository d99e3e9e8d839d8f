"""The Docker sandbox backend: a pool of long-lived containers, each running the fork server.

Owns `DockerSandbox` (behind ``make_sandbox("docker")``; this module's
`create(**kw)`), its pool of container slots (`codegym.sandbox.containers`)
and the per-task views (`DockerSandbox.for_task`: containers never shared
between tasks).  Needs the ``docker`` SDK (extra ``codegym[docker]``) and an
engine (``DOCKER_HOST`` or the default socket); ``codegym images build`` makes
the default images (`codegym.sandbox.images`).  Requests, retries and verdicts
are the local backend's (`codegym.sandbox.server_sandbox`); docs/sandbox.md
describes the pool and the isolation.

    >>> from codegym.judge import judge
    >>> from codegym.sandbox import make_sandbox
    >>> from codegym.tasks.suite import load_suite
    >>> sb = make_sandbox("docker")                       # shared instance, default images
    >>> sb.execute("python", {"main.py": "print(6 * 7)"}).stdout
    '42\\n'
    >>> task = load_suite("examples").get("examples/bracket-depth")
    >>> with sb.for_task(task.id) as tsb:                 # containers of this task only
    ...     judge(task, task.solution("reference").files, sandbox=tsb, split="hidden").verdict
    'accepted'
"""

from __future__ import annotations

import collections
import dataclasses
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

try:  # the SDK (an absolute import: this module itself is codegym.sandbox.docker)
    import docker
    import docker.errors
except ImportError:  # reported by DockerSandbox(): make_sandbox("docker") explains the fix
    docker = None

from codegym.core.languages import get_language, python_path
from codegym.core.limits import COMPILE_LIMITS, Limits
from codegym.sandbox.buildcache import BuildCache, BuildFiles, build_key, normalised
from codegym.sandbox.classify import failure
from codegym.sandbox.containers import (
    LABEL_INSTANCE,
    ContainerSlot,
    Want,
    listen_at,
    remove_container,
    stale_containers,
)
from codegym.sandbox.forkserver.source import server_source
from codegym.sandbox.images import DEFAULT_IMAGES, missing_image_message, task_image
from codegym.sandbox.isolation import instance_dir, proc_start, rmtree
from codegym.sandbox.roots import PythonRoot, root_image, sandbox_root
from codegym.sandbox.server_sandbox import PIPELINE, ServerSandbox
from codegym.sandbox.slots import SlotStartError
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox

#: interpreter of the runner inside the images
CONTAINER_PYTHON = "/usr/bin/python3"
#: the languages a Python root's image runs (it holds python3, gcc and g++)
ROOT_LANGUAGES = ("python", "c", "cpp")


class DockerUnavailable(RuntimeError):
    """No Docker engine answers (or the SDK is not usable)."""


class _PoolState:
    def __init__(self) -> None:
        self.closed = False


def connect(timeout: float, pool: int):
    """A client of the engine (DockerUnavailable when none answers)."""
    if docker is None:
        raise DockerUnavailable("the docker sandbox needs the docker SDK: pip install 'codegym[docker]' "
                                "(or pip install docker)")
    try:
        client = docker.from_env(timeout=int(timeout), max_pool_size=pool)
        # no idle keep-alive connections: API calls are rare (container lifecycle only),
        # and a pool of idle sockets would look like a descriptor leak to callers
        client.api.headers["Connection"] = "close"
        client.ping()
        return client
    except Exception as e:  # noqa: BLE001 - every failure here means "no engine"
        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        raise DockerUnavailable(
            f"the docker sandbox needs a Docker engine, and none answers at {where} ({e}). Start one "
            "(e.g. `sudo dockerd`, or `codegym images build`, which can start it on Debian), set "
            "DOCKER_HOST, or use make_sandbox('local').") from None


class DockerSandbox(ServerSandbox[ContainerSlot]):
    """Fork servers in a pool of long-lived containers; see the module docstring.

    workers              executions at once (default: CPU count)
    max_containers       warm containers kept (default: 2 * workers); the least recently
                         used idle one is replaced when a request needs another key
    images               language -> image, over DEFAULT_IMAGES
    image                one image for every language (a task's own image)
    max_runs             executions before a container is replaced (default 10000; a start
                         costs ~0.3 s, on the path of the request that finds the container
                         retired: at 500, 8-18 % of the stdio judge workload's time)
    cpus                 CPU quota of each container (default 1.0)
    container_memory_mb  smallest memory cap of a container (default 1024); a request
                         gets at least Limits.memory_mb * 1.25 + 256 MiB
    pids_limit           cgroup pids cap of a container (default 512; per-run process
                         limits are RLIMIT_NPROC under the container's own uid)
    python               interpreter of the runner inside the images, or a Python version
                         ("3.9") or `PythonRoot`: Python, C and C++ then run in that version's
                         root image (`codegym.sandbox.roots.root_image`: the local backend's root,
                         ``docker import``ed once); a version without a root falls back to the
                         nearest (`python_note` says so) unless
    strict               is true (RootError)
    client               a docker.DockerClient (default: docker.from_env())
    cgroup_parent        where the containers' cgroups go: "auto" (default) puts each at
                         the top of the hierarchy with the engine's cgroupfs driver, so that
                         a container competes for the CPU like one host process -- as a
                         local slot does -- not all of them together like one (docker's
                         own parent group); None: the engine's default; or a path
    transport            how the host talks to a container's runner: "socket" (default) a
                         unix socket of this host bind-mounted into the container, the
                         engine out of the way (requests pipelined as on local slots); an
                         engine that refuses the bind mount (it does not see this host's
                         files) switches the sandbox to "attach": the container's attach
                         socket, every frame through the engine
    """

    def __init__(self, workers: int | None = None, images: Mapping[str, str] | None = None,
                 image: str | None = None, max_runs: int = 10000, cpus: float = 1.0,
                 container_memory_mb: int = 1024, pids_limit: int = 512,
                 python: str | PythonRoot = CONTAINER_PYTHON, client=None, api_timeout_s: float = 120.0,
                 max_containers: int | None = None, strict: bool = False, cgroup_parent: str | None = "auto",
                 transport: str = "socket"):
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        if transport not in ("socket", "attach"):
            raise ValueError(f"transport must be 'socket' or 'attach', not {transport!r}")
        self.transport = transport
        # over the attach socket one request at a time per container (run_many's threads
        # call run): a request written ahead there made run_many slower, not faster (100
        # runs on 2 workers: 480 ms with one queued request, 300 ms without)
        self.pipeline = PIPELINE if transport == "socket" else 1
        self.max_containers = max(self.workers, int(max_containers or 2 * self.workers))
        self.isolation = "docker"
        # each container has its own uid, as root-mode local slots do: RLIMIT_NPROC applies
        self._root = True
        #: the Python root whose image runs Python, C and C++ (None: the default images), and why
        #: it is not the version asked for
        self.root, self.python_note = sandbox_root(python, strict)
        self._python = self.root.python if self.root is not None else str(python)
        self.images = {**DEFAULT_IMAGES, **{get_language(k).name: v for k, v in (images or {}).items()}}
        self.image = image
        self.max_runs = max(1, int(max_runs))
        self.cpus = float(cpus)
        self.container_memory_mb = int(container_memory_mb)
        self.pids_limit = int(pids_limit)
        self._api_timeout = api_timeout_s
        self._given_client = client
        self._cgroup_parent_arg = cgroup_parent
        self.stats: collections.Counter = collections.Counter()
        self._pool = _PoolState()
        self._init_state()
        if self.root is not None:  # (after the engine answered: the image is imported once)
            tag = root_image(self.root.version, client)
            given = {get_language(k).name for k in images or {}}
            self.images.update({lang: tag for lang in ROOT_LANGUAGES if lang not in given})

    # ----- state (re-created in a forked child)

    @property
    def closed(self) -> bool:
        return self._pool.closed

    def _init_state(self, forked: bool = False) -> None:
        if forked:
            self._given_client = None  # (the parent's connections are the parent's)
        self._pid = os.getpid()
        self._client = self._given_client or connect(self._api_timeout, self.workers + 4)
        self.cgroup_parent = self._resolve_cgroup_parent(self._cgroup_parent_arg)
        self._owner = f"{self._pid}-{proc_start(self._pid)}"
        self._instance = uuid.uuid4().hex
        self._reaper = ThreadPoolExecutor(max_workers=2, thread_name_prefix="codegym-docker-reaper")
        self._slots: list[ContainerSlot] = []   # grows up to max_containers
        self._free: list[ContainerSlot] = []
        self._running = 0
        self._tickets = 0     # next ticket of the FIFO queue of _take
        self._serving = 0     # ticket allowed to take a slot now
        self._cond = threading.Condition()
        self._builds = BuildCache()
        self._lock = threading.Lock()
        self._ids = 0
        self._tl = threading.local()
        self._dirs: list[str] = []
        self._image_ids: dict[str, str | None] = {}
        self._dir: str | None = None  # the runner file and the listening sockets (transport "socket")
        self._sweep_dead_owners()
        self._finalizer = weakref.finalize(self, _cleanup, self._slots, self._reaper, self._client,
                                           self._instance, self._dirs)

    def _resolve_cgroup_parent(self, arg: str | None) -> str | None:
        """The cgroup parent of the containers ("auto": see the class docstring).

        With the cgroupfs driver every container sits under the engine's one `docker`
        group, which the kernel weighs like a single host process: under host load, all
        containers together get one process's share of the CPU (a run waited 3-4x its
        local wall time here). At the top of the hierarchy each container is weighed
        like one host process, as each local slot is. Memory, pids and CPU limits are
        the container's own cgroup's, wherever it sits."""
        if arg != "auto":
            return arg
        try:
            info = self._client.info()
        except Exception:  # noqa: BLE001 -- unknown engine: its default
            return None
        return "/" if info.get("CgroupDriver") == "cgroupfs" else None

    def _sweep_dead_owners(self) -> None:
        """Remove containers left by codegym processes of this host that died unclosed
        (``codegym images prune`` does the same from the command line)."""
        try:
            stale = stale_containers(self._client)
        except docker.errors.DockerException:
            return
        for c in stale:
            self._reaper.submit(remove_container, self._client, c["Id"], None)

    # ----- the runner's socket (transport "socket")

    def _host_dir(self) -> str:
        with self._lock:
            if self._dir is None:
                self._dir = instance_dir()  # (a dead process's is removed by the next instance)
                os.chmod(self._dir, 0o700)  # (containers see only the files mounted into them)
                self._dirs.append(self._dir)
                path = os.path.join(self._dir, "forkserver.py")
                with open(path, "wb") as f:
                    f.write(server_source())
                os.chmod(path, 0o644)
            return self._dir

    def _runner_file(self) -> str:
        """The host file mounted read-only into each container as its runner."""
        return os.path.join(self._host_dir(), "forkserver.py")

    def fall_back_to_attach(self) -> None:
        """Frames over the containers' attach sockets from now on (the engine cannot mount
        this host's files, or no socket can be made here), one request at a time."""
        self.transport = "attach"
        self.pipeline = 1

    def _listener(self, uid: int):
        """(listening socket, its host path) for the next container's runner (of `uid`)."""
        path = os.path.join(self._host_dir(), f"s{uuid.uuid4().hex[:16]}")
        return listen_at(path, uid), path

    # ----- images

    def image_for(self, language: str) -> str | None:
        """The image a program of `language` runs in (None: no image configured)."""
        if self.image:
            return self.image
        return self.images.get(get_language(language).name)

    def _image_id(self, image: str) -> str | None:
        with self._lock:
            if image in self._image_ids and self._image_ids[image] is not None:
                return self._image_ids[image]
        try:
            iid = self._client.api.inspect_image(image)["Id"]
        except docker.errors.ImageNotFound:
            iid = None
        except docker.errors.DockerException as e:
            raise SlotStartError(f"cannot inspect image {image}: {e}") from None
        with self._lock:
            self._image_ids[image] = iid
        return iid

    # ----- per-request routing (what _take/ensure read)

    def _want(self) -> Want:
        w = getattr(self._tl, "want", None)
        if w is None:
            raise RuntimeError("internal: no container key for this request")
        return w

    # ----- slots

    def _take(self, disk_mb: int, phase: str) -> ContainerSlot:
        want = self._want()
        with self._cond:
            # first come, first served (a ticket queue): with many more callers than
            # workers, a plain condition lets a thread that just gave a slot back take
            # it again at once while others starve (a p99 latency of seconds)
            ticket = self._tickets
            self._tickets += 1
            while True:
                if self.closed:
                    raise RuntimeError("the sandbox is closed")
                if ticket == self._serving and self._running < self.workers:
                    slot = self._pick(disk_mb, phase, want)
                    if slot is not None:
                        self._running += 1
                        self._serving += 1
                        self._cond.notify_all()
                        return slot
                self._cond.wait()

    def _pick(self, disk_mb: int, phase: str, want: Want) -> ContainerSlot | None:
        free = self._free
        for i in range(len(free) - 1, -1, -1):  # most recently used first
            if free[i].fits(disk_mb, phase, want):
                return free.pop(i)
        if len(self._slots) < self.max_containers:
            slot = ContainerSlot(self, len(self._slots))
            self._slots.append(slot)
            return slot
        for i in range(len(free)):  # a dead slot costs no removal
            if not free[i].alive:
                return free.pop(i)
        for i in range(len(free)):  # same key, other shape
            w = free[i].want
            if w is not None and (w.image, w.scope) == (want.image, want.scope):
                return free.pop(i)
        if free:
            return free.pop(0)  # least recently used: its container is replaced
        return None

    def _give(self, slot: ContainerSlot) -> None:
        if slot.alive and slot.runs >= self.max_runs:
            slot.stop()  # recycled: the next request starts a fresh container
            with self._lock:
                self.stats["recycled"] += 1
        with self._cond:
            self._running -= 1
            self._free.append(slot)
            self._cond.notify_all()  # waiters differ in what they can take

    def _adapt(self, header: dict) -> None:
        if "exec" in header:  # {python} placeholders name the host's interpreter
            header["exec"] = [self._python if a == python_path() else a for a in header["exec"]]

    def _key_of(self, build: Build) -> tuple[str | None, str | None]:
        """(image, scope) of the containers that run `build`."""
        art = build.artifacts
        if isinstance(art, BuildFiles) and art.image:
            return art.image, art.scope
        # a build of another backend (same layout type): default image, no scope
        return self.image_for(build.language), None

    def _build_cache(self) -> BuildCache:
        return self._builds

    def containers(self) -> list[str]:
        """Ids of the containers this sandbox holds now."""
        return [s.container_id for s in self._slots if s.container_id]

    def release_scope(self, scope: str | None) -> None:
        """Remove the idle containers of one task (they can serve no one else)."""
        with self._cond:
            for s in self._free:
                if s.want is not None and s.want.scope == scope:
                    s.stop()

    # ----- Sandbox API

    def build(self, language: str, files: Mapping[str, str | bytes],
              limits: Limits | None = None, *, scope: str | None = None,
              image: str | None = None) -> Build:
        """Lay out and (for compiled languages) compile `files` in a container; cached
        by content hash of (language, files, image id, scope)."""
        spec, norm, bad = normalised(language, files)
        if bad is not None:
            return bad
        self._check_fork()
        img = image or self.image_for(spec.name)
        if img is None:
            return Build(language=spec.name, key="", ok=False, files=norm, result=failure(
                "sandbox_error", f"no docker image is configured for language {spec.name!r}: pass "
                f"images={{{spec.name!r}: '<image with {spec.name} and python3>'}}", phase="compile"))
        try:
            iid = self._image_id(img)
        except SlotStartError as e:
            return Build(language=spec.name, key="", ok=False, files=norm,
                         result=failure("sandbox_error", str(e), phase="compile"))
        if iid is None:
            return Build(language=spec.name, key="", ok=False, files=norm,
                         result=failure("sandbox_error", missing_image_message(img), phase="compile"))
        key = build_key(spec, {**norm, "\0image": iid.encode(), "\0scope": (scope or "").encode()})
        climits = limits or COMPILE_LIMITS

        def make() -> Build:
            self._tl.want = Want(img, scope, climits.memory_mb)
            try:
                b = self._make_build(spec, key, norm, climits)
            finally:
                self._tl.want = None
            if isinstance(b.artifacts, BuildFiles):
                b.artifacts = BuildFiles(b.artifacts.files, image=img, scope=scope)
            return b
        return self._cached_build(self._builds, key, make)

    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        limits = limits or Limits()
        img, scope = self._key_of(build)
        if img is None and build.ok:  # (a failed build's runs return its result)
            return failure("sandbox_error", f"no docker image is configured for {build.language!r}")
        self._tl.want = Want(img, scope, limits.memory_mb) if img is not None else None
        try:
            return super().run(build, stdin=stdin, limits=limits, argv=argv, extra_files=extra_files,
                               wrapper=wrapper, randomize_layout=randomize_layout)
        finally:
            self._tl.want = None

    def run_many(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None = None,
                 stop: Callable[[int, ExecResult], bool] | None = None) -> list[ExecResult | None]:
        if build.ok and self._key_of(build)[0] is None:  # (each run says why)
            return self._run_many_threads(build, requests, limits, stop, self.workers)
        return super().run_many(build, requests, limits=limits, stop=stop)

    def _stream(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None,
                claim: Callable[..., int | None], done: Callable[[int, ExecResult], None]) -> None:
        img, scope = self._key_of(build)
        assert img is not None  # (run_many)
        base = limits or Limits()

        def keyed_claim(ahead: bool = False) -> int | None:
            # the stream takes and fits its slot for the request it claimed last
            i = claim(ahead=ahead)
            if i is not None:
                self._tl.want = Want(img, scope, (requests[i].limits or base).memory_mb)
            return i
        prev = getattr(self._tl, "want", None)
        try:
            super()._stream(build, requests, limits, keyed_claim, done)
        finally:
            self._tl.want = prev

    def _dispatch(self, header: dict, blobs: list[bytes], limits: Limits, phase: str, max_collect: int = 0,
                  n_collect: int = 0, first_attempt: int = 0) -> tuple[ExecResult, list[tuple[str, bytes, int]]]:
        # the container's memory follows the limits of the request dispatched (a stream's
        # retry may run an older request than the one it claimed last)
        w = getattr(self._tl, "want", None)
        if w is not None and w.memory_mb != limits.memory_mb:
            self._tl.want = dataclasses.replace(w, memory_mb=limits.memory_mb)
        try:
            return super()._dispatch(header, blobs, limits, phase, max_collect, n_collect, first_attempt)
        finally:
            self._tl.want = w

    task_images = True

    def image_from_dockerfile(self, dockerfile: str) -> str:
        """The tag of the image built from `dockerfile` (`codegym.sandbox.images.task_image`)."""
        return task_image(self._client, dockerfile)

    def for_task(self, task_id: str, image: str | None = None) -> DockerTaskSandbox:
        """A view whose containers serve only `task_id` (and run `image`, if given)."""
        return DockerTaskSandbox(self, task_id, image)

    def close(self) -> None:
        """Remove every container of this sandbox (waits for the removals)."""
        with self._cond:
            if self._pool.closed:
                return
            self._pool.closed = True
            self._cond.notify_all()
        if os.getpid() == self._pid:
            self._finalizer()
        else:
            self._finalizer.detach()


class DockerTaskSandbox(Sandbox):
    """The sandbox of one task: builds (and so runs) in containers keyed by the task.

    Shares the parent's pool and build cache; `close()` removes this task's idle
    containers and leaves the parent open.
    """

    isolation = "docker"

    def __init__(self, parent: DockerSandbox, scope: str, image: str | None = None):
        self.parent, self.scope, self.image = parent, scope, image

    def build(self, language: str, files: Mapping[str, str | bytes], limits: Limits | None = None) -> Build:
        return self.parent.build(language, files, limits, scope=self.scope, image=self.image)

    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        return self.parent.run(build, stdin=stdin, limits=limits, argv=argv, extra_files=extra_files,
                               wrapper=wrapper, randomize_layout=randomize_layout)

    def run_many(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None = None,
                 stop: Callable[[int, ExecResult], bool] | None = None) -> list[ExecResult | None]:
        return self.parent.run_many(build, requests, limits=limits, stop=stop)

    @property
    def closed(self) -> bool:
        return self.parent.closed

    def close(self) -> None:
        if not self.parent.closed:
            self.parent.release_scope(self.scope)


def _cleanup(slots: list[ContainerSlot], reaper: ThreadPoolExecutor, client, instance: str,
             dirs: list[str]) -> None:
    for s in slots:
        s.stop()
    reaper.shutdown(wait=True)
    for d in dirs:
        rmtree(d)
    # anything of ours the slots lost track of (a start interrupted mid-way), until none is
    # listed: on a loaded engine a removal can time out or still be in progress when listed
    end = time.monotonic() + 60
    while True:
        try:
            left = client.api.containers(all=True, filters={"label": [f"{LABEL_INSTANCE}={instance}"]})
        except docker.errors.DockerException:
            break
        if not left or time.monotonic() > end:
            break
        for c in left:
            remove_container(client, c["Id"], None)
        time.sleep(0.2)
    try:
        client.close()
    except Exception:  # noqa: BLE001
        pass


def create(**kw) -> DockerSandbox:
    """`make_sandbox("docker", **kw)`: see `DockerSandbox` for the keywords."""
    return DockerSandbox(**kw)


