"""The build cache: one compile per content hash, shared by every backend.

Owns the key of a build (`build_key`: the language's fingerprint and the files),
the files as a build holds them (`normalised`, `norm_files`), what a fork-server
backend keeps of a build to run it (`BuildFiles`) and the cache itself
(`BuildCache`: least recently used first out, bounded by count and bytes, one
compile at a time per key).  The local backend shares one cache per process and
isolation mode (`shared_cache`); the docker and ray backends hold one each.
Builds that failed for the infrastructure (sandbox_error) are never cached.
"""

from __future__ import annotations

import collections
import hashlib
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from codegym.core.languages import LanguageSpec, get_language
from codegym.sandbox.classify import failure
from codegym.sandbox.forkserver.protocol import safe_rel
from codegym.sandbox.types import Build

#: builds kept before the least recently used are dropped (a dropped Build object
#: still runs: it carries its files)
MAX_BUILDS = 2048
MAX_BUILD_BYTES = 256 << 20


@dataclass
class BuildFiles:
    """`Build.artifacts` of a fork-server backend: every file a run lays out (sources and
    compiler output) with its mode, kept in memory and sent with each request; the
    docker backend also notes the image and task scope it built in."""

    files: dict[str, tuple[bytes, int]]
    image: str = ""
    scope: str | None = None


def norm_files(files: Mapping[str, str | bytes]) -> dict[str, bytes]:
    """`files` as bytes; ValueError for a path that is absolute or has '..'."""
    out: dict[str, bytes] = {}
    for k, v in files.items():
        try:
            safe_rel(k)
        except ValueError:
            raise ValueError(f"invalid file path {k!r}: paths must be relative, without '..'") from None
        out[k] = v.encode() if isinstance(v, str) else bytes(v)
    return out


def normalised(language: str, files: Mapping[str, str | bytes]) -> tuple[LanguageSpec, dict[str, bytes], Build | None]:
    """The language, the files as bytes, and -- when a file name or content is unusable --
    the compile_error build every backend's `build` returns for it."""
    spec = get_language(language)
    try:
        return spec, norm_files(files), None
    except ValueError as e:
        return spec, {}, Build(language=spec.name, key="", ok=False, files={},
                               result=failure("compile_error", str(e), phase="compile"))


def build_key(spec: LanguageSpec, files: Mapping[str, bytes]) -> str:
    """The content hash that names a build."""
    h = hashlib.sha256(spec.fingerprint().encode())
    for k in sorted(files):
        h.update(b"\0F" + k.encode() + b"\0" + len(files[k]).to_bytes(8, "big") + files[k])
    return h.hexdigest()[:32]


def build_size(b: Build) -> int:
    """Bytes a build holds (sources, plus compiler output for `BuildFiles`)."""
    n = sum(len(v) for v in b.files.values())
    if isinstance(b.artifacts, BuildFiles):
        n += sum(len(d) for rel, (d, _) in b.artifacts.files.items() if rel not in b.files)
    return n


def cacheable(b: Build) -> bool:
    """Whether a build may be kept: not when the infrastructure failed making it."""
    return b.ok or b.result is None or b.result.status != "sandbox_error"


class BuildCache:
    """Builds by key, least recently used first out; `get_or_make` compiles a key once
    even when many threads ask for it at the same time."""

    def __init__(self, max_builds: int = MAX_BUILDS, max_bytes: int = MAX_BUILD_BYTES):
        self.max_builds, self.max_bytes = max_builds, max_bytes
        self.lock = threading.Lock()
        self.cache: collections.OrderedDict[str, Build] = collections.OrderedDict()
        self.locks: dict[str, threading.Lock] = {}
        self.bytes = 0

    def _hit(self, key: str) -> Build | None:
        b = self.cache.get(key)
        if b is not None:
            self.cache.move_to_end(key)
        return b

    def get_or_make(self, key: str, make: Callable[[], Build]) -> tuple[Build, bool]:
        """(the build of `key`, whether it came from the cache); `make()` builds it."""
        with self.lock:
            b = self._hit(key)
            if b is not None:
                return b, True
            lock = self.locks.setdefault(key, threading.Lock())
        with lock:
            with self.lock:
                b = self._hit(key)
                if b is not None:
                    return b, True
            b = make()
            with self.lock:
                if not cacheable(b):
                    self.locks.pop(key, None)
                    return b, False
                self.cache[key] = b
                self.bytes += build_size(b)
                while len(self.cache) > 1 and (len(self.cache) > self.max_builds or self.bytes > self.max_bytes):
                    old, ob = self.cache.popitem(last=False)
                    self.bytes -= build_size(ob)
                    self.locks.pop(old, None)
            return b, False

    def clear(self) -> None:
        with self.lock:
            self.cache.clear()
            self.locks.clear()
            self.bytes = 0


_SHARED: dict[tuple, BuildCache] = {}
_SHARED_PID = os.getpid()
_SHARED_LOCK = threading.Lock()


def shared_cache(kind: tuple) -> BuildCache:
    """The process-wide cache of the sandboxes that compile the same way (`kind`, e.g.
    (sandbox class, isolation)): one compile per content hash even when every env of
    a rollout has its own sandbox."""
    global _SHARED, _SHARED_PID, _SHARED_LOCK
    if _SHARED_PID != os.getpid():  # a forked child starts afresh (locks may be held)
        _SHARED, _SHARED_PID, _SHARED_LOCK = {}, os.getpid(), threading.Lock()
    with _SHARED_LOCK:
        cache = _SHARED.get(kind)
        if cache is None:
            cache = _SHARED[kind] = BuildCache()
        return cache


