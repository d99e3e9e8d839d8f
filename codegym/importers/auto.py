"""``codegym import FILE``: detect the schema of a benchmark file and run its importer.

`import_file(path, out_dir, **options)` asks `codegym.importers.detect.detect_file`
which importer reads `path` and calls it with the options that importer takes (the
others are ignored: `IMPORTERS` lists each one's); a file no importer reads is an
`ImportError_` whose message says what the file is and what to use instead. The
report says which schema was found (``report.counts["schema:<name>"]``).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any

from codegym.importers.common import ImportError_, ImportReport
from codegym.importers.detect import Detection, detect_file
from codegym.importers.humaneval import import_humaneval
from codegym.importers.lcb import import_lcb
from codegym.importers.leetcode import import_leetcode_contest
from codegym.importers.multiple import import_multiple
from codegym.importers.swebench import import_swebench

#: ``codegym import`` sub-command -> the importer it runs
IMPORTERS: dict[str, Callable[..., ImportReport]] = {
    "humaneval": import_humaneval,
    "lcb": import_lcb,
    "leetcode-contest": import_leetcode_contest,
    "multipl-e": import_multiple,
    "swebench": import_swebench,
}


def importer_options(command: str) -> set[str]:
    """The keyword options the importer of `command` takes."""
    sig = inspect.signature(IMPORTERS[command])
    return {n for n, p in sig.parameters.items() if p.kind is p.KEYWORD_ONLY}


def import_file(path: str | os.PathLike, out_dir: str | os.PathLike, *, detection: Detection | None = None,
                **options: Any) -> ImportReport:
    """Import `path` with the importer its schema calls for (see the module docstring).
    `options` whose value is None are left to the importer's defaults."""
    det = detection or detect_file(path)
    if det.command is None:
        raise ImportError_(det.message)
    accepted = importer_options(det.command)
    kw = {k: v for k, v in options.items() if v is not None and k in accepted}
    report = IMPORTERS[det.command](path, out_dir, **kw)
    report.count(f"schema:{det.name}")
    return report
