"""Benchmark importers: public benchmark files -> codegym task suites.

Each importer reads a benchmark's own format and writes a suite folder (``suite.yaml``
+ one task YAML per problem) that `codegym.tasks.suite.load_suite` and
``gym.make("codegym/Suite-v0", suite=DIR)`` use as is; ids keep the source's
(``HumanEval/0`` -> ``humaneval/HumanEval_0``). Importers: `humaneval` (HumanEval,
EvalPlus HumanEval+ / MBPP+), `multiple` (MultiPL-E), `lcb` (LiveCodeBench; its few-shot
files: `lcb_fewshot`), `leetcode` (the DeepSeek LeetCode contest set), `swebench`
(SWE-bench); `detect` finds which one reads a file and `auto` runs it. Shared parts:
`common` (records, names, the report), `values`, `yamlout`, `references` (reference
runs in the sandbox, judging the imported references). Command line: ``codegym import
...`` (`codegym.cli.imports`); docs/importers.md. Names are imported lazily, so
``import codegym.importers`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "import_humaneval": "codegym.importers.humaneval",
    "build_humaneval_tasks": "codegym.importers.humaneval",
    "import_multiple": "codegym.importers.multiple",
    "build_multiple_tasks": "codegym.importers.multiple",
    "julia_test_report": "codegym.judge.logs.julia",
    "julia_test_failures": "codegym.judge.logs.julia",
    "import_lcb": "codegym.importers.lcb",
    "load_lcb": "codegym.importers.lcb",
    "lcb_task": "codegym.importers.lcb",
    "LCBProblem": "codegym.importers.lcb",
    "import_leetcode_contest": "codegym.importers.leetcode",
    "leetcode_contest_task": "codegym.importers.leetcode",
    "import_file": "codegym.importers.auto",
    "detect_file": "codegym.importers.detect",
    "detect_records": "codegym.importers.detect",
    "verify_references": "codegym.importers.references",
    "import_swebench": "codegym.importers.swebench",
    "syntax_check": "codegym.judge.syntax",
    "precheck": "codegym.judge.syntax",
    "SyntaxIssue": "codegym.judge.syntax",
    "ImportReport": "codegym.importers.common",
    "read_records": "codegym.importers.common",
    "write_suite": "codegym.importers.yamlout",
    "judge_references": "codegym.importers.references",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'codegym.importers' has no attribute {name!r}")
    return getattr(importlib.import_module(mod), name)
