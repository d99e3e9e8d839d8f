"""Which importer reads a benchmark file: `detect_records` / `detect_file`.

Each known schema (`SCHEMAS`) names the fields its records must have and the ones
that tell it from its neighbours (HumanEval vs EvalPlus vs the LeetCode contest set,
which all have ``task_id`` and ``prompt``). A file is sampled (its first `SAMPLE`
records) and the schema most records fit wins; `Detection` says which, how many
records fit, the ``codegym import`` sub-command that reads it, or why none does (a
file that is not JSON, a known dataset without an importer such as PIE, or unknown
fields -- then the closest schema and what it lacks). Used by ``codegym import FILE``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataCaps
from codegym.importers.common import ImportError_, read_source
from codegym.importers.swebench import swebench_flavour

#: records looked at
SAMPLE = 50


@dataclass(frozen=True)
class Schema:
    """A benchmark schema: `required` fields (all), `any_of` (at least one, when given),
    `absent` (none of them: what tells it from a neighbour), the ``codegym import``
    `command` that reads it (None: no importer, `why` says so)."""

    name: str
    title: str
    required: tuple[str, ...]
    any_of: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    command: str | None = None
    why: str = ""

    def fits(self, rec: Mapping) -> bool:
        if self.command == "swebench":   # the SWE-bench importer's own test tells its flavours apart
            return swebench_flavour(rec) == self.name
        return (all(k in rec for k in self.required) and (not self.any_of or any(k in rec for k in self.any_of))
                and not any(k in rec for k in self.absent))

    def missing(self, rec: Mapping) -> list[str]:
        out = [k for k in self.required if k not in rec]
        if self.any_of and not any(k in rec for k in self.any_of):
            out.append(" or ".join(self.any_of))
        return out


#: the known schemas, most specific first (the first of equally good fits wins)
SCHEMAS: tuple[Schema, ...] = (
    Schema("evalplus", "EvalPlus HumanEval+ / MBPP+", ("task_id", "prompt", "entry_point", "canonical_solution"),
           ("base_input", "plus_input"), command="humaneval"),
    Schema("humaneval", "HumanEval", ("task_id", "prompt", "entry_point", "canonical_solution"),
           ("test", "assertion"), absent=("base_input",), command="humaneval"),
    Schema("leetcode-contest", "DeepSeek-Coder LeetCode contest set", ("task_id", "prompt", "test"),
           ("meta", "start_time", "prompt_sft"), absent=("entry_point",), command="leetcode-contest"),
    Schema("lcb", "LiveCodeBench (code_generation_lite)", ("question_id",),
           ("question_content", "public_test_cases", "private_test_cases", "starter_code"), command="lcb"),
    Schema("lcb-fewshot", "LiveCodeBench few-shot examples", ("question", "answer"), command="lcb"),
    Schema("multipl-e", "MultiPL-E prompts", ("prompt", "language"), ("tests", "stop_tokens"),
           absent=("entry_point", "canonical_solution"), command="multipl-e"),
    Schema("swe-rebench", "SWE-rebench instances", ("instance_id", "repo", "patch"), ("install_config",),
           command="swebench"),
    Schema("swe-smith", "SWE-smith instances", ("instance_id", "repo", "patch"), ("image_name",),
           command="swebench"),
    Schema("swe-bench", "SWE-bench instances", ("instance_id", "repo", "patch"),
           ("base_commit", "test_patch", "FAIL_TO_PASS"), command="swebench"),
    Schema("pie", "PIE (slow/fast program pairs)", ("problem_id", "input", "target"),
           why="PIE pairs carry programs and their judge times but no test inputs (CodeNet's tests are "
               "distributed apart): no codegym importer; build stdio tasks with your own inputs"),
)


@dataclass
class Detection:
    """What `detect_records` / `detect_file` found.

    schema    the `Schema` most sampled records fit (None: none fits)
    fit, seen how many sampled records fit it, out of how many
    message   one line for people: the importer to use, or why there is none
    """

    schema: Schema | None
    fit: int = 0
    seen: int = 0
    message: str = ""
    keys: list[str] = field(default_factory=list)

    @property
    def command(self) -> str | None:
        return self.schema.command if self.schema is not None else None

    @property
    def name(self) -> str | None:
        return self.schema.name if self.schema is not None else None


def detect_records(records: Sequence[Mapping], source: str = "the records") -> Detection:
    """The schema most of the first `SAMPLE` `records` fit (see the module docstring)."""
    sample = [r for r in records[:SAMPLE] if isinstance(r, Mapping)]
    if not sample:
        return Detection(None, message=f"{source}: no records")
    keys = sorted({k for r in sample for k in r})
    best, best_n = None, 0
    for schema in SCHEMAS:
        n = sum(1 for r in sample if schema.fits(r))
        if n > best_n:
            best, best_n = schema, n
    if best is None:
        return Detection(None, 0, len(sample), _unknown(source, sample, keys), keys)
    if best.command is None:
        msg = f"{source}: {best.title}: {best.why}"
    else:
        msg = (f"{source}: {best.title} ({best_n}/{len(sample)} sampled records fit): "
               f"codegym import {best.command} FILE --out DIR")
    return Detection(best, best_n, len(sample), msg, keys)


def _unknown(source: str, sample: Sequence[Mapping], keys: list[str]) -> str:
    """Why no schema fits: the nearest one and the fields it misses."""
    def gap(schema: Schema) -> int:
        return min(len(schema.missing(r)) for r in sample)
    near = min((s for s in SCHEMAS if s.command), key=gap)
    lacks = ", ".join(near.missing(min(sample, key=lambda r: len(near.missing(r)))))
    shown = ", ".join(keys[:12]) + (" ..." if len(keys) > 12 else "")
    return (f"{source}: no known benchmark schema fits (fields: {shown}); the nearest is {near.title} "
            f"(`codegym import {near.command}`), which needs {lacks}")


def detect_file(path: str | os.PathLike, caps: DataCaps = DEFAULT_DATA_CAPS) -> Detection:
    """`detect_records` on a file's records; a file that is not JSON (lines) -- a CSV
    table, a README -- is a Detection without a schema saying so."""
    p = Path(path)
    try:
        src = read_source(p, limit=SAMPLE, caps=caps)
    except ImportError_ as e:
        kind = {".csv": "a CSV table", ".md": "a Markdown text", ".txt": "a text file"}.get(p.suffix.lower())
        return Detection(None, message=f"{e}" + (f" -- {p.name} is {kind}, not benchmark records" if kind else ""))
    det = detect_records([r for _, r in src.records], str(p))
    if src.bad and det.schema is not None:
        det.message += f" ({len(src.bad)} unreadable line(s) will be skipped, e.g. {src.bad[0][0]})"
    return det
