"""What every importer shares: reading its source, naming tasks, reporting the import.

`read_source(path)` (the records of a ``.jsonl`` / ``.json`` file, optionally gzipped,
each with where it is: ``line 12`` / ``record 3``; lines that are not a JSON object
are returned apart, to be skipped with their line number), `read_records` (just the
records), `select_records` (by id, the first N), `task_name` (a source id made a task
name: ``HumanEval/0`` -> ``HumanEval_0``), `missing_fields`, `ImportReport` (what an
import wrote, skipped -- and how many of each reason -- and noticed) and `write_import`
(the suite folder written, the references judged, the report completed). Values are
`codegym.importers.values`', YAML `codegym.importers.yamlout`'s.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.importers.references import verify_references
from codegym.importers.yamlout import write_suite

__all__ = ["read_records", "read_source", "Source", "select_records", "located", "task_name", "missing_fields",
           "ImportReport", "ImportError_", "write_import", "write_suite"]


class ImportError_(ValueError):  # noqa: N801 -- ImportError is a builtin with another meaning
    """A source file that cannot be imported (unreadable, wrong schema)."""


@dataclass
class Source:
    """A benchmark file read: its records with where each is (``line 12``, ``record 3``),
    and the lines that are not a JSON object (where, why), to skip and report."""

    path: str
    records: list[tuple[str, dict]] = field(default_factory=list)
    bad: list[tuple[str, str]] = field(default_factory=list)


def _text(p: Path) -> str:
    if not p.is_file():
        raise ImportError_(f"{p}: no such file")
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ImportError_(f"{p}: not a readable gzip file: {e}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ImportError_(f"{p}: not UTF-8 text: {e}") from None


def read_source(path: str | os.PathLike, limit: int | None = None) -> Source:
    """The records of a JSON-lines or JSON file, optionally gzip-compressed.

    A JSON file may hold a list of records, or a mapping whose values are records
    (as EvalPlus caches do); blank lines of a JSON-lines file are skipped; a line that is
    not JSON, or not an object, goes to `Source.bad` with its line number. `limit`:
    a JSON-lines file is read only up to its first `limit` records."""
    p = Path(path)
    text = _text(p)
    src = Source(str(p))
    stripped = text.lstrip()
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    if name.endswith(".json") or (stripped.startswith("[") and not name.endswith(".jsonl")):
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ImportError_(f"{p}: not valid JSON: {e}") from None
        except RecursionError:
            raise ImportError_(f"{p}: JSON nested too deeply") from None
        if isinstance(data, dict):
            data = list(data.values()) if data and all(isinstance(v, dict) for v in data.values()) else [data]
        if not isinstance(data, list):
            raise ImportError_(f"{p}: expected a list of JSON objects")
        for i, rec in enumerate(data, 1):
            if isinstance(rec, dict):
                src.records.append((f"record {i}", rec))
            else:
                src.bad.append((f"record {i}", f"not a JSON object ({type(rec).__name__})"))
        return src
    for n, line in enumerate(text.splitlines(), 1):
        if limit is not None and len(src.records) >= limit:
            break
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            src.bad.append((f"line {n}", f"not valid JSON: {e}"))
            continue
        except RecursionError:
            src.bad.append((f"line {n}", "JSON nested too deeply"))
            continue
        if isinstance(rec, dict):
            src.records.append((f"line {n}", rec))
        else:
            src.bad.append((f"line {n}", f"not a JSON object ({type(rec).__name__})"))
    if not src.records and src.bad and not text.lstrip().startswith("{"):
        raise ImportError_(f"{p}: not a JSON or JSON-lines file ({src.bad[0][0]}: {src.bad[0][1]})")
    return src


def read_records(path: str | os.PathLike) -> list[dict]:
    """The records of `path` (see `read_source`); a line that is not a JSON object is an
    `ImportError_` naming it (importers that skip such lines use `read_source`)."""
    src = read_source(path)
    if src.bad:
        where, why = src.bad[0]
        raise ImportError_(f"{path}: {where}: {why}")
    return [rec for _, rec in src.records]


def missing_fields(rec: Mapping[str, Any], fields: Iterable[str]) -> list[str]:
    """The names of `fields` that `rec` lacks (or holds as None / empty text)."""
    return [f for f in fields if rec.get(f) in (None, "")]


def select_records(path: str | os.PathLike, ids: Iterable[str] | None, limit: int | None,
                   id_of: Callable[[dict], str], report: ImportReport | None = None) -> list[tuple[str, dict]]:
    """(where, record) of the records of `path` whose `id_of` is in `ids` (all when None),
    the first `limit` of them; lines that are not a JSON object are skipped into
    `report` (an `ImportError_` without one); `ImportError_` when no record is left."""
    src = read_source(path)
    if src.bad and report is None:
        raise ImportError_(f"{path}: {src.bad[0][0]}: {src.bad[0][1]}")
    for where, why in src.bad:
        report.skip(where, why)
    records = src.records
    if ids is not None:
        want = set(ids)
        records = [(w, r) for w, r in records if id_of(r) in want]
    if limit is not None:
        records = records[:limit]
    if not records:
        raise ImportError_(f"{path}: no records to import")
    return records


def located(records: Sequence[dict | tuple[str, dict]]) -> list[tuple[str, dict]]:
    """(where, record) pairs of records given bare (``record N``) or already located."""
    return [r if isinstance(r, tuple) else (f"record {i}", r) for i, r in enumerate(records, 1)]


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
    skipped   (where -- ``line 12 (id)`` --, reason) of records not turned into tasks
    reasons   how many records were skipped for each kind of reason
    notes     other remarks (e.g. inputs a reference could not run, repairs applied)
    counts    free-form counters (cases, kinds, ...)
    elapsed_s wall-clock seconds of the import
    """

    source: str
    out_dir: str | None = None
    written: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    reasons: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0

    #: skipped records listed one by one in `summary` (the rest are counted)
    SHOW_SKIPPED = 10

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def skip(self, where: str, reason: str, kind: str | None = None) -> None:
        """Record a skipped record: `where` it is, why; `kind` names the reason for the
        counts (default: `reason` with quoted values and numbers left out)."""
        self.skipped.append((where, reason))
        self.reasons[kind or reason_kind(reason)] += 1

    def summary(self) -> str:
        lines = [f"{len(self.written)} task(s) written to {self.out_dir}, {len(self.skipped)} skipped "
                 f"({self.elapsed_s:.1f} s) from {self.source}"]
        if self.counts:
            lines.append("  " + ", ".join(f"{k}: {v}" for k, v in sorted(self.counts.items())))
        if self.reasons:
            lines.append("  skipped by reason: " + "; ".join(f"{k}: {v}" for k, v in self.reasons.most_common()))
        for sid, why in self.skipped[:self.SHOW_SKIPPED]:
            lines.append(f"  skipped {sid}: {why}")
        if len(self.skipped) > self.SHOW_SKIPPED:
            lines.append(f"  ... and {len(self.skipped) - self.SHOW_SKIPPED} more skipped (--json lists all)")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"source": self.source, "out_dir": self.out_dir, "written": list(self.written),
                "skipped": [list(s) for s in self.skipped], "reasons": dict(self.reasons.most_common()),
                "notes": list(self.notes), "counts": dict(self.counts), "elapsed_s": self.elapsed_s}


_REASON_DETAIL = re.compile(r"line \d+|'[^']*'|\"[^\"]*\"|\b\d+(\.\d+)?\b|\s*\([^)]*\)?$")


def reason_kind(reason: str) -> str:
    """A reason without its particulars (line numbers, quoted values, numbers), so that
    records skipped for the same cause count together; quoted names (a field's:
    ``missing field 'question_id'``) are kept."""
    head = re.sub(r"^(line|test|record|row) [\w-]+: ", "", reason).split(": ", 1)[0]

    def drop(m: re.Match) -> str:
        text = m.group()
        return text if re.fullmatch(r"'[A-Za-z_]\w{0,40}'", text) else ""
    kind = _REASON_DETAIL.sub(drop, head).strip(" :,;")
    return re.sub(r"\s+", " ", kind) or reason[:60]


def write_import(report: ImportReport, out_dir: str | os.PathLike, tasks: Sequence[Mapping[str, Any]],
                 t0: float, *, verify: bool = False, sandbox: Any = None, **suite: Any) -> ImportReport:
    """Write the suite folder (`write_suite` with the `suite` keywords); with `verify`,
    judge every task's reference (`verify_references`: limits a reference needs are
    raised, failures reported); then record the written ids and the time since `t0`
    (``time.monotonic()``) in `report`."""
    write_suite(out_dir, tasks, **suite)
    if verify and tasks:
        verify_references(list(tasks), out_dir, report, sandbox)
    report.written = [t["id"] for t in tasks]
    report.elapsed_s = time.monotonic() - t0
    return report
