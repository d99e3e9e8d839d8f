"""From raw facts about a finished process to an `ExecResult` verdict.

Owns the rules that turn what a supervisor observed (exit status, signal,
CPU and wall time, peak RSS, why it killed the process, captured bytes) into
one of the statuses of `codegym.sandbox.types.STATUSES`. Pure functions, no
I/O, shared by every backend so that a verdict means the same everywhere.

Order of the rules (first match wins):

1. killed for output over the cap        -> output_limit
2. killed at the wall-clock deadline      -> timeout
   killed for total resident memory        -> memory_limit
3. SIGXCPU, or CPU over the limit          -> timeout
4. exec failed (ENOMEM)                    -> memory_limit; other exec failures -> sandbox_error
5. exit code 0                             -> ok
6. out-of-memory marks in stderr, or peak RSS at >= 90 % of the limit -> memory_limit
7. anything else (non-zero exit, signal)  -> runtime_error
"""

from __future__ import annotations

import signal as _signal
from dataclasses import dataclass

from codegym.core.limits import Limits
from codegym.sandbox.types import ExecResult

#: stderr fragments that mean the program hit its memory limit
MEMORY_MARKS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory",
                "Out of memory", "OutOfMemoryError", "JavaScript heap out of memory",
                "failed to map segment from shared object", "Allocation failed",
                "memory allocation failed", "mmap failed")


@dataclass
class RawOutcome:
    """What a supervisor saw; every field is already validated by the backend."""

    exit_code: int | None
    signal: int | None
    cpu_s: float
    wall_s: float
    maxrss_kb: int
    killed: str | None = None          # None | "wall" | "output" | "memory"
    out_trunc: bool = False
    err_trunc: bool = False
    exec_error: str | None = None


def signal_name(sig: int) -> str:
    try:
        return _signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def classify(raw: RawOutcome, stdout: bytes, stderr: bytes, limits: Limits,
             phase: str = "run") -> ExecResult:
    """The verdict for one run (phase "run") or one compiler invocation (phase "compile")."""
    r = ExecResult(status="ok", exit_code=raw.exit_code, signal=raw.signal,
                   stdout=decode(stdout), stderr=decode(stderr), wall_s=raw.wall_s,
                   cpu_s=raw.cpu_s, max_rss_mb=raw.maxrss_kb / 1024.0,
                   stdout_truncated=raw.out_trunc, stderr_truncated=raw.err_trunc, phase=phase)
    status, msg = _verdict(raw, stderr, limits)
    r.status, r.message = status, msg
    if phase == "compile" and status != "ok":
        return compile_failure(r)
    return r


def _verdict(raw: RawOutcome, stderr: bytes, limits: Limits) -> tuple[str, str]:
    if raw.killed == "output":
        which = "stdout" if raw.out_trunc else "stderr"
        return "output_limit", f"output limit exceeded: more than {limits.output_bytes} bytes on {which}"
    if raw.killed == "wall":
        return "timeout", f"wall-clock limit exceeded ({limits.wall():g} s)"
    if raw.killed == "memory":
        return "memory_limit", (f"memory limit exceeded: the program's processes held more than "
                                f"{limits.memory_mb} MiB resident")
    if raw.signal == _signal.SIGXCPU or raw.cpu_s > limits.time_s:
        return "timeout", f"CPU time limit exceeded ({limits.time_s:g} s)"
    if raw.exec_error:
        if "Cannot allocate memory" in raw.exec_error or "Errno 12]" in raw.exec_error:
            return "memory_limit", f"memory limit exceeded ({limits.memory_mb} MiB): {raw.exec_error}"
        return "sandbox_error", raw.exec_error
    if raw.signal is None and raw.exit_code == 0:
        return "ok", ""
    tail = stderr[-8192:].decode("utf-8", "replace")
    near = raw.maxrss_kb >= 0.9 * limits.memory_mb * 1024
    if near or any(m in tail for m in MEMORY_MARKS):
        return "memory_limit", f"memory limit exceeded ({limits.memory_mb} MiB)"
    if raw.signal is not None:
        return "runtime_error", f"killed by {signal_name(raw.signal)} ({raw.signal})"
    return "runtime_error", f"exit code {raw.exit_code}"


def compile_failure(r: ExecResult) -> ExecResult:
    """Turn a failed compiler run into the compile_error verdict (sandbox_error stays)."""
    if r.status == "sandbox_error":
        return r
    why = {"timeout": "the compiler exceeded its time limit",
           "memory_limit": "the compiler exceeded its memory limit",
           "output_limit": "the compiler produced too much output"}.get(r.status)
    if why is None:
        why = f"compilation failed ({r.message})" if r.message else "compilation failed"
    r.status = "compile_error"
    r.message = why
    r.phase = "compile"
    return r


def failure(status: str, message: str, phase: str = "run", **kw) -> ExecResult:
    """A result for a run that produced no process facts (sandbox_error, supervisor killed ...)."""
    return ExecResult(status=status, message=message, phase=phase, **kw)


