"""Resource limits for one program execution.

`Limits` is the one record of what a run may use; the sandbox enforces it, a
task's YAML `limits:` section is validated into it (codegym.tasks.schema) and the judge
passes it down. Frozen so it can be hashed into cache keys.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class Limits:
    """What one execution may use.

    time_s       CPU seconds (RLIMIT_CPU, and the verdict `timeout` when exceeded)
    wall_s       wall-clock seconds; None means ``wall_factor * time_s + 1``
    memory_mb    memory in MiB: total resident memory of the program's processes (sampled
                 by the supervisor every 5 ms), plus RLIMIT_AS for Python and JavaScript so
                 they fail cleanly; exceeding it is `memory_limit`. The address space the
                 run's threads reserve (8 MiB stacks, malloc arenas) is added to RLIMIT_AS;
                 the stack rlimit is the memory (up to 1 GiB) for C, C++ and an in-process
                 Python run's main thread, a shell's 8 MiB for runtimes started by exec
    output_bytes cap on each of stdout and stderr; exceeding it is `output_limit`
    processes    processes/threads the program may create besides itself
    file_size_mb largest file the program may write (RLIMIT_FSIZE)
    open_files   descriptors (RLIMIT_NOFILE)
    disk_mb      size of each private scratch space (the run dir and /tmp, separately)
    """

    time_s: float = 2.0
    wall_s: float | None = None
    memory_mb: int = 512
    output_bytes: int = 8 << 20
    processes: int = 32
    file_size_mb: int = 64
    open_files: int = 128
    disk_mb: int = 256
    wall_factor: float = 3.0

    def wall(self) -> float:
        """Effective wall-clock limit in seconds."""
        return self.wall_s if self.wall_s is not None else self.wall_factor * self.time_s + 1.0

    def replace(self, **changes) -> Limits:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)


#: limits for compilers: generous, compilers are trusted but the source is not
COMPILE_LIMITS = Limits(time_s=30.0, wall_s=60.0, memory_mb=2048, output_bytes=1 << 20,
                        processes=64, file_size_mb=256, open_files=256, disk_mb=512)
