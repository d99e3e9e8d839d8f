"""MultiPL-E importer (``codegym import multipl-e``); Julia test reports: `codegym.judge.logs.julia`.

Reads MultiPL-E's prompt files (JSON lines with ``name``, ``language``, ``prompt``,
``tests``, ``stop_tokens``; e.g. ``humaneval-jl``) and writes one ``kind: script`` task
per problem: the starter ``main.<ext>`` is the prompt, the program is prompt +
completion + MultiPL-E's ``tests``, and passing means exit 0, the harness's marker and
a clean test report. Ids: ``humaneval-jl/HumanEval_23_strlen``. ``REPAIRS`` fixes
known upstream prompt defects (``repair=True``). docs/eval.md has the details.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path

from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataCaps
from codegym.importers.common import (
    RECORD_ERRORS,
    ImportReport,
    check_types,
    located,
    missing_fields,
    record_at,
    record_error,
    select_records,
    task_name,
    write_import,
)

#: MultiPL-E language code -> codegym language (those with a script harness)
LANGUAGES = {"jl": "julia", "julia": "julia", "js": "javascript", "javascript": "javascript"}
#: the types of the fields a record may have (checked before anything is built)
_FIELD_TYPES = {"name": (str, int), "prompt": str, "tests": str, "test": str, "stop_tokens": list}
_FILE_EXT = {"julia": "jl", "javascript": "js"}
_LANG_TITLE = {"julia": "Julia", "javascript": "JavaScript"}

#: (pattern, replacement, description) applied to prompts with repair=True
REPAIRS: list[tuple[re.Pattern, str, str]] = [
    (re.compile(r"(::\s*Dict\{[^{}\n]*\})>(?=[\s)])"), r"\1",
     "removed a stray '>' after a Dict{...} type in the signature (MultiPL-E translation defect)"),
]

#: CPU seconds per program: Julia start-up and `using Test` take seconds
DEFAULT_TIME_S = {"julia": 15.0, "javascript": 6.0}

_LICENCE = ("BSD-3-Clause with Machine Learning Restriction (MultiPL-E: not for training models); "
            "MIT (OpenAI HumanEval)")


# --------------------------------------------------------------------------- tasks

_FUNC_NAME = {"julia": re.compile(r"^\s*function\s+([A-Za-z_][A-Za-z0-9_!]*)\s*\(", re.M),
              "javascript": re.compile(r"^\s*function\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*\(", re.M)}


def _benchmark_of(name: str) -> str:
    head = name.split("_", 1)[0].lower()
    return head if head in ("humaneval", "mbpp") else "multipl-e"


def _repair(prompt: str) -> tuple[str, list[str]]:
    done = []
    for pat, repl, what in REPAIRS:
        new, n = pat.subn(repl, prompt)
        if n:
            prompt = new
            done.append(what)
    return prompt, done


def _statement(prompt: str, language: str, entry: str | None) -> str:
    title = _LANG_TITLE.get(language, language)
    main = f"main.{_FILE_EXT.get(language, 'txt')}"
    fn = f"`{entry}`" if entry else "the function"
    if language == "julia":
        how = ("write its body and close it with `end`. The tests (Julia's `Test` standard library, "
               "`@testset`/`@test`) are appended to your file and run with `julia`")
    else:
        how = "write its body and close it. The tests (Node's `assert`) are appended to your file and run with `node`"
    return (f"Complete the {title} function {fn} in `{main}`. The file starts with its docstring and "
            f"signature; {how}.\n\n```{language}\n{prompt.rstrip()}\n```\n")


def build_multiple_tasks(records: Sequence[dict | tuple[str, dict]], *, suite_name: str | None = None,
                         repair: bool = True,
                         public: str = "none", time_s: float | None = None,
                         report: ImportReport | None = None) -> list[dict]:
    """Task mappings for MultiPL-E records (see the module docstring).

    public  "none" (default: MultiPL-E has one test block, kept hidden) or "tests"
            (the same tests are also the public split -- feedback that reveals them)
    """
    if public not in ("none", "tests"):
        raise ValueError(f"public must be 'none' or 'tests', not {public!r}")
    report = report if report is not None else ImportReport(source="<records>")
    tasks = []
    for where, rec in located(records):
        name = str(rec.get("name") or rec.get("task_id") or "?")
        at = record_at(where, rec, "name", "task_id")
        missing = missing_fields(rec, ("name", "language", "prompt")) + \
            ([] if rec.get("tests") or rec.get("test") else ["tests"])
        if missing:
            report.skip(at, f"missing field {', '.join(map(repr, missing))}", f"missing field {missing[0]!r}")
            continue
        lang = LANGUAGES.get(str(rec.get("language", "")).lower())
        if lang is None:
            report.skip(at, f"language {rec.get('language')!r} has no script harness in codegym "
                            f"(supported: {', '.join(sorted(set(LANGUAGES.values())))})",
                        "language without a script harness")
            continue
        try:
            check_types(rec, _FIELD_TYPES)
            prompt, tests = rec["prompt"], rec.get("tests") or rec.get("test")
            repairs: list[str] = []
            if repair:
                prompt, repairs = _repair(prompt)
            task = _task(rec, name, lang, prompt, tests, repairs, suite_name=suite_name, public=public,
                         time_s=time_s)
        except RECORD_ERRORS as e:
            report.skip(at, record_error(e))
            continue
        if repairs:
            report.notes.append(f"{name}: {'; '.join(repairs)}")
            report.count("repaired")
        tasks.append(task)
        report.count(lang)
    return tasks


def _task(rec: dict, name: str, lang: str, prompt: str, tests: str, repairs: list[str], *,
          suite_name: str | None, public: str, time_s: float | None) -> dict:
    """The task mapping of one MultiPL-E record (its prompt already repaired)."""
    m = _FUNC_NAME[lang].search(prompt)
    entry = m.group(1) if m else None
    bench = _benchmark_of(name)
    suite = suite_name or f"{bench}-{_FILE_EXT[lang]}"
    main = f"main.{_FILE_EXT[lang]}"
    parts = name.split("_")
    original = f"HumanEval/{parts[1]}" if bench == "humaneval" and len(parts) > 1 and parts[1].isdigit() \
        else (f"Mbpp/{parts[1]}" if bench == "mbpp" and len(parts) > 1 and parts[1].isdigit() else None)
    extra = {"source_id": name, "stop_tokens": list(rec.get("stop_tokens") or []),
             "harness": "script: prompt + completion + tests; pass = exit 0, marker, clean test report"}
    for k in ("doctests", "prompt_terminology"):
        if rec.get(k) is not None:
            extra[k] = rec[k]
    if original:
        extra["original_task_id"] = original
    if repairs:
        extra["repairs"] = repairs
    task = {
        "id": f"{suite}/{task_name(name)}",
        "title": f"{name} ({_LANG_TITLE.get(lang, lang)})",
        "statement": _statement(prompt, lang, entry),
        "kind": "script",
        "language": lang,
    }
    if entry:
        task["entry_point"] = entry
    task["main_file"] = main
    task["starter"] = {main: prompt}
    split_cases = {"hidden": [{"name": "tests", "code": tests}]}
    if public == "tests":
        split_cases = {"public": [{"name": "tests", "code": tests}], **split_cases}
    task["tests"] = split_cases
    task["limits"] = {"time_s": time_s or DEFAULT_TIME_S.get(lang, 10.0)}
    task["metadata"] = {"source": "multipl-e", "licence": _LICENCE, "url": "https://github.com/nuprl/MultiPL-E",
                        "tags": ["multipl-e", bench, lang], "extra": extra}
    return task


def import_multiple(path: str | Path, out_dir: str | Path, *, suite_name: str | None = None, repair: bool = True,
                    public: str = "none", time_s: float | None = None, ids: Sequence[str] | None = None,
                    limit: int | None = None, validate: bool = True,
                    caps: DataCaps = DEFAULT_DATA_CAPS) -> ImportReport:
    """Import a MultiPL-E prompts file (JSON lines) into the suite folder `out_dir`.

    suite_name  overrides the suite part of the ids (default ``<benchmark>-<lang>``,
                e.g. humaneval-jl); repair: fix the known prompt defects (REPAIRS);
    public      "none" | "tests"; time_s: CPU limit per program (default Julia 15 s);
    ids / limit select records by name / the first N.
    """
    t0 = time.monotonic()
    report = ImportReport(source=str(path), out_dir=str(out_dir))
    records = select_records(path, ids, limit, lambda r: str(r.get("name") or r.get("task_id")), report, caps)
    tasks = build_multiple_tasks(records, suite_name=suite_name, repair=repair, public=public, time_s=time_s,
                                 report=report)
    suite = tasks[0]["id"].split("/", 1)[0] if tasks else (suite_name or "multipl-e")
    return write_import(report, out_dir, tasks, t0, name=suite, validate=validate,
                        description=f"MultiPL-E {suite}: prompt + completion + tests, run with the language's "
                                    f"toolchain (evaluation only: the data licence forbids training on it)")
