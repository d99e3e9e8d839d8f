"""The stop board of `RaySandbox.map_chunks`: how the chunks of one job stop one another.

`StopBoard` is a zero-CPU Ray actor holding, per job, the lowest index at which a chunk
stopped; `StopView` is what one chunk holds of it (picklable, shipped with the chunk):
`report(index)`, `lowest()` (read without blocking), `wait_lowest()`, `where()`.
docs/sandbox.md (one task's cases on several nodes) describes the protocol.
"""

from __future__ import annotations

import os
from typing import Any

try:
    import ray
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("the ray sandbox needs Ray: pip install 'codegym[ray]' (or pip install ray)") from e


@ray.remote(num_cpus=0)
class StopBoard:
    """Per job, the lowest index at which a chunk of `RaySandbox.map_chunks` stopped (an
    actor with no CPU: it only holds a few integers)."""

    def __init__(self):
        self.low: dict[int, int] = {}

    def report(self, job: int, index: int) -> None:
        if job not in self.low or index < self.low[job]:
            self.low[job] = index

    def get(self, job: int) -> int | None:
        return self.low.get(job)

    def forget(self, job: int) -> None:
        self.low.pop(job, None)


class StopView:
    """What one chunk of a `RaySandbox.map_chunks` job sees of the others (picklable):
    `report(index)` says it stopped at `index`; `lowest()` is the lowest index any chunk
    reported, read without blocking (the answer of the last poll, a new poll sent when it
    came back); `where()` names the node and process it runs on."""

    def __init__(self, board: Any, job: int):
        self.board, self.job = board, job
        self._pending: Any = None
        self._low: int | None = None

    def __getstate__(self):
        return {"board": self.board, "job": self.job, "_pending": None, "_low": None}

    def report(self, index: int) -> None:
        if self._low is None or index < self._low:
            self._low = index
        self.board.report.remote(self.job, int(index))

    def lowest(self) -> int | None:
        if self._pending is None:
            self._pending = self.board.get.remote(self.job)
        ready, _ = ray.wait([self._pending], timeout=0)
        if ready:
            low = ray.get(ready[0])
            if low is not None and (self._low is None or low < self._low):
                self._low = low
            self._pending = self.board.get.remote(self.job)
        return self._low

    def wait_lowest(self) -> int | None:
        """`lowest()` after a poll that is answered (blocking; once per chunk, at its start)."""
        low = ray.get(self.board.get.remote(self.job))
        if low is not None and (self._low is None or low < self._low):
            self._low = low
        return self._low

    @staticmethod
    def where() -> dict:
        return {"node": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}
