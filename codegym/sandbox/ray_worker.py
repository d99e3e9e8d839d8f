"""The actor side of the ray backend: one `SandboxWorker` per Ray actor.

Each worker owns one inner sandbox of its machine (local by default, or docker)
and caches, per actor, the builds and shared arguments it has fetched from the
object store, keyed by content hash.  `SandboxWorker.call` runs any function
with the worker's sandbox (``fn(*args, sandbox=..., **kw)``): the layers above
pass in what they want run, e.g. the judge.  The driver is `codegym.sandbox.ray`.
"""

from __future__ import annotations

import collections
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

try:
    import ray
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the ray sandbox needs Ray: pip install 'codegym[ray]' (or pip install ray)") from e

from codegym.core.limits import Limits
from codegym.sandbox import make_sandbox
from codegym.sandbox.types import Build, ExecResult

#: builds / shared arguments an actor keeps deserialised (LRU); the object store keeps the rest
ACTOR_CACHE = 512


class LRU:
    """A small thread-safe LRU map (per-actor build and argument caches)."""

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


@dataclass
class Shared:
    """An argument of a call that travels once per actor: its content hash, what it is
    (counted as ``<kind>_fetches``) and its object reference inside a one-element list
    (a "box": Ray then does not resolve it before the actor looks in its cache)."""

    key: str
    kind: str
    box: list


class SandboxWorker:
    """One Ray actor: an inner sandbox of its machine plus per-actor caches.

    Methods take a ``call_id`` and return ``(call_id, result)`` so the driver can
    match answers to calls.
    """

    def __init__(self, backend: str = "local", backend_kw: Mapping[str, Any] | None = None):
        self.backend = backend
        # an explicit instance (never the process-wide shared one) so close() is ours
        kw = dict(backend_kw or {})
        kw.setdefault("workers", 1)  # one slot per actor unless asked: the pool scales by actors
        self.sb = make_sandbox(backend, **kw)
        self.builds = LRU(ACTOR_CACHE)
        self.objects = LRU(ACTOR_CACHE)
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
        return {"pid": os.getpid(), "isolation": self.sb.isolation,
                "workers": int(self.sb.workers or 1),
                "node": ray.get_runtime_context().get_node_id()}

    def stats(self) -> dict:
        with self.lock:
            return {"pid": os.getpid(), "active": self.active, "counts": dict(self.counts),
                    "spans": list(self.spans)}

    # ----- caches

    def _cached(self, cache: LRU, key: str, box: list, kind: str) -> Any:
        v = cache.get(key)
        if v is None:
            v = ray.get(box[0])  # first use on this actor: one transfer
            cache.put(key, v)
            with self.lock:
                self.counts[f"{kind}_fetches"] += 1
        return v

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
            b = self._cached(self.builds, key, box, "build")
            return call_id, self.sb.run(b, stdin=stdin, limits=limits, argv=argv,
                                        extra_files=extra_files, wrapper=wrapper,
                                        randomize_layout=randomize_layout)
        finally:
            self._leave(t0)

    def call(self, call_id: int, fn: Callable, args: Sequence[Any], kw: Mapping[str, Any]) -> tuple[int, Any]:
        """``fn(*args, sandbox=<this worker's sandbox>, **kw)``; `Shared` arguments are
        taken from this actor's cache (fetched the first time)."""
        t0 = self._enter(getattr(fn, "__name__", "call"))
        try:
            args = [self._cached(self.objects, a.key, a.box, a.kind) if isinstance(a, Shared) else a
                    for a in args]
            return call_id, fn(*args, sandbox=self.sb, **kw)
        finally:
            self._leave(t0)

    def close(self) -> None:
        self.sb.close()


RemoteWorker = ray.remote(SandboxWorker)


