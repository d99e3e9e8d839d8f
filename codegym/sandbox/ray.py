"""The Ray sandbox backend: executions, and functions that take a sandbox, on Ray actors.

Owns `RaySandbox` (the `Sandbox` behind ``make_sandbox("ray")``, extra
``[ray]``; the actors are `codegym.sandbox.ray_worker.SandboxWorker`), the call
ledger that makes retries exactly-once, `map_chunks` (one job's chunks on several
workers at once, sharing a `StopBoard` to stop early), and `create(**kw)` (the
factory `make_sandbox` looks up).  docs/sandbox.md describes the pool, what travels
once, back-pressure and faults.

    >>> from codegym.judge import judge
    >>> from codegym.tasks.suite import load_suite
    >>> sb = RaySandbox(num_actors=2)        # joins ray.init(address=...) or starts a local cluster
    >>> sb.execute("python", {"main.py": "print(6*7)"}).stdout
    '42\\n'
    >>> task = load_suite("examples").get("examples/bracket-depth")
    >>> rep = sb.remote_call(judge, task, task.solution("reference").files, split="hidden")  # on one worker
    >>> rep.verdict
    'accepted'
    >>> sb.close()
"""

from __future__ import annotations

import collections
import itertools
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

try:
    import ray
    import ray.exceptions as rex
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the ray sandbox needs Ray: pip install 'codegym[ray]' (or pip install ray)") from e

from codegym.core.limits import Limits
from codegym.sandbox.buildcache import BuildCache, build_key, normalised
from codegym.sandbox.classify import failure
from codegym.sandbox.ray_board import StopBoard, StopView
from codegym.sandbox.ray_worker import RemoteWorker, Shared
from codegym.sandbox.raycluster import init_local
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox

#: failures that mean "the worker is gone", not "the call failed": the call is retried elsewhere
WORKER_GONE: tuple[type[BaseException], ...] = tuple(
    c for c in (getattr(rex, "RayActorError", None), getattr(rex, "ActorDiedError", None),
                getattr(rex, "ActorUnavailableError", None), getattr(rex, "WorkerCrashedError", None),
                getattr(rex, "NodeDiedError", None), getattr(rex, "LocalRayletDiedError", None))
    if c is not None)
#: ledger entries kept (most recent)
LEDGER_MAX = 20000


@dataclass
class RayArtifacts:
    """Artifacts of a build made through a RaySandbox: the object holding the inner build."""

    key: str
    ref: Any  # ray.ObjectRef of the inner (local/docker) Build

    def __getstate__(self):
        # ObjectRefs pickled outside a Ray task/actor call would warn or fail; a Build
        # copied elsewhere keeps its files and is rebuilt (cache hit) where it runs
        return {"key": self.key, "ref": None}


@dataclass
class _Member:
    """One actor of the pool as the driver sees it."""

    handle: Any
    index: int
    pid: int | None = None
    inflight: int = 0
    alive: bool = True
    slots: int = 1


@dataclass
class CallRecord:
    """Ledger entry of one call: every attempt (the actors' pids), and whether it completed."""

    call_id: int
    kind: str
    attempts: int = 0
    pids: list = field(default_factory=list)
    completed: int = 0  # number of results accepted for this call id: 0 or 1
    error: str = ""


class RaySandbox(Sandbox):
    """Executions, and any function that takes a sandbox, on Ray actors; see the module docstring.

    address        Ray cluster address for ``ray.init`` (None: the running cluster, else a
                   local one with ``num_cpus`` CPUs, no dashboard)
    num_actors     actors in the pool (default: cluster CPUs / CPUs per actor)
    backend        inner sandbox of each actor: "local" (default) or "docker"
    backend_kw     keyword arguments of the inner sandbox (default ``workers=1``: one slot
                   per actor, the pool scales by actors)
    actor_options  Ray options of each actor (default ``num_cpus`` = its inner slots)
    max_in_flight  bound on calls submitted at once (default: 2 x total slots)
    max_retries    dead workers tolerated per call before it ends in sandbox_error
    call_timeout_s an attempt that takes longer counts as a dead worker (None: never)
    """

    def __init__(self, address: str | None = None, num_actors: int | None = None,
                 backend: str = "local", backend_kw: Mapping[str, Any] | None = None,
                 actor_options: Mapping[str, Any] | None = None, max_in_flight: int | None = None,
                 max_retries: int = 3, call_timeout_s: float | None = None,
                 num_cpus: int | None = None):
        self._owns_ray = False
        if not ray.is_initialized():
            if address is not None:
                ray.init(address=address, include_dashboard=False, log_to_driver=False)
            else:
                init_local(num_cpus or os.cpu_count() or 2)
            self._owns_ray = True
        self.backend = backend
        self._backend_kw = dict(backend_kw or {})
        self._backend_kw.setdefault("workers", 1)
        slots = int(self._backend_kw.get("workers", 1) or 1)
        opts = dict(actor_options or {})
        opts.setdefault("num_cpus", slots)
        # one call per inner slot runs at once, plus one for info/stats calls
        opts.setdefault("max_concurrency", slots + 1)
        opts["max_restarts"] = 0  # the driver replaces dead actors itself (and retries elsewhere)
        self._actor_options = opts
        if num_actors is None:
            cpus = float(ray.cluster_resources().get("CPU", 1))
            per = float(opts["num_cpus"]) or 1.0
            num_actors = max(1, int(cpus // per))
        self.max_retries = int(max_retries)
        self.call_timeout_s = call_timeout_s
        self._lock = threading.Condition()
        self._members: list[_Member] = []
        self._next_index = itertools.count()
        self._ids = itertools.count(1)
        self._closed = False
        self.stats: collections.Counter = collections.Counter()
        self.ledger: collections.OrderedDict[int, CallRecord] = collections.OrderedDict()
        self._shared_refs: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self._builds = BuildCache(max_builds=4096)
        for _ in range(int(num_actors)):
            self._members.append(self._spawn())
        try:
            infos = ray.get([m.handle.info.remote() for m in self._members])
        except Exception as e:
            # e.g. the inner sandbox cannot start on the workers (no Docker engine there)
            for m in self._members:
                try:
                    ray.kill(m.handle, no_restart=True)
                except Exception:
                    pass
            if self._owns_ray:
                ray.shutdown()
            raise RuntimeError(f"ray sandbox: the workers could not start their {backend} sandbox: "
                               f"{str(e)[:2000]}") from e
        for m, inf in zip(self._members, infos):
            m.pid, m.slots = inf["pid"], inf["workers"]
        self.isolation = infos[0]["isolation"]
        #: total inner slots: judges split function-kind cases by this (like the local backend)
        self.workers = sum(m.slots for m in self._members)
        self.max_in_flight = int(max_in_flight or 2 * self.workers)
        self._sem = threading.BoundedSemaphore(self.max_in_flight)
        self._in_flight = 0
        self._pool = ThreadPoolExecutor(max_workers=max(self.max_in_flight, 2),
                                        thread_name_prefix="codegym-ray")

    # ----- pool

    def _spawn(self) -> _Member:
        h = RemoteWorker.options(**self._actor_options).remote(self.backend, self._backend_kw)
        return _Member(handle=h, index=next(self._next_index),
                       slots=int(self._backend_kw.get("workers", 1) or 1))

    def _pick(self) -> _Member:
        with self._lock:
            if self._closed:
                raise RuntimeError("the sandbox is closed")
            live = [m for m in self._members if m.alive]
            # least loaded relative to its slots; ties go to the lowest index (stable)
            m = min(live, key=lambda m: (m.inflight / max(1, m.slots), m.index))
            m.inflight += 1
            return m

    def _replace(self, m: _Member, why: str) -> None:
        """Drop a dead actor and start a fresh one in its place (once per death)."""
        with self._lock:
            if not m.alive or self._closed:
                return
            m.alive = False
            self.stats["workers_replaced"] += 1
            try:
                ray.kill(m.handle, no_restart=True)
            except Exception:
                pass  # already gone
            new = self._spawn()
            self._members = [x for x in self._members if x.alive] + [new]
        try:
            new.pid = ray.get(new.handle.info.remote(), timeout=120)["pid"]
        except Exception:
            pass  # a replacement that fails to start is found dead at its first call

    def worker_pids(self) -> list[int]:
        """Pids of the live actors' processes (for tests that kill a worker)."""
        with self._lock:
            members = [m for m in self._members if m.alive]
        return [ray.get(m.handle.info.remote())["pid"] for m in members]

    def worker_stats(self) -> list[dict]:
        """Per-actor counters (calls by kind, build/task fetches) and call spans."""
        with self._lock:
            members = [m for m in self._members if m.alive]
        out = []
        for m in members:
            try:
                out.append(ray.get(m.handle.stats.remote(), timeout=60))
            except WORKER_GONE:
                pass
        return out

    # ----- calls with back-pressure, retry and ledger

    def _call(self, kind: str, method: str, args: Callable[[], tuple], on_give_up: Callable[[str], Any]) -> Any:
        """Submit one call (retrying on dead workers); the first accepted result wins."""
        call_id = next(self._ids)
        rec = CallRecord(call_id, kind)
        with self._lock:
            self.ledger[call_id] = rec
            while len(self.ledger) > LEDGER_MAX:
                self.ledger.popitem(last=False)
        self._sem.acquire()  # back-pressure: blocks while max_in_flight calls are out
        try:
            with self._lock:
                self._in_flight += 1
                self.stats["max_in_flight_seen"] = max(self.stats["max_in_flight_seen"], self._in_flight)
            last = ""
            while rec.attempts <= self.max_retries:
                m = self._pick()
                rec.attempts += 1
                rec.pids.append(m.pid)
                try:
                    ref = getattr(m.handle, method).remote(call_id, *args())
                    cid, res = ray.get(ref, timeout=self.call_timeout_s)
                except WORKER_GONE as e:
                    last = f"worker {m.pid} died: {type(e).__name__}"
                    self.stats["retries"] += 1
                    self._replace(m, last)
                    continue
                except ray.exceptions.GetTimeoutError:
                    last = f"worker {m.pid} did not answer within {self.call_timeout_s} s"
                    self.stats["retries"] += 1
                    self._replace(m, last)
                    continue
                finally:
                    with self._lock:
                        m.inflight -= 1
                with self._lock:
                    # one accepted answer per call id: an attempt that answers after its call
                    # completed (impossible with one attempt at a time, checked all the same)
                    # is dropped, never delivered twice
                    if cid != call_id or rec.completed:
                        self.stats["dropped_answers"] += 1
                        raise RuntimeError(f"ray sandbox: duplicate or foreign answer for call {call_id}")
                    rec.completed = 1
                    self.stats["calls"] += 1
                return res
            rec.error = last
            with self._lock:
                self.stats["gave_up"] += 1
            return on_give_up(last)
        finally:
            with self._lock:
                self._in_flight -= 1
            self._sem.release()

    # ----- Sandbox API

    def build(self, language: str, files: Mapping[str, str | bytes],
              limits: Limits | None = None) -> Build:
        """Compile on some actor (cached by content hash here and on every actor)."""
        spec, norm, bad = normalised(language, files)
        if bad is not None:
            return bad
        key = build_key(spec, norm)

        def make() -> Build:
            inner = self._call("build", "build", lambda: (spec.name, norm, limits),
                               lambda why: Build(language=spec.name, key=key, ok=False, files=norm,
                                                 result=failure("sandbox_error", f"ray: {why}",
                                                                phase="compile")))
            if not inner.ok:
                return Build(language=inner.language, key=inner.key or key, ok=False, files=norm,
                             result=inner.result)
            # the finished build goes to the object store once; actors fetch it by key
            return Build(language=inner.language, key=inner.key, ok=True, files=norm, result=inner.result,
                         artifacts=RayArtifacts(inner.key, ray.put(inner)))
        b, hit = self._builds.get_or_make(key, make)
        if hit:
            with self._lock:
                self.stats["build_cache_hits"] += 1
        return b

    def _remote_build(self, build: Build) -> tuple[str, Any]:
        art = build.artifacts
        if isinstance(art, RayArtifacts) and art.ref is not None:
            return art.key, art.ref
        # a build of another sandbox (or a copy whose reference was dropped): rebuild here
        b = self.build(build.language, build.files)
        if not b.ok or not isinstance(b.artifacts, RayArtifacts):
            raise ValueError("this build cannot run on the ray sandbox (rebuilding it failed)")
        return b.artifacts.key, b.artifacts.ref

    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        if not build.ok:
            assert build.result is not None
            return build.result
        try:
            key, ref = self._remote_build(build)
        except ValueError as e:
            return failure("runtime_error", str(e))
        extra = dict(extra_files) if extra_files else None
        return self._call("run", "run",
                          lambda: (key, [ref], stdin, limits, tuple(argv), extra,
                                   tuple(wrapper) if wrapper else None, bool(randomize_layout)),
                          lambda why: failure("sandbox_error", f"ray sandbox infrastructure failure: {why}"))

    def run_many(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None = None,
                 stop: Callable[[int, ExecResult], bool] | None = None) -> list[ExecResult | None]:
        """One call per request, at most `workers` at once; `stop` is honoured in the driver."""
        return self._run_many_threads(build, requests, limits, stop, self.workers, "codegym-ray-run-many")

    # ----- any function with a worker's sandbox

    def _shareable(self, arg: Any) -> Any:
        """An argument with a ``content_hash`` (a task) as a `Shared`: put in the object
        store once, cached by every actor that uses it; other arguments as they are."""
        key = getattr(arg, "content_hash", None)
        if not isinstance(key, str):
            return arg
        kind = type(arg).__name__.lower()
        with self._lock:
            ref = self._shared_refs.get(kind + key)
            if ref is None:
                ref = self._shared_refs[kind + key] = ray.put(arg)
                while len(self._shared_refs) > 1024:
                    self._shared_refs.popitem(last=False)
            else:
                self._shared_refs.move_to_end(kind + key)
        return Shared(key, kind, [ref])

    remote = True

    @property
    def closed(self) -> bool:
        return self._closed

    def remote_call(self, fn: Callable, *args: Any, on_give_up: Callable[[str], Any] | None = None,
                    **kw: Any) -> Any:
        """``fn(*args, sandbox=<a worker's own sandbox>, **kw)`` run whole on one worker,
        e.g. ``remote_call(judge, task, files, split="hidden")``.  `fn` must be importable
        where the workers run (a module-level function).  The call is counted under
        ``fn.__name__``; an argument with a ``content_hash`` travels once per worker.

        A worker that dies meanwhile is replaced and the call made again on another;
        the result returned is the one of the attempt that completed (never two).
        After ``max_retries`` dead workers, ``on_give_up(why)`` is returned (default:
        RuntimeError)."""
        call_args = [self._shareable(a) for a in args]

        def give_up(why: str) -> Any:
            if on_give_up is None:
                raise RuntimeError(f"ray sandbox infrastructure failure: {why}")
            return on_give_up(why)
        return self._call(getattr(fn, "__name__", "call"), "call", lambda: (fn, call_args, kw), give_up)

    def remote_async(self, fn: Callable, *args: Any, **kw: Any) -> Future:
        """`remote_call` in the background: a future of its result."""
        return self._pool.submit(self.remote_call, fn, *args, **kw)

    # ----- one job split in chunks over the workers

    #: a judge splits a task's cases over the workers when it has at least this many
    split_min_cases: int = 1000

    def map_chunks(self, fn: Callable, chunks: Sequence[Any], *args: Any,
                   on_give_up: Callable[[int, str], Any] | None = None, **kw: Any) -> list[Any]:
        """``fn(chunk, *args, stop=<StopView>, sandbox=<a worker's sandbox>, **kw)`` for every
        chunk, all at once, each on the least loaded worker (so on several nodes), as
        `remote_call`s (retried on dead workers). `fn` returns ``(value, info)``: the values
        come back in chunk order, each ``info`` dict goes to `chunk_log` (with the job id).
        The chunks of one job share a `StopView` to stop one another early.
        ``on_give_up(i, why)`` is chunk i's value when its workers keep dying."""
        job = next(self._ids)
        view = StopView(self._stop_board(), job)
        futures = [self.remote_async(fn, chunk, *args, stop=view,
                                     on_give_up=(lambda why, i=i: (on_give_up(i, why) if on_give_up else None,
                                                                  {"gave_up": why})), **kw)
                   for i, chunk in enumerate(chunks)]
        out = []
        log = self.__dict__.setdefault("chunk_log", collections.deque(maxlen=4096))
        try:
            for i, f in enumerate(futures):
                value, info = f.result()
                log.append({"job": job, "chunk": i, **(info or {})})
                out.append(value)
        finally:
            view.board.forget.remote(job)
        with self._lock:
            self.stats["chunk_jobs"] += 1
            self.stats["chunks"] += len(chunks)
        return out

    def _stop_board(self):
        with self._lock:
            board = self.__dict__.get("_board")
            if board is None:
                board = self._board = StopBoard.remote()
            return board

    # ----- lifetime

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            members, self._members = self._members, []
        self._pool.shutdown(wait=False, cancel_futures=True)
        for m in members:
            try:
                ray.get(m.handle.close.remote(), timeout=30)
            except Exception:
                pass  # a dead or stuck actor is killed below anyway
            try:
                ray.kill(m.handle, no_restart=True)
            except Exception:
                pass
        self._shared_refs.clear()
        self._builds.clear()
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()


def create(**kw) -> RaySandbox:
    """Factory used by ``make_sandbox("ray", **kw)``."""
    return RaySandbox(**kw)


