"""Records and the backend interface of the sandbox.

`ExecResult` (public) is what one execution produced, `Build` a compiled (or
merely laid-out) program that can be run many times, `RunRequest` one input of
a batch, and `Sandbox` the interface every backend (local, docker, ray)
implements. Nothing here executes anything.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from codegym.core.limits import COMPILE_LIMITS, Limits

#: every status an execution can end in
STATUSES = ("ok", "runtime_error", "timeout", "memory_limit", "output_limit",
            "compile_error", "sandbox_error")


@dataclass
class ExecResult:
    """The outcome of one execution (or of a failed build).

    status     one of STATUSES
    exit_code  the process's exit code, None if killed by a signal or never run
    signal     the signal that killed it, or None
    stdout, stderr  decoded as UTF-8 with replacement, each capped by Limits.output_bytes
    wall_s     wall-clock seconds; cpu_s child user+system CPU seconds (wait4 rusage)
    max_rss_mb peak resident set size
    message    a human-readable explanation for anything but a clean run
    phase      "compile" or "run"
    """

    status: str
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mb: float = 0.0
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    message: str = ""
    phase: str = "run"

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Build:
    """A program ready to run: sources laid out and, for compiled languages, compiled.

    key        content hash of (language spec, files): equal sources share a build
    ok         False when compilation failed; `result` then holds the compile_error
    result     the compile step's ExecResult (None for interpreted languages)
    files      the source files as given
    artifacts  backend-private handle to what running needs (e.g. a directory)
    """

    language: str
    key: str
    ok: bool
    files: Mapping[str, bytes]
    result: ExecResult | None = None
    artifacts: object = None


@dataclass
class RunRequest:
    """One run of a batch: input, arguments, extra files, and optional limits override."""

    stdin: str | bytes = ""
    argv: Sequence[str] = ()
    extra_files: Mapping[str, str | bytes] | None = None
    limits: Limits | None = None


class Sandbox(abc.ABC):
    """Interface of every execution backend.

    `isolation` names what protects the host ("bwrap", "rlimits", "docker", ...).
    """

    isolation: str = "none"

    @abc.abstractmethod
    def build(self, language: str, files: Mapping[str, str | bytes],
              limits: Limits | None = None) -> Build:
        """Lay out and compile `files`; cached by content hash."""

    @abc.abstractmethod
    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        """Run a build once. `wrapper` is an argv prefix (e.g. valgrind) for exec'd programs.

        `randomize_layout` (timed runs, `codegym.timing.measurement`): where a program's code and
        objects land in memory changes by chance from run to run, so that no build is
        favoured run after run by a layout it happens to get (programs run in a warm,
        forked interpreter inherit one; exec'd programs have the kernel's per-run
        address-space randomization already).  Backends without such a layout ignore it."""

    @abc.abstractmethod
    def run_many(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None = None,
                 stop: Callable[[int, ExecResult], bool] | None = None) -> list[ExecResult | None]:
        """Run a build on many inputs, spread over the backend's workers.

        When `stop(index, result)` returns True no further request is started;
        requests never started are None in the returned list (same order as `requests`).
        """

    def _run_many_threads(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None,
                          stop: Callable[[int, ExecResult], bool] | None, workers: int,
                          name: str = "codegym-run-many",
                          serve: Callable[[Callable[[], int | None], Callable[[int, ExecResult], None]], None]
                          | None = None) -> list[ExecResult | None]:
        """`run_many` by `workers` threads (the caller's thread is one of them): requests
        start in order, `stop` is called for every finished request (also those that
        finish after a stop), an exception in any thread is raised here.

        Each thread runs ``serve(claim, done)``: `claim()` gives the index of the next
        request to start (None: no more), `done(i, result)` records one.  The default
        serves claimed requests one at a time with `self.run`."""
        n = len(requests)
        results: list[ExecResult | None] = [None] * n
        if n == 0:
            return results
        state = {"next": 0, "stop": False, "error": None}
        lock = threading.Lock()

        def claim() -> int | None:
            with lock:
                if state["stop"] or state["next"] >= n:
                    return None
                state["next"] += 1
                return state["next"] - 1

        def done(i: int, r: ExecResult) -> None:
            with lock:
                results[i] = r
                if stop is not None:
                    try:
                        if stop(i, r):
                            state["stop"] = True
                    except BaseException as e:
                        state["stop"] = True
                        state["error"] = state["error"] or e

        def one_at_a_time(claim, done) -> None:
            while (i := claim()) is not None:
                req = requests[i]
                done(i, self.run(build, stdin=req.stdin, limits=req.limits or limits, argv=req.argv,
                                 extra_files=req.extra_files))

        def worker() -> None:
            try:
                (serve or one_at_a_time)(claim, done)
            except BaseException as e:  # surfaced in the caller's thread
                with lock:
                    state["stop"] = True
                    state["error"] = state["error"] or e

        k = min(n, max(1, workers))
        threads = [threading.Thread(target=worker, name=f"{name}-{j}", daemon=True) for j in range(k - 1)]
        for t in threads:
            t.start()
        worker()
        for t in threads:
            t.join()
        if state["error"] is not None:
            raise state["error"]
        return results

    def execute(self, language: str, files: Mapping[str, str | bytes], stdin: str | bytes = "",
                limits: Limits | None = None, argv: Sequence[str] = ()) -> ExecResult:
        """Build (cached) and run once; a failed build returns its compile_error result."""
        b = self.build(language, files)
        if not b.ok:
            assert b.result is not None
            return b.result
        return self.run(b, stdin=stdin, limits=limits, argv=argv)

    def close(self) -> None:  # noqa: B027 -- optional: a backend without workers has nothing to release
        """Release workers; idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


__all__ = ["ExecResult", "Build", "RunRequest", "Sandbox", "Limits", "COMPILE_LIMITS", "STATUSES"]
