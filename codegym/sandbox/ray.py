"""The Ray sandbox backend: executions and whole judge calls on Ray actors.

Owns `RaySandbox` (the `Sandbox` behind ``make_sandbox("ray")``, extra
``[ray]``), its actor class `SandboxWorker`, the call ledger that makes retries
exactly-once, and `create(**kw)` (the factory `make_sandbox` looks up).

    >>> sb = RaySandbox(num_actors=2)        # joins ray.init(address=...) or starts a local cluster
    >>> sb.execute("python", {"main.py": "print(6*7)"}).stdout
    '42\\n'
    >>> rep = sb.judge_remote(task, files, split="hidden")   # the whole judge on one worker
    >>> sb.close()

Shape
-----
Each actor (`SandboxWorker`, a threaded actor) owns one *inner* sandbox of
this machine -- ``codegym.sandbox.local`` by default, ``backend="docker"`` for
the docker backend -- and answers as many calls at once as that sandbox has
slots.  The driver keeps the pool of actor handles and sends every call to the
least loaded live actor.

What travels once, not per call:

- builds: the driver compiles on some actor, gets the finished build back
  (sources and compiled artifacts), `ray.put`s it once and hands out a `Build`
  whose artifacts hold that object reference.  A run ships only the build's key
  and the reference; an actor fetches the object the first time it sees the
  key and keeps it in a per-actor cache keyed by content hash.
- tasks: `judge_remote` puts each task once in the object store (keyed by
  `Task.content_hash`); actors cache the deserialised task the same way.

Back-pressure: at most ``max_in_flight`` calls (executions or judges) are
submitted at once, whatever the number of caller threads; the others wait
(a bounded semaphore in the driver), so a burst of calls never floods the
actors' queues or the object store.

Faults: every call gets a call id before its first attempt.  An attempt that
fails because its actor died (process killed, node lost) replaces that actor
with a fresh one and resubmits the *same* call to a live actor; the result
recorded for a call id is the first that arrives, and a call id completes once
(`ledger` keeps the attempts and the actors' pids, so tests can see it).  A
call is never lost: it ends with its result or, after ``max_retries`` dead
workers in a row, a ``sandbox_error`` result (judges: a ``sandbox_error``
report).  An execution that hangs is bounded by the inner sandbox's limits
(wall-clock deadline, then the fork server is killed), so an actor never
hangs on a program; ``call_timeout_s`` (off by default) additionally treats an
actor that does not answer in time as dead.

Determinism: the inner sandbox is the same code as the local backend, so the
verdicts are those of the local backend on the same work (tests/test_parity.py).
"""

from __future__ import annotations

import collections
import itertools
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

try:
    import ray
    import ray.exceptions as _rex
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the ray sandbox needs Ray: pip install 'codegym[ray]' (or pip install ray)") from e

from codegym.core.limits import Limits
from codegym.sandbox.classify import failure
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox

#: failures that mean "the worker is gone", not "the call failed": the call is retried elsewhere
_WORKER_GONE: tuple[type[BaseException], ...] = tuple(
    c for c in (getattr(_rex, "RayActorError", None), getattr(_rex, "ActorDiedError", None),
                getattr(_rex, "ActorUnavailableError", None), getattr(_rex, "WorkerCrashedError", None),
                getattr(_rex, "NodeDiedError", None), getattr(_rex, "LocalRayletDiedError", None))
    if c is not None)
#: builds / tasks an actor keeps deserialised (LRU); the object store keeps the rest
ACTOR_CACHE = 512
#: ledger entries kept (most recent)
LEDGER_MAX = 20000


# --------------------------------------------------------------------------- the actor

class _LRU:
    """A small thread-safe LRU map (per-actor build and task caches)."""

    def __init__(self, size: int):
        self.size = size
        self.data: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self.lock:
            v = self.data.get(key)
            if v is not None:
                self.data.move_to_end(key)
            return v

    def put(self, key: str, value: Any) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)


class SandboxWorker:
    """One Ray actor: an inner sandbox of its machine plus per-actor caches.

    Methods take a ``call_id`` and return ``(call_id, result)`` so the driver can
    match answers to calls; object references are passed inside a one-element
    list (a "box") so Ray does not resolve them before the actor knows whether
    its cache already holds the object.
    """

    def __init__(self, backend: str = "local", backend_kw: Mapping[str, Any] | None = None):
        from codegym.sandbox import make_sandbox
        self.backend = backend
        # an explicit instance (never the process-wide shared one) so close() is ours
        kw = dict(backend_kw or {})
        kw.setdefault("workers", 1)  # one slot per actor unless asked: the pool scales by actors
        self.sb = make_sandbox(backend, **kw)
        self.builds = _LRU(ACTOR_CACHE)
        self.tasks = _LRU(ACTOR_CACHE)
        self.lock = threading.Lock()
        self.counts: collections.Counter = collections.Counter()
        self.active = 0
        self.spans: collections.deque = collections.deque(maxlen=4096)  # (start, end) of calls

    # ----- bookkeeping

    def _enter(self, kind: str) -> float:
        with self.lock:
            self.active += 1
            self.counts[kind] += 1
            self.counts["max_active"] = max(self.counts["max_active"], self.active)
        return time.time()

    def _leave(self, t0: float) -> None:
        with self.lock:
            self.active -= 1
            self.spans.append((t0, time.time()))

    def info(self) -> dict:
        return {"pid": os.getpid(), "isolation": getattr(self.sb, "isolation", "none"),
                "workers": int(getattr(self.sb, "workers", 1) or 1),
                "node": ray.get_runtime_context().get_node_id()}

    def stats(self) -> dict:
        with self.lock:
            return {"pid": os.getpid(), "active": self.active, "counts": dict(self.counts),
                    "spans": list(self.spans)}

    # ----- caches

    def _build(self, key: str, box: list) -> Build:
        b = self.builds.get(key)
        if b is None:
            b = ray.get(box[0])  # first use of this build on this actor: one transfer
            self.builds.put(key, b)
            with self.lock:
                self.counts["build_fetches"] += 1
        return b

    def _task(self, key: str, box: list):
        t = self.tasks.get(key)
        if t is None:
            t = ray.get(box[0])
            self.tasks.put(key, t)
            with self.lock:
                self.counts["task_fetches"] += 1
        return t

    # ----- calls

    def build(self, call_id: int, language: str, files: Mapping[str, bytes],
              limits: Limits | None) -> tuple[int, Build]:
        t0 = self._enter("build")
        try:
            b = self.sb.build(language, files, limits)
            if b.ok:
                self.builds.put(b.key, b)
            return call_id, b
        finally:
            self._leave(t0)

    def run(self, call_id: int, key: str, box: list, stdin: str | bytes, limits: Limits | None,
            argv: Sequence[str], extra_files: Mapping[str, bytes] | None,
            wrapper: Sequence[str] | None, randomize_layout: bool = False) -> tuple[int, ExecResult]:
        t0 = self._enter("run")
        try:
            b = self._build(key, box)
            return call_id, self.sb.run(b, stdin=stdin, limits=limits, argv=argv,
                                        extra_files=extra_files, wrapper=wrapper,
                                        randomize_layout=randomize_layout)
        finally:
            self._leave(t0)

    def judge(self, call_id: int, task_key: str, box: list, files: Mapping[str, str | bytes],
              kw: Mapping[str, Any]) -> tuple[int, Any]:
        from codegym.judge.run import judge
        t0 = self._enter("judge")
        try:
            task = self._task(task_key, box)
            return call_id, judge(task, files, sandbox=self.sb, **kw)
        finally:
            self._leave(t0)

    def close(self) -> None:
        self.sb.close()


_RemoteWorker = ray.remote(SandboxWorker)


# --------------------------------------------------------------------------- the driver side

@dataclass
class _RayArtifacts:
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
    """Executions and judges on Ray actors; see the module docstring.

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
                ray.init(num_cpus=num_cpus or os.cpu_count() or 2, include_dashboard=False,
                         log_to_driver=False)
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
        self._task_refs: collections.OrderedDict[str, Any] = collections.OrderedDict()
        self._builds: collections.OrderedDict[str, Build] = collections.OrderedDict()
        self._build_locks: dict[str, threading.Lock] = {}
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
        h = _RemoteWorker.options(**self._actor_options).remote(self.backend, self._backend_kw)
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
            except _WORKER_GONE:
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
                except _WORKER_GONE as e:
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
        from codegym.sandbox.local import _key, _normalised
        spec, norm, bad = _normalised(language, files)
        if bad is not None:
            return bad
        key = _key(spec, norm)
        with self._lock:
            b = self._builds.get(key)
            if b is not None:
                self._builds.move_to_end(key)
                self.stats["build_cache_hits"] += 1
                return b
            lock = self._build_locks.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                b = self._builds.get(key)
                if b is not None:
                    return b
            inner = self._call("build", "build", lambda: (spec.name, norm, limits),
                               lambda why: Build(language=spec.name, key=key, ok=False, files=norm,
                                                 result=failure("sandbox_error", f"ray: {why}",
                                                                phase="compile")))
            if not inner.ok:
                b = Build(language=inner.language, key=inner.key or key, ok=False, files=norm,
                          result=inner.result)
            else:
                # the finished build goes to the object store once; actors fetch it by key
                b = Build(language=inner.language, key=inner.key, ok=True, files=norm, result=inner.result,
                          artifacts=_RayArtifacts(inner.key, ray.put(inner)))
            if b.ok or (b.result is not None and b.result.status == "compile_error"):
                with self._lock:
                    self._builds[key] = b
                    while len(self._builds) > 4096:
                        old, _ = self._builds.popitem(last=False)
                        self._build_locks.pop(old, None)
            return b

    def _remote_build(self, build: Build) -> tuple[str, Any]:
        art = build.artifacts
        if isinstance(art, _RayArtifacts) and art.ref is not None:
            return art.key, art.ref
        # a build of another sandbox (or a copy whose reference was dropped): rebuild here
        b = self.build(build.language, build.files)
        if not b.ok or not isinstance(b.artifacts, _RayArtifacts):
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

    # ----- whole judges

    def _task_ref(self, task) -> tuple[str, Any]:
        key = task.content_hash
        with self._lock:
            ref = self._task_refs.get(key)
            if ref is None:
                ref = self._task_refs[key] = ray.put(task)  # once; actors cache it by hash
                while len(self._task_refs) > 1024:
                    self._task_refs.popitem(last=False)
            else:
                self._task_refs.move_to_end(key)
            return key, ref

    def judge_remote(self, task, files: Mapping[str, str | bytes], split: str = "hidden",
                     timing: bool = False, early_exit: bool = False, language: str | None = None):
        """`codegym.judge.run.judge` run whole on one worker (its own sandbox); same arguments.

        A worker that dies meanwhile is replaced and the judge recomputed on another; the
        report returned is the one of the attempt that completed (never two).
        """
        from codegym.judge.run import JudgeReport
        key, ref = self._task_ref(task)
        kw = {"split": split, "timing": timing, "early_exit": early_exit, "language": language}

        def give_up(why: str) -> JudgeReport:
            return JudgeReport(verdict="sandbox_error", passed=0, total=0, stage="ran", progress=0.5,
                               task_id=task.id, task_hash=task.content_hash, split=split,
                               language=language or task.language,
                               message=f"ray sandbox infrastructure failure: {why}")
        return self._call("judge", "judge", lambda: (key, [ref], dict(files), kw), give_up)

    def judge_async(self, task, files: Mapping[str, str | bytes], **kw) -> Future:
        """`judge_remote` in the background; the future's result is the JudgeReport."""
        return self._pool.submit(self.judge_remote, task, files, **kw)

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
        self._task_refs.clear()
        self._builds.clear()
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()


def create(**kw) -> RaySandbox:
    """Factory used by ``make_sandbox("ray", **kw)``."""
    return RaySandbox(**kw)


__all__ = ["RaySandbox", "SandboxWorker", "CallRecord", "create"]
