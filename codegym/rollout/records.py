"""Rollout records: `Step`, `Trajectory`, workspace state hashes and their JSONL files.

A `Trajectory` is one episode as plain data: the task, its GRPO group and index in
it, one `Step` per turn (observation, action, token ids as sampled, reward, diff,
diff units, judge report). `to_dict`/`from_dict` are lossless; `append_jsonl` writes
one whole line with one ``write`` and an fsync, so an interrupted writer leaves at
most one truncated last line, which `read_jsonl` drops and `repair_jsonl` cuts off.

    >>> t = Trajectory(task_id="examples/x", task_hash="ab", group_id="g", sample_index=0,
    ...                env_id=None, agent="oracle", seed=1, steps=[])
    >>> Trajectory.from_json(t.to_json()) == t
    True
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def jsonable(obj: Any) -> Any:
    """`obj` as plain JSON values (dicts, lists, str, numbers, bool, None).

    Objects with ``to_dict()`` are converted with it, numpy scalars/arrays with
    ``tolist()``/``item()``, anything else with ``repr``; tuples become lists, so a
    record built from this compares equal to the one read back from JSON."""
    def default(o: Any) -> Any:
        for attr in ("to_dict", "tolist", "item"):
            f = getattr(o, attr, None)
            if callable(f):
                return f()
        if isinstance(o, (set, frozenset)):
            return sorted(o, key=repr)
        if isinstance(o, bytes):
            return o.decode("utf-8", errors="replace")
        return repr(o)
    return json.loads(json.dumps(obj, default=default, ensure_ascii=False))


def state_hash(files: Mapping[str, Any] | None) -> str:
    """sha256 hex of the canonical JSON of a workspace (``{path: text}``).

    Canonical: keys sorted, no whitespace, UTF-8; bytes contents are hashed as
    ``{"bytes": hex}`` so they never collide with a text file of the same
    characters. Two steps with the same value start from the same code (anchor states)."""
    canon = {str(k): (v if isinstance(v, str) else {"bytes": bytes(v).hex()}
                      if isinstance(v, (bytes, bytearray)) else v)
             for k, v in (files or {}).items()}
    text = json.dumps(canon, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _split_known(cls: type, data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
    known = {k: v for k, v in data.items() if k in names}
    extra = {k: v for k, v in data.items() if k not in names}
    return known, extra


@dataclass
class Step:
    """One turn: what the agent saw, what it answered, and what the env made of it."""

    index: int                       # 0-based turn
    observation: str                 # text the agent saw before acting
    action: str                      # response text (what env.step received)
    reward: float
    prompt_ids: list[int] | None = None
    response_ids: list[int] | None = None   # as sampled, never re-tokenised
    logprobs: list[float] | None = None
    messages: list[dict] | None = None      # chat messages sent for this turn
    diff: str = ""
    diff_units: list[dict] = field(default_factory=list)  # env's units, spans into `action`
    error: str | None = None
    judge: dict | None = None
    reward_components: dict | None = None
    pre_state: str = ""              # state_hash of the workspace before this step
    terminated: bool = False
    truncated: bool = False
    info: dict = field(default_factory=dict)   # other JSON-able info of the step
    extra: dict = field(default_factory=dict)  # unknown keys read from a newer writer

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Step:
        known, extra = _split_known(cls, data)
        return cls(**known, extra=extra)


@dataclass
class Trajectory:
    """One episode; `episode_key` (``group_id/sample_index``) identifies it in a collection."""

    task_id: str
    task_hash: str
    group_id: str        # same task + same start state + same seed group -> one GRPO group
    sample_index: int    # 0..G-1 within the group
    env_id: str | None
    agent: str
    seed: int | None
    steps: list[Step] = field(default_factory=list)
    final_reward: float = 0.0        # reward of the last step
    total_reward: float = 0.0        # sum of step rewards
    reward_components: dict = field(default_factory=dict)   # of the last step
    verdict: str | None = None       # final judge verdict (None: never judged)
    metadata: dict = field(default_factory=dict)            # language, timings, final diff ...
    extra: dict = field(default_factory=dict)               # unknown keys read from a newer writer

    @property
    def episode_key(self) -> str:
        """Unique key of the episode in a collection (what resuming skips on)."""
        return f"{self.group_id}/{self.sample_index}"

    @property
    def num_turns(self) -> int:
        return len(self.steps)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            v = getattr(self, f.name)
            d[f.name] = [s.to_dict() for s in v] if f.name == "steps" else v
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trajectory:
        known, extra = _split_known(cls, data)
        known["steps"] = [s if isinstance(s, Step) else Step.from_dict(s) for s in known.get("steps", [])]
        return cls(**known, extra=extra)

    def to_json(self) -> str:
        """One line of JSON (no newline inside: strings escape theirs)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Trajectory:
        return cls.from_dict(json.loads(text))


# --------------------------------------------------------------------------- JSONL


def repair_jsonl(path: str | Path) -> int:
    """Cut a truncated last line (a write interrupted before its newline) off `path`.

    A last line that is whole JSON and only lacks its newline gets one. Returns the
    number of bytes removed (0 when the file is whole or absent)."""
    p = Path(path)
    if not p.exists():
        return 0
    size = p.stat().st_size
    if size == 0:
        return 0
    with p.open("rb") as fh:
        # find the last newline without reading a large file whole
        pos = size
        block = 1 << 16
        last_nl = -1
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                last_nl = start + i
                break
            pos = start
    keep = last_nl + 1
    if keep == size:
        return 0
    with p.open("rb") as fh:
        fh.seek(keep)
        tail = fh.read()
    try:  # a whole record that only lacks its newline (written by another tool) is kept
        json.loads(tail.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        os.truncate(p, keep)
        return size - keep
    with p.open("ab") as fh:
        fh.write(b"\n")
    return 0


def read_jsonl(path: str | Path, strict: bool = False) -> list[Trajectory]:
    """Trajectories of a JSONL file, in file order.

    A last line without its newline that is not valid JSON is an interrupted write:
    it is dropped with a warning (`strict=True` raises instead). Any other bad line
    raises ``ValueError("<file>:<line>: ...")``."""
    p = Path(path)
    data = p.read_bytes()
    lines = data.split(b"\n")
    out: list[Trajectory] = []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        last_unterminated = n == len(lines)  # split leaves "" after a final newline
        try:
            out.append(Trajectory.from_dict(json.loads(raw.decode("utf-8"))))
        except (ValueError, UnicodeDecodeError, TypeError) as e:
            if last_unterminated and not strict:
                warnings.warn(f"{p}:{n}: dropping a truncated last line ({len(raw)} bytes): {e}",
                              stacklevel=2)
                continue
            raise ValueError(f"{p}:{n}: not a trajectory record: {e}") from None
    return out


def append_jsonl(path_or_fd: str | Path | int, trajectory: Trajectory, fsync: bool = True) -> None:
    """Append one trajectory as one line: a single ``write`` of the whole line, then fsync.

    `path_or_fd` is a path, or a file descriptor opened with ``O_APPEND`` (cheaper when
    appending many). A crash leaves either the whole line or a truncated tail that
    `repair_jsonl`/`read_jsonl` remove."""
    line = (trajectory.to_json() + "\n").encode("utf-8")
    own = not isinstance(path_or_fd, int)
    if isinstance(path_or_fd, int):
        fd = path_or_fd
    else:
        fd = os.open(os.fspath(path_or_fd), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(line)
        while view:  # a regular-file write is whole in practice; loop for the rare short write
            written = os.write(fd, view)
            view = view[written:]
        if fsync:
            os.fsync(fd)
    finally:
        if own:
            os.close(fd)


def write_jsonl(path: str | Path, trajectories: Iterable[Trajectory], append: bool = False) -> int:
    """Write trajectories, one per line (replacing the file unless `append`); returns the count.

    A replaced file is written to a temporary name and renamed, so readers never see
    half of it."""
    p = Path(path)
    if append:
        n = 0
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            for t in trajectories:
                append_jsonl(fd, t, fsync=False)
                n += 1
            os.fsync(fd)
        finally:
            os.close(fd)
        return n
    tmp = p.with_name(p.name + f".tmp{os.getpid()}")
    n = 0
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        for t in trajectories:
            fh.write(t.to_json() + "\n")
            n += 1
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, p)
    return n
