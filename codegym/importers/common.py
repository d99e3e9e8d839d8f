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

import hashlib
import math
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataCaps, DataError, chunks, json_lines, read_json
from codegym.core.paths import display_path, staged_folder
from codegym.importers.references import verify_references
from codegym.importers.yamlout import write_suite, write_suite_file
from codegym.sandbox.types import Sandbox
from codegym.tasks.load import TaskValidationError, load_task


class ImportError_(ValueError):  # noqa: N801 -- ImportError is a builtin with another meaning
    """A source file that cannot be imported (unreadable, wrong schema)."""


@dataclass
class Source:
    """A benchmark file read: its records with where each is (``line 12``, ``record 3``),
    and the lines that are not a JSON object (where, why), to skip and report."""

    path: str
    records: list[tuple[str, dict]] = field(default_factory=list)
    bad: list[tuple[str, str]] = field(default_factory=list)


def _first_char(p: Path, caps: DataCaps) -> bytes:
    """The first non-blank byte of the (decompressed) file `p` (b"" when none)."""
    seen = 0
    for piece in chunks(p, caps):
        stripped = piece.lstrip(b" \t\r\n\xef\xbb\xbf")
        if stripped:
            return stripped[:1]
        seen += len(piece)
        if seen > caps.doc_bytes:
            break
    return b""


def read_source(path: str | os.PathLike, limit: int | None = None, caps: DataCaps = DEFAULT_DATA_CAPS) -> Source:
    """The records of a JSON-lines or JSON file, optionally gzip-compressed, read within
    `caps` (`codegym.core.jsonl`: a regular file only, decompression bounded in size and
    ratio, each line or document and its nesting bounded).

    A JSON file may hold a list of records, or a mapping whose values are records
    (as EvalPlus caches do); blank lines of a JSON-lines file are skipped; a line that is
    not JSON, too deep or too long, or not an object, goes to `Source.bad` with its line
    number. `limit`: a JSON-lines file is read only up to its first `limit` records.
    `ImportError_`: the file as a whole (not a regular file, a decompression bomb, not
    JSON at all)."""
    p = Path(path)
    src = Source(str(p))
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    try:
        if name.endswith(".json") or (not name.endswith(".jsonl") and _first_char(p, caps) == b"["):
            _read_document(p, caps, src)
            return src
        for n, rec in json_lines(p, caps):
            if limit is not None and len(src.records) >= limit:
                break
            if isinstance(rec, dict):
                src.records.append((f"line {n}", rec))
            elif isinstance(rec, DataError):
                src.bad.append((f"line {n}", str(rec)))
            else:
                src.bad.append((f"line {n}", f"not a JSON object ({type(rec).__name__})"))
    except DataError as e:
        raise ImportError_(str(e) if str(e).startswith(str(p)) else f"{p}: {e}") from None
    if not src.records and src.bad and _first_char(p, caps) != b"{":
        raise ImportError_(f"{p}: not a JSON or JSON-lines file ({src.bad[0][0]}: {src.bad[0][1]})")
    return src


def _read_document(p: Path, caps: DataCaps, src: Source) -> None:
    """The records of the JSON document `p` into `src` (see `read_source`)."""
    data = read_json(p, caps)
    if isinstance(data, dict):
        data = list(data.values()) if data and all(isinstance(v, dict) for v in data.values()) else [data]
    if not isinstance(data, list):
        raise ImportError_(f"{p}: expected a list of JSON objects")
    if len(data) > caps.records:
        raise ImportError_(f"{p}: more than {caps.records:,} records (records)")
    for i, rec in enumerate(data, 1):
        if isinstance(rec, dict):
            src.records.append((f"record {i}", rec))
        else:
            src.bad.append((f"record {i}", f"not a JSON object ({type(rec).__name__})"))


def read_records(path: str | os.PathLike) -> list[dict]:
    """The records of `path` (see `read_source`); a line that is not a JSON object is an
    `ImportError_` naming it (importers that skip such lines use `read_source`)."""
    src = read_source(path)
    if src.bad:
        where, why = src.bad[0]
        raise ImportError_(f"{path}: {where}: {why}")
    return [rec for _, rec in src.records]


#: what a bad record can make an importer's code raise: the record is skipped with the
#: reason (`record_error`), the import goes on
RECORD_ERRORS = (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError,
                 SyntaxError, MemoryError)


def record_error(e: BaseException) -> str:
    """One line saying why a record could not be imported (`RECORD_ERRORS`)."""
    text = " ".join(str(e).split())[:300]
    if isinstance(e, RecursionError):
        return "nested too deeply"
    if isinstance(e, MemoryError):
        return "too large to hold in memory"
    if type(e) in (ValueError, DataError, ImportError_) and text:
        return text
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def record_at(where: str, rec: Mapping[str, Any], *keys: str) -> str:
    """``line 12 (id)``: where a record is and its id (the first of `keys` it has, on one
    line, at most 100 characters), or just `where`."""
    for k in keys:
        v = rec.get(k)
        if v not in (None, ""):
            text = " ".join(str(v).split())
            return f"{where} ({text[:100] + '...' if len(text) > 100 else text})"
    return where


def finite_number(value: Any, what: str, lo: float, hi: float) -> float:
    """`value` as a float when it is a finite number in [lo, hi] (a numeric string
    counts); ValueError naming `what` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{what}: expected a number, not {type(value).__name__}")
    try:
        x = float(value)
    except (ValueError, OverflowError):
        raise ValueError(f"{what}: not a number: {str(value)[:40]!r}") from None
    if not math.isfinite(x) or not lo <= x <= hi:
        raise ValueError(f"{what}: {str(value)[:40]} is out of range [{lo:g}, {hi:g}]")
    return x


_TYPE_WORDS = {str: "a string", list: "a list", dict: "an object", int: "an integer", float: "a number"}


def check_types(rec: Mapping[str, Any], types: Mapping[str, type | tuple[type, ...]]) -> None:
    """ValueError naming the first field of `rec` that is present (not None) but not of
    its type in `types` (``field 'prompt': expected a string, not list``)."""
    for name, want in types.items():
        value = rec.get(name)
        if value is None:
            continue
        want = want if isinstance(want, tuple) else (want,)
        if not isinstance(value, want) or (isinstance(value, bool) and bool not in want):
            words = " or ".join(_TYPE_WORDS.get(t, t.__name__) for t in want)
            raise ValueError(f"field {name!r}: expected {words}, not {type(value).__name__}")


def missing_fields(rec: Mapping[str, Any], fields: Iterable[str]) -> list[str]:
    """The names of `fields` that `rec` lacks (or holds as None / empty text)."""
    return [f for f in fields if rec.get(f) in (None, "")]


def select_records(path: str | os.PathLike, ids: Iterable[str] | None, limit: int | None,
                   id_of: Callable[[dict], str], report: ImportReport | None = None,
                   caps: DataCaps = DEFAULT_DATA_CAPS) -> list[tuple[str, dict]]:
    """(where, record) of the records of `path` whose `id_of` is in `ids` (all when None),
    the first `limit` of them; lines that are not a JSON object are skipped into
    `report` (an `ImportError_` without one); `ImportError_` when no record is left."""
    src = read_source(path, caps=caps)
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
    name = _NAME_BAD.sub("_", str(source_id)[:1000]).strip("_.-+")
    if len(name) > 120:   # a file name has at most 255 bytes: keep it short, and unique
        name = f"{name[:100]}-{hashlib.sha256(str(source_id).encode('utf-8', 'replace')).hexdigest()[:12]}"
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
    #: skipped records kept in `skipped` (the rest are only counted: a file of a million
    #: bad lines does not make a million-line report)
    KEEP_SKIPPED = 10_000

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def skip(self, where: str, reason: str, kind: str | None = None) -> None:
        """Record a skipped record: `where` it is, why; `kind` names the reason for the
        counts (default: `reason` with quoted values and numbers left out)."""
        if len(self.skipped) < self.KEEP_SKIPPED:
            self.skipped.append((where, reason))
        self.reasons[kind or reason_kind(reason)] += 1

    @property
    def skipped_total(self) -> int:
        """Every record skipped (`skipped` keeps the first `KEEP_SKIPPED`)."""
        return max(len(self.skipped), sum(self.reasons.values()))

    def summary(self) -> str:
        lines = [f"{len(self.written)} task(s) written to {self.out_dir}, {self.skipped_total} skipped "
                 f"({self.elapsed_s:.1f} s) from {self.source}"]
        if self.counts:
            lines.append("  " + ", ".join(f"{k}: {v}" for k, v in sorted(self.counts.items())))
        if self.reasons:
            lines.append("  skipped by reason: " + "; ".join(f"{k}: {v}" for k, v in self.reasons.most_common()))
        for sid, why in self.skipped[:self.SHOW_SKIPPED]:
            lines.append(f"  skipped {sid}: {why}")
        if self.skipped_total > self.SHOW_SKIPPED:
            listed = "all" if self.skipped_total <= self.KEEP_SKIPPED else f"the first {self.KEEP_SKIPPED}"
            lines.append(f"  ... and {self.skipped_total - self.SHOW_SKIPPED} more skipped (--json lists {listed})")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"source": self.source, "out_dir": self.out_dir, "written": list(self.written),
                "skipped": [list(s) for s in self.skipped], "skipped_total": self.skipped_total,
                "reasons": dict(self.reasons.most_common()),
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
                 t0: float, *, verify: bool = False, sandbox: Sandbox | None = None, validate: bool = True,
                 **suite: Any) -> ImportReport:
    """Write the suite folder (`write_suite` with the `suite` keywords) in a temporary
    folder that replaces `out_dir` at the end (`codegym.core.paths.staged_folder`: an
    import that fails leaves `out_dir` as it was; an existing `out_dir` that is not a
    suite folder is refused, never replaced). A task whose file name another took, or
    whose written file does not load back (`validate`), is a skip line of `report`, not
    the end of the import. With `verify`, every task's reference is judged
    (`verify_references`: limits a reference needs are raised, failures reported); then
    the written ids and the time since `t0` (``time.monotonic()``) go into `report`."""
    out = Path(out_dir)
    if out.is_dir() and any(out.iterdir()) and not (out / "suite.yaml").is_file():
        raise ImportError_(f"{out}: a folder that is not a suite folder (no suite.yaml): not replaced by the "
                           "import (give --out a new folder or a suite folder)")
    kept, names = [], {}
    for t in tasks:
        fname = str(t["id"]).rsplit("/", 1)[-1]
        if fname in names:
            report.skip(str(t["id"]), f"a second task of the file name {fname}.yaml (first: {names[fname]})",
                        "a second task of the same name")
            continue
        names[fname] = str(t["id"])
        kept.append(t)
    with staged_folder(out) as stage:
        write_suite(stage, [], validate=False, **suite)
        written, paths = [], []
        for t in kept:
            try:
                paths.append(write_suite_file(stage, t))
            except RECORD_ERRORS as e:   # a value YAML cannot hold: that task only
                report.skip(str(t["id"]), f"cannot be written: {record_error(e)}", "cannot be written")
                continue
            written.append(t)
        kept = written
        if validate:
            good = []
            for t, p in zip(kept, paths):
                try:
                    load_task(p)
                except (TaskValidationError, ValueError, OSError) as e:
                    why = str(e).replace(str(stage), str(out)).replace(display_path(stage), display_path(out))
                    report.skip(str(t["id"]), "the written task does not load: " + " ".join(why.split())[:300],
                                "the written task does not load")
                    p.unlink()
                    continue
                good.append(t)
            kept = good
        if verify and kept:
            verify_references(list(kept), stage, report, sandbox)
    report.written = [t["id"] for t in kept]
    report.elapsed_s = time.monotonic() - t0
    return report
