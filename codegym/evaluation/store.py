"""The files of an eval directory: the results JSONL and reading the manifest.

This module owns the names of the files (`RESULTS_FILE`, `MANIFEST_FILE`,
`ERRORS_FILE`, `CONFIG_COPY`), `EvalError`, and `ResultStore`: ``results.jsonl``
appended one atomic line at a time (``O_APPEND``, one ``write``, ``fsync``), whose
torn last line (a kill in the middle of a write) is cut off before appending.
Writing the manifest is `codegym.evaluation.manifest`'s; docs/eval.md has the layout.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataError, loads, read_json, read_regular

RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "manifest.json"
ERRORS_FILE = "errors.jsonl"
CONFIG_COPY = "config.yaml"


class EvalError(RuntimeError):
    """The eval cannot run (e.g. the output directory holds a different eval)."""


class ResultStore:
    """A JSONL file of results, appended one atomic line at a time (thread-safe)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._lock = threading.Lock()

    def load(self, repair: bool = True) -> list[dict[str, Any]]:
        """Every complete record. A last line without its newline (a write cut by a kill)
        is dropped, and with `repair` cut from the file so appends start on a clean line."""
        if not self.path.exists():
            return []
        try:
            data = read_regular(self.path, DEFAULT_DATA_CAPS.file_bytes)   # (a FIFO is refused, not read)
        except DataError as e:
            raise EvalError(str(e)) from None
        end = data.rfind(b"\n") + 1
        if end < len(data) and repair:
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
        out = []
        for lineno, line in enumerate(data[:end].splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(loads(line))
            except DataError as e:
                raise EvalError(f"{self.path}:{lineno}: not a JSON record ({e}); the file was edited "
                                f"by hand? remove that line to continue") from None
        return out

    def append(self, record: Mapping[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                # one write of the whole line: a concurrent reader or a kill never sees half of
                # it followed by more data (a torn tail is repaired by `load`)
                n = os.write(fd, line)
                while n < len(line):  # only on exotic file systems
                    n += os.write(fd, line[n:])
                os.fsync(fd)
            finally:
                os.close(fd)


def write_json_atomic(path: Path, obj: Any) -> None:
    """`obj` as indented JSON in `path`, replaced in one rename (never half written)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_manifest(out_dir: str | os.PathLike) -> dict[str, Any]:
    """The ``manifest.json`` of an eval directory (`EvalError` when there is none)."""
    p = Path(out_dir) / MANIFEST_FILE
    if not p.is_file():
        raise EvalError(f"{out_dir} holds no eval ({MANIFEST_FILE} missing)")
    try:
        return read_json(p, DEFAULT_DATA_CAPS.replace(doc_bytes=64 << 20))
    except DataError as e:
        raise EvalError(str(e)) from None
