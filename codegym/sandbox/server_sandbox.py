"""A sandbox whose slots are fork servers: what the local and docker backends share.

`ServerSandbox` owns builds (cached by content hash, compiled inside a slot),
runs (one request on some slot, restarted and retried by the rules below), and
`run_many` as streams of requests pipelined on each slot.  Where slots live,
how they start and how callers queue for them is the subclass's: `_take`,
`_give`, `_check_fork`, `_build_cache` (`codegym.sandbox.local.LocalSandbox`,
`codegym.sandbox.docker.DockerSandbox`).  Fault rules: a server that dies or talks
garbage under a request is restarted and the request retried on a fresh slot, up to
`fault_retries` times, then it is a `sandbox_error` -- the programs cannot signal a
guarded server (`Slot.guarded`), so its death is the infrastructure's, never a
program verdict; only an unguarded server broken twice blames the program
(runtime_error).  A request that hangs the server is a timeout (docs/sandbox.md).
"""

from __future__ import annotations

import collections
import os
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar

from codegym.core.languages import LanguageSpec
from codegym.core.limits import COMPILE_LIMITS, Limits
from codegym.sandbox.buildcache import BuildCache, BuildFiles, build_key, normalised
from codegym.sandbox.classify import failure
from codegym.sandbox.requests import compile_request, run_request_base, with_stdin
from codegym.sandbox.slots import Slot, SlotBroken, SlotHung, SlotStartError, answer_files, answer_result
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox

#: requests a slot holds at once in `run_many`: the next one waits in the pipe while
#: the current one runs, so the slot does not idle for the host's round trip
PIPELINE = 2
#: retries of a request whose server died under it (each on a fresh slot)
FAULT_RETRIES = 2


#: the slot type of a backend
S = TypeVar("S", bound=Slot)


class ServerSandbox(Sandbox, Generic[S]):
    """The shared part of the fork-server backends; see the module docstring.

    Subclasses set `workers`, `pipeline`, `isolation`, `stats` (a Counter: compiles,
    build cache hits, executions, slot restarts ...), `_lock`, `_ids` and `_root`
    (slots run as uids of their own) and implement the slot methods below.
    """

    workers: int = 1
    pipeline: int = PIPELINE
    fault_retries: int = FAULT_RETRIES
    stats: collections.Counter
    _root: bool = False
    _pid: int
    _lock: threading.Lock
    _ids: int
    _slots: list[S]
    _finalizer: weakref.finalize

    # ----- what a subclass provides

    def _take(self, disk_mb: int, phase: str) -> S:
        """A free slot (callers are served in the order they asked)."""
        raise NotImplementedError

    def _give(self, slot: S) -> None:
        raise NotImplementedError

    def _init_state(self, forked: bool = False) -> None:
        """Make the state a process of its own needs: slots, queues, locks (`forked`: in
        a child that inherited its parent's)."""
        raise NotImplementedError

    def _check_fork(self) -> None:
        """Raise when closed; in a forked child, let go of the parent's slots and start afresh."""
        if self.closed:
            raise RuntimeError("the sandbox is closed")
        if os.getpid() != self._pid:
            # a forked child must not talk to its parent's servers nor remove its store:
            # drop the inherited handles (the parent keeps its own) and start afresh
            self._finalizer.detach()
            for s in self._slots:
                s.forget()
            self._init_state(forked=True)

    def _build_cache(self) -> BuildCache:
        raise NotImplementedError

    def _missing_tools(self, spec: LanguageSpec) -> str | None:
        """Why `spec` cannot be built here (its toolchain is missing), or None."""
        return None if spec.available() else spec.missing_message()

    def _adapt(self, header: dict) -> None:
        """Adjust a request's header for where the slot runs it (every request passes
        here, streamed or not; the docker backend names the image's interpreter)."""

    @property
    def _count_nproc(self) -> bool:
        """Whether RLIMIT_NPROC counts only this slot's processes (a uid or user namespace of its own)."""
        return self.isolation == "bwrap" or self._root

    # ----- requests on slots

    def _next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def _dispatch(self, header: dict, blobs: list[bytes], limits: Limits, phase: str,
                  max_collect: int = 0, n_collect: int = 0,
                  first_attempt: int = 0) -> tuple[ExecResult, list[tuple[str, bytes, int]]]:
        """Run one request on some slot, with restart/retry; classify the answer.
        (`first_attempt=1`: a first attempt already broke its slot; this is a retry.)"""
        self._check_fork()
        last = ""
        attempts = 1 + max(0, int(self.fault_retries))
        for attempt in range(first_attempt, max(attempts, first_attempt + 1)):
            if attempt > 0:
                self._count("fault_retries")
            slot = self._take(limits.disk_mb, phase)
            try:
                try:
                    slot.ensure(limits.disk_mb, phase)
                except SlotStartError as e:
                    last = str(e)
                    self._count("slot_start_failures")
                    continue
                header["id"] = self._next_id()
                self._adapt(header)
                guarded = slot.guarded
                try:
                    hdr, out = slot.call(header, blobs, limits.wall(), limits.output_bytes,
                                         max_collect, n_collect)
                except SlotHung:
                    self._restart(slot)
                    return failure("timeout", "wall-clock limit exceeded: the sandbox supervisor "
                                   "stopped answering and was restarted", phase=phase,
                                   wall_s=limits.wall()), []
                except SlotBroken as e:
                    self._restart(slot)
                    last = str(e)
                    if not guarded and attempt >= 1:
                        return self._blamed(e, phase), []
                    self._count("infra_faults")
                    continue
                if hdr.get("dirty"):
                    slot.stop()  # could not wipe: start clean next time
                try:
                    return self._result(slot, hdr, out, limits, phase, n_collect)
                except SlotBroken as e:
                    slot.stop()
                    last = str(e)
                    # an error before the program started is the infrastructure's
                    if not guarded and attempt >= 1 and hdr.get("ran") is True:
                        return self._blamed(e, phase), []
                    self._count("infra_faults")
                    continue
            finally:
                self._give(slot)
        self._count("infra_gave_up")
        return failure("sandbox_error", f"sandbox infrastructure failure (no answer after "
                                        f"{attempts} attempt(s) on fresh slots): {last}", phase=phase), []

    def _count(self, what: str) -> None:
        with self._lock:
            self.stats[what] += 1

    def _blamed(self, e: Exception, phase: str) -> ExecResult:
        """An unguarded server (the program could signal it) broken twice by one request."""
        self._count("program_broke_server")
        return failure("runtime_error", f"the program broke the sandbox supervisor ({e})", phase=phase)

    def _result(self, slot: Slot, hdr: dict, out: list[bytes], limits: Limits, phase: str,
                n_collect: int) -> tuple[ExecResult, list[tuple[str, bytes, int]]]:
        """Validate an answer (untrusted) and classify it; SlotBroken when malformed."""
        res = answer_result(hdr, out, limits, phase, slot.shown_paths)
        with self._lock:
            self.stats["executions"] += 1
        return res, answer_files(hdr, out, n_collect)

    def _cached_build(self, cache: BuildCache, key: str, make: Callable[[], Build]) -> Build:
        b, hit = cache.get_or_make(key, make)
        if hit:
            with self._lock:
                self.stats["build_cache_hits"] += 1
        return b

    # ----- Sandbox API

    def build(self, language: str, files: Mapping[str, str | bytes],
              limits: Limits | None = None) -> Build:
        """Lay out and (for compiled languages) compile `files` inside the sandbox; cached."""
        spec, norm, bad = normalised(language, files)
        if bad is not None:
            return bad
        key = build_key(spec, norm)
        self._check_fork()
        missing = self._missing_tools(spec)
        if missing is not None:
            return Build(language=spec.name, key=key, ok=False, files=norm,
                         result=failure("sandbox_error", missing, phase="compile"))
        return self._cached_build(self._build_cache(), key,
                                  lambda: self._make_build(spec, key, norm, limits or COMPILE_LIMITS))

    def _make_build(self, spec: LanguageSpec, key: str, files: dict[str, bytes], climits: Limits) -> Build:
        layout = {rel: (data, 0o644) for rel, data in files.items()}
        if not spec.compiled:
            return Build(language=spec.name, key=key, ok=True, files=files, artifacts=BuildFiles(layout))
        with self._lock:
            self.stats["compiles"] += 1
        header, blobs, max_collect = compile_request(spec, layout, climits, self._count_nproc)
        res, collected = self._dispatch(header, blobs, climits, "compile", max_collect, len(spec.artifacts))
        got = {rel: (data, mode) for rel, data, mode in collected}
        if res.status == "ok" and not all(a in got for a in spec.artifacts):
            res.status = "compile_error"
            res.message = "the compiler did not produce " + ", ".join(a for a in spec.artifacts if a not in got)
        if res.status != "ok":
            return Build(language=spec.name, key=key, ok=False, files=files, result=res)
        for rel, (data, mode) in got.items():
            layout[rel] = (data, 0o755 if mode & 0o111 else 0o644)
        return Build(language=spec.name, key=key, ok=True, files=files, result=res,
                     artifacts=BuildFiles(layout))

    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        if not build.ok:
            assert build.result is not None
            return build.result
        self._check_fork()
        limits = limits or Limits()
        try:
            header, blobs = with_stdin(*run_request_base(build, limits, argv, extra_files, wrapper,
                                                         self._count_nproc), stdin)
        except ValueError as e:
            return failure("runtime_error", str(e))
        if randomize_layout:
            header["layout"] = "random"  # (the forked interpreter's heap and code; `Sandbox.run`)
        res, _ = self._dispatch(header, blobs, limits, "run")
        return res

    def run_many(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None = None,
                 stop: Callable[[int, ExecResult], bool] | None = None) -> list[ExecResult | None]:
        """One thread per slot, each keeping its slot for a stream of requests with
        `pipeline` of them sent ahead (see `_stream`); same contract as `Sandbox.run_many`."""
        if not build.ok or self.pipeline < 2 or len(requests) < 2:
            return self._run_many_threads(build, requests, limits, stop, self.workers)
        self._check_fork()
        return self._run_many_threads(build, requests, limits, stop, self.workers,
                                      serve=lambda claim, done: self._stream(build, requests, limits, claim, done))

    def _stream(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None,
                claim: Callable[..., int | None], done: Callable[[int, ExecResult], None]) -> None:
        """Run claimed requests on one slot, the next ones already written to its pipe
        (`RequestStream`)."""
        RequestStream(self, build, requests, limits, claim, done).run()

    def _restart(self, slot: Slot) -> None:
        slot.stop()
        with self._lock:
            self.stats["slot_restarts"] += 1

    def _stream_answer(self, slot: Slot, header: dict, limits: Limits) -> tuple[ExecResult | None, bool]:
        """(result, slot still usable) for the oldest queued request; (None, False) when
        the request must be retried as `_dispatch` retries after a broken first attempt."""
        try:
            hdr, out = slot.recv_result(header, limits.wall(), limits.output_bytes)
        except SlotHung:
            self._restart(slot)
            return failure("timeout", "wall-clock limit exceeded: the sandbox supervisor "
                           "stopped answering and was restarted", phase="run", wall_s=limits.wall()), False
        except SlotBroken:
            self._restart(slot)
            self._count("infra_faults")
            return None, False
        try:
            res = self._result(slot, hdr, out, limits, "run", 0)[0]
        except SlotBroken:
            self._restart(slot)
            self._count("infra_faults")
            return None, False
        if hdr.get("dirty"):
            self._restart(slot)  # could not wipe: start clean next time
            return res, False
        return res, True


class RequestStream:
    """One thread's requests of a `run_many`, run on one slot with the next ones
    already written to its pipe.

    The server reads a request only after answering the one before, so a queued
    request changes nothing inside the slot; it only spares the slot the host's
    round trip between two runs (the host thread may be waiting for the GIL).
    Anything unusual -- a slot that hangs, breaks or reports a dirty wipe -- ends the
    stream on that slot: the request it concerned is decided as `_dispatch` would
    decide it, and the requests queued behind it are run again through `_dispatch`
    (they never started: the server had not read them).
    """

    def __init__(self, sb: ServerSandbox, build: Build, requests: Sequence[RunRequest], limits: Limits | None,
                 claim: Callable[..., int | None], done: Callable[[int, ExecResult], None]):
        self.sb, self.build, self.requests, self.limits = sb, build, requests, limits
        self.claim, self.done = claim, done
        self.queued: collections.deque = collections.deque()  # (index, header, blobs, limits)
        self.slot: Slot | None = None
        self.nxt: tuple | None = None  # claimed, not yet sent
        # requests mostly differ by stdin only (a judge's cases): one base per distinct rest
        # (keyed by the extra files' identity: `requests` holds them for the whole call)
        self.bases: dict[tuple, tuple[dict, list[bytes]]] = {}

    def run(self) -> None:
        try:
            while True:
                self.fill()
                if not self.queued:  # (`fill` leaves a claimed request unsent only behind a queue)
                    return
                self.answer_oldest()
        finally:
            if self.slot is not None:
                if self.queued:  # an exception with requests in the pipe: their answers would be stale
                    self.sb._restart(self.slot)
                self.sb._give(self.slot)

    def plain(self, entry: tuple, first_attempt: int = 0) -> None:
        """Run one request on some slot, with `_dispatch`'s retries."""
        self.done(entry[0], self.sb._dispatch(entry[1], entry[2], entry[3], "run", first_attempt=first_attempt)[0])

    def claim_next(self, ahead: bool = False) -> bool:
        """Claim the next request into `nxt` (if none is waiting there); False: none is left
        (or, `ahead` of a queued one, none is to be queued now: `Sandbox._run_many_threads`)."""
        while self.nxt is None:
            i = self.claim(ahead=ahead)
            if i is None:
                return False
            req = self.requests[i]
            lim = req.limits or self.limits or Limits()
            try:
                bkey = (id(req.extra_files), tuple(req.argv), lim)
                base = self.bases.get(bkey)
                if base is None:
                    base = self.bases[bkey] = run_request_base(self.build, lim, req.argv, req.extra_files,
                                                               None, self.sb._count_nproc)
                header, blobs = with_stdin(*base, req.stdin)
            except ValueError as e:
                self.done(i, failure("runtime_error", str(e)))
                continue
            self.sb._adapt(header)
            self.nxt = (i, header, blobs, lim)
        return True

    def drop_slot(self, restart: bool = False) -> None:
        assert self.slot is not None
        if restart:
            self.sb._restart(self.slot)
        self.sb._give(self.slot)
        self.slot = None

    def fill(self) -> None:
        """Send claimed requests until `pipeline` of them wait on the slot."""
        sb = self.sb
        while len(self.queued) < sb.pipeline and self.claim_next(ahead=bool(self.queued)):
            nxt = self.nxt
            assert nxt is not None  # (claimed)
            lim = nxt[3]
            if self.slot is not None and not self.slot.fits(lim.disk_mb, "run"):
                if self.queued:
                    return  # the slot must restart with another size: finish what it has
                self.drop_slot()
            if self.slot is None:
                self.slot = sb._take(lim.disk_mb, "run")
                try:
                    self.slot.ensure(lim.disk_mb, "run")
                except SlotStartError:
                    self.drop_slot()
                    self.nxt = None
                    self.plain(nxt)
                    continue
            nxt[1]["id"] = sb._next_id()
            try:
                self.slot.send_request(nxt[1], nxt[2])
            except (SlotBroken, SlotHung):
                if self.queued:
                    return  # a request of the queue broke the server: its answer decides
                self.drop_slot(restart=True)
                self.nxt = None
                self.plain(nxt)
                continue
            self.queued.append(nxt)
            self.nxt = None

    def answer_oldest(self) -> None:
        """Read the answer to the oldest queued request; on trouble, end the stream on this slot."""
        assert self.slot is not None
        i, header, blobs, lim = self.queued.popleft()
        res, ok = self.sb._stream_answer(self.slot, header, lim)
        if ok:
            assert res is not None  # (an answer read whole)
            self.done(i, res)
            return
        self.drop_slot()
        rest = list(self.queued)
        self.queued.clear()
        if res is None:
            self.plain((i, header, blobs, lim), first_attempt=1)
        else:
            self.done(i, res)
        for entry in rest:
            self.plain(entry)


