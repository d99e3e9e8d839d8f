"""What every importer shares: reading its source, naming tasks, reporting the import.

`read_records(path)` (the records of a ``.jsonl`` / ``.json`` file, optionally
gzipped) and `select_records` (by id, the first N), `task_name` (a source id made a
task name: ``HumanEval/0`` -> ``HumanEval_0``), `ImportReport` (what an import wrote,
skipped and noticed) and `write_import` (the suite folder written, the report
completed). Values are `codegym.importers.values`', YAML `codegym.importers.yamlout`'s.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.core.jsonl import json_lines
from codegym.importers.yamlout import write_suite

__all__ = ["read_records", "select_records", "task_name", "ImportReport", "ImportError_", "write_import",
           "write_suite"]


class ImportError_(ValueError):  # noqa: N801 -- ImportError is a builtin with another meaning
    """A source file that cannot be imported (unreadable, wrong schema)."""


def read_records(path: str | os.PathLike) -> list[dict]:
    """Records of a JSON-lines or JSON file, optionally gzip-compressed.

    A JSON file may hold a list of records, or a mapping whose values are records
    (as EvalPlus caches do); blank lines of a JSON-lines file are skipped.
    """
    p = Path(path)
    if not p.is_file():
        raise ImportError_(f"{p}: no such file")
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ImportError_(f"{p}: not UTF-8 text: {e}") from None
    stripped = text.lstrip()
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    if name.endswith(".json") or (stripped.startswith("[") and not name.endswith(".jsonl")):
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ImportError_(f"{p}: not valid JSON: {e}") from None
        if isinstance(data, dict):
            data = list(data.values()) if all(isinstance(v, dict) for v in data.values()) else [data]
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ImportError_(f"{p}: expected a list of JSON objects")
        return data
    out = []
    for n, rec in json_lines(text.splitlines(), p, error=ImportError_, message="not valid JSON: {e}"):
        if not isinstance(rec, dict):
            raise ImportError_(f"{p}:{n}: expected a JSON object per line")
        out.append(rec)
    return out


def select_records(path: str | os.PathLike, ids: Iterable[str] | None, limit: int | None,
                   id_of: Callable[[dict], str]) -> list[dict]:
    """The records of `path` whose `id_of` is in `ids` (all when None), the first `limit`
    of them; `ImportError_` when none is left."""
    records = read_records(path)
    if ids is not None:
        want = set(ids)
        records = [r for r in records if id_of(r) in want]
    if limit is not None:
        records = records[:limit]
    if not records:
        raise ImportError_(f"{path}: no records to import")
    return records


_NAME_BAD = re.compile(r"[^A-Za-z0-9_.+\-]+")


def task_name(source_id: Any) -> str:
    """A task name made from a source id: ``/`` and other characters an id cannot hold
    become ``_`` (``HumanEval/0`` -> ``HumanEval_0``); never empty, never starts with
    a separator."""
    name = _NAME_BAD.sub("_", str(source_id)).strip("_.-+")
    return name or "task"


@dataclass
class ImportReport:
    """What an import did.

    source    the file (or dataset) read
    out_dir   the suite folder written (None: nothing written)
    written   ids of the tasks written, in order
    skipped   (source id, reason) of records not turned into tasks
    notes     other remarks (e.g. inputs a reference could not run, repairs applied)
    counts    free-form counters (cases, kinds, ...)
    elapsed_s wall-clock seconds of the import
    """

    source: str
    out_dir: str | None = None
    written: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def summary(self) -> str:
        lines = [f"{len(self.written)} task(s) written to {self.out_dir}, {len(self.skipped)} skipped "
                 f"({self.elapsed_s:.1f} s) from {self.source}"]
        if self.counts:
            lines.append("  " + ", ".join(f"{k}: {v}" for k, v in sorted(self.counts.items())))
        for sid, why in self.skipped:
            lines.append(f"  skipped {sid}: {why}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"source": self.source, "out_dir": self.out_dir, "written": list(self.written),
                "skipped": [list(s) for s in self.skipped], "notes": list(self.notes),
                "counts": dict(self.counts), "elapsed_s": self.elapsed_s}


def write_import(report: ImportReport, out_dir: str | os.PathLike, tasks: Sequence[Mapping[str, Any]],
                 t0: float, **suite: Any) -> ImportReport:
    """Write the suite folder (`write_suite` with the `suite` keywords), then record the
    written ids and the time since `t0` (``time.monotonic()``) in `report`."""
    write_suite(out_dir, tasks, **suite)
    report.written = [t["id"] for t in tasks]
    report.elapsed_s = time.monotonic() - t0
    return report
