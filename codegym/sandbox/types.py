"""Records and the backend interface of the sandbox.

`ExecResult` (public) is what one execution produced, `Build` a compiled (or
merely laid-out) program that can be run many times, `RunRequest` one input of
a batch, and `Sandbox` the interface every backend (local, docker, ray)
implements, with the abilities some backends add declared here with their defaults
(so callers ask ``sandbox.remote``, never ``hasattr(sandbox, ...)``; tests/architecture
checks). Nothing here executes anything.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codegym.core.limits import Limits

if TYPE_CHECKING:
    from codegym.sandbox.roots import PythonRoot

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

    What a backend can do is declared here, with the default of a backend that cannot:

    isolation        what protects the host ("bwrap", "rlimits", "docker", ...)
    workers          how many programs it runs at once
    root             the Python root filesystem every run sees (`codegym.sandbox.roots`);
                     None: the host's, or the container image's
    task_images      True when a task may bring a container image of its own
                     (`image_from_dockerfile`, and `for_task` runs it): the docker backend
    remote           True when calls run whole on remote workers, each with a sandbox of
                     its own (`remote_call`, `remote_async`): the ray backend
    split_min_cases  from this many cases a judge splits a stdio task over the workers
                     (`map_chunks`); None: never
    closed           True once `close()` ran (a closed sandbox runs nothing)
    """

    isolation: str = "none"
    workers: int = 1
    root: PythonRoot | None = None
    task_images: bool = False
    remote: bool = False
    split_min_cases: int | None = None

    @property
    def closed(self) -> bool:
        return False

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
                          serve: Callable[[Callable[..., int | None], Callable[[int, ExecResult], None]], None]
                          | None = None) -> list[ExecResult | None]:
        """`run_many` by `workers` threads (the caller's thread is one of them): requests
        start in order, `stop` is called for every finished request (also those that
        finish after a stop), an exception in any thread is raised here.

        Each thread runs ``serve(claim, done)``: `claim()` gives the index of the next
        request to start (None: no more), `done(i, result)` records one;
        ``claim(ahead=True)`` claims one to queue behind a request the thread still runs,
        granted only while at least one request per thread is left unclaimed (None: not
        now) -- the last few requests go to threads that are free, not into one queue
        while another thread idles.  The default serves claimed requests one at a time
        with `self.run`."""
        n = len(requests)
        results: list[ExecResult | None] = [None] * n
        if n == 0:
            return results
        state: dict[str, Any] = {"next": 0, "stop": False, "error": None}
        lock = threading.Lock()
        k = min(n, max(1, workers))

        def claim(ahead: bool = False) -> int | None:
            with lock:
                if state["stop"] or state["next"] >= n or (ahead and n - state["next"] < k):
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

    # ----- abilities some backends add (the defaults of a backend without them)

    def for_task(self, task_id: str, image: str | None = None) -> Sandbox:
        """The sandbox that runs `task_id`'s programs (in `image`, where `task_images`):
        a view of this one; a backend without per-task containers is its own view."""
        return self

    def image_from_dockerfile(self, dockerfile: str) -> str:
        """The tag of the image built from `dockerfile` (where `task_images`)."""
        raise NotImplementedError(f"the {type(self).__name__} backend builds no container images")

    def remote_call(self, fn: Callable[..., Any], *args: Any,
                    on_give_up: Callable[[str], Any] | None = None, **kw: Any) -> Any:
        """``fn(*args, sandbox=<the sandbox of the worker>, **kw)``: on a remote worker where
        `remote` (`on_give_up(why)` is returned when the workers keep dying); here, with
        this sandbox."""
        return fn(*args, sandbox=self, **kw)

    def remote_async(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Future:
        """`remote_call` in the background: a future of its result (here: done already)."""
        f: Future = Future()
        try:
            f.set_result(self.remote_call(fn, *args, **kw))
        except Exception as e:  # noqa: BLE001 -- the future carries it, as a remote one would
            f.set_exception(e)
        return f

    def map_chunks(self, fn: Callable[..., Any], chunks: Sequence[Any], *args: Any,
                   on_give_up: Callable[[int, str], Any] | None = None, **kw: Any) -> list[Any]:
        """``fn(chunk, *args, stop=<a stop view>, sandbox=<a worker's sandbox>, **kw)`` for
        every chunk on the workers (where `split_min_cases` is not None)."""
        raise NotImplementedError(f"the {type(self).__name__} backend does not split jobs in chunks")

    def close(self) -> None:  # noqa: B027 -- optional: a backend without workers has nothing to release
        """Release workers; idempotent."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


