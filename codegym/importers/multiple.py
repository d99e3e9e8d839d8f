"""MultiPL-E importer (``codegym import multipl-e``) and Julia test-report parsing.

Reads MultiPL-E's prompt files (JSON lines with ``name``, ``language``,
``prompt``, ``tests``, ``stop_tokens``; e.g. ``humaneval-jl``) and writes one
``kind: script`` task per problem:

- the starter ``main.jl`` is the prompt (docstring + typed ``function``
  signature, body missing), so the program is prompt + completion, as in
  MultiPL-E; the test code is MultiPL-E's ``tests`` (``using Test; @testset
  begin ... end``), appended by the judge's script harness;
- passing means the process exits 0 (a failing ``@testset`` throws at its end,
  so ``julia`` exits 1) and prints the harness's success marker; the judge also
  reads the ``Test Summary`` report (`julia_test_report`) so a run whose report
  shows failures or errors is never accepted;
- ``stop_tokens`` (and the other MultiPL-E fields) are kept in
  ``metadata.extra`` for LLM agents;
- ids: ``humaneval-jl/HumanEval_23_strlen`` (suite ``<benchmark>-<language>``).

Where ``julia`` is not installed the judge cannot run the tests: the tree-sitter
grammar still gives compile-stage feedback (`codegym.judge.syntax.precheck`),
and otherwise the verdict is ``sandbox_error`` naming what to install. A
persistent Julia worker (one warm process running many programs, hiding the
~1-2 s start-up and ``using Test`` load) is not implemented; it is future work
if start-up dominates judging time.

Known upstream defects (``REPAIRS``): two HumanEval-jl prompts have a stray
``>`` after a ``Dict{...}`` argument type (``HumanEval_95_check_dict_case``,
``HumanEval_111_histogram``), which no completion can make valid Julia. With
``repair=True`` (default) the importer removes it and records the repair in
``metadata.extra.repairs``; ``repair=False`` keeps the prompts verbatim.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from codegym.importers.common import ImportError_, ImportReport, read_records, task_name, write_suite

__all__ = ["import_multiple", "build_multiple_tasks", "JuliaTestReport", "julia_test_report",
           "julia_test_failures", "REPAIRS", "LANGUAGES"]

#: MultiPL-E language code -> codegym language (those with a script harness)
LANGUAGES = {"jl": "julia", "julia": "julia", "js": "javascript", "javascript": "javascript"}
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


# --------------------------------------------------------------------------- Julia reports


@dataclass
class JuliaTestReport:
    """What Julia's Test library printed.

    summaries  number of ``Test Summary:`` tables seen
    passed, failed, errored, broken  totals over the summary tables (and the
               "Some tests did not pass: ..." line when there is no table)
    failures   first lines of ``Test Failed at`` / ``Error During Test at`` reports
    """

    summaries: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    broken: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """A summary was printed and it shows no failure or error."""
        return self.summaries > 0 and not self.failed and not self.errored and not self.failures


_SUMMARY_COLS = {"pass": "passed", "fail": "failed", "error": "errored", "broken": "broken"}
_DID_NOT_PASS = re.compile(r"Some tests did not pass:\s*(\d+)\s+passed,\s*(\d+)\s+failed,\s*(\d+)\s+errored,"
                           r"\s*(\d+)\s+broken")


def julia_test_report(output: str) -> JuliaTestReport:
    """Parse the output (stdout + stderr) of a Julia program using ``Test``.

    Reads every ``Test Summary: | Pass  Fail  Error  Broken  Total  Time`` table
    (the column set varies with the outcome and the Julia version) and the
    ``Test Failed at`` / ``Error During Test at`` lines."""
    rep = JuliaTestReport()
    lines = output.splitlines()
    seen_did_not_pass = None
    for k, line in enumerate(lines):
        s = line.strip()
        if s.startswith("Test Summary:") and "|" in s:
            cols = [c.lower() for c in s.split("|", 1)[1].split()]
            # the next line with a '|' holds the counts (right-aligned under the headers)
            for nxt in lines[k + 1:k + 4]:
                if "|" in nxt:
                    vals = nxt.split("|", 1)[1].split()
                    nums = [v for v in vals if v.isdigit()]
                    named = [c for c in cols if c != "time"]
                    # a zero column is printed blank in some versions: align from the right
                    # only when counts are missing
                    if len(nums) == len(named):
                        pairs = zip(named, nums)
                    else:
                        pairs = zip(named[-len(nums):], nums) if nums else []
                    for c, v in pairs:
                        attr = _SUMMARY_COLS.get(c)
                        if attr:
                            setattr(rep, attr, getattr(rep, attr) + int(v))
                    rep.summaries += 1
                    break
        elif "Test Failed at" in s or "Error During Test at" in s:
            rep.failures.append(s[:300])
        m = _DID_NOT_PASS.search(s)
        if m:
            seen_did_not_pass = m
    if rep.summaries == 0 and seen_did_not_pass is not None:
        p, f, e, b = (int(x) for x in seen_did_not_pass.groups())
        rep.passed, rep.failed, rep.errored, rep.broken = p, f, e, b
        rep.summaries = 1
    return rep


def julia_test_failures(stdout: str, stderr: str = "") -> str | None:
    """A message when Julia's test report shows a failure or an error (None when it
    shows none or there is no report) -- the check the judge adds to exit status 0."""
    rep = julia_test_report((stdout or "") + "\n" + (stderr or ""))
    if rep.failed or rep.errored or rep.failures:
        first = rep.failures[0] if rep.failures else ""
        return (f"Julia tests: {rep.passed} passed, {rep.failed} failed, {rep.errored} errored"
                + (f"; {first}" if first else ""))
    return None


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


def build_multiple_tasks(records: Sequence[dict], *, suite_name: str | None = None, repair: bool = True,
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
    for rec in records:
        name = str(rec.get("name") or rec.get("task_id") or "?")
        lang = LANGUAGES.get(str(rec.get("language", "")).lower())
        if lang is None:
            report.skipped.append((name, f"language {rec.get('language')!r} has no script harness in codegym "
                                         f"(supported: {', '.join(sorted(set(LANGUAGES.values())))})"))
            continue
        prompt, tests = rec.get("prompt"), rec.get("tests") or rec.get("test")
        if not prompt or not tests:
            report.skipped.append((name, "missing prompt or tests"))
            continue
        repairs: list[str] = []
        if repair:
            prompt, repairs = _repair(prompt)
            if repairs:
                report.notes.append(f"{name}: {'; '.join(repairs)}")
                report.count("repaired")
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
        tasks.append(task)
        report.count(lang)
    return tasks


def import_multiple(path: str | Path, out_dir: str | Path, *, suite_name: str | None = None, repair: bool = True,
                    public: str = "none", time_s: float | None = None, ids: Sequence[str] | None = None,
                    limit: int | None = None, validate: bool = True) -> ImportReport:
    """Import a MultiPL-E prompts file (JSON lines) into the suite folder `out_dir`.

    suite_name  overrides the suite part of the ids (default ``<benchmark>-<lang>``,
                e.g. humaneval-jl); repair: fix the known prompt defects (REPAIRS);
    public      "none" | "tests"; time_s: CPU limit per program (default Julia 15 s);
    ids / limit select records by name / the first N.
    """
    t0 = time.monotonic()
    records = read_records(path)
    if ids is not None:
        want = set(ids)
        records = [r for r in records if str(r.get("name") or r.get("task_id")) in want]
    if limit is not None:
        records = records[:limit]
    if not records:
        raise ImportError_(f"{path}: no records to import")
    report = ImportReport(source=str(path), out_dir=str(out_dir))
    tasks = build_multiple_tasks(records, suite_name=suite_name, repair=repair, public=public, time_s=time_s,
                                 report=report)
    suite = tasks[0]["id"].split("/", 1)[0] if tasks else (suite_name or "multipl-e")
    write_suite(out_dir, tasks, name=suite, validate=validate,
                description=f"MultiPL-E {suite}: prompt + completion + tests, run with the language's "
                            f"toolchain (evaluation only: the data licence forbids training on it)")
    report.written = [t["id"] for t in tasks]
    report.elapsed_s = time.monotonic() - t0
    return report
