"""The DeepSeek-Coder LeetCode contest set (``codegym import leetcode-contest``).

Records: ``task_id``, ``prompt`` (the statement in a docstring, then the ``class
Solution`` starter), ``test`` (``my_solution = Solution()``, then ``test_input = {...}``
and ``assert my_solution.<m>(**test_input) == <expected>`` pairs), ``meta``,
``start_time``. DeepSeek's harness runs ``IMPORT_HELPER + completion + test`` as one
program (10 s). A problem whose tests are literals becomes a ``kind: function`` task
(one case per assertion, compared with Python's ``==`` on the host: a tuple is not a
list); one whose tests build objects (linked lists through helper lambdas) becomes a
``kind: script`` task running the test block as DeepSeek does. Both run DeepSeek's
import block first (`DEEPSEEK_PREAMBLE`). docs/importers.md has the rules.
"""

from __future__ import annotations

import ast
import os
import re
import time
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any

from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataCaps
from codegym.importers.common import (
    RECORD_ERRORS,
    ImportReport,
    check_types,
    finite_number,
    missing_fields,
    read_source,
    record_at,
    record_error,
    task_name,
    write_import,
)
from codegym.importers.lcb import as_date, difficulties, has_float, keep_problem
from codegym.judge.protocol import file_value, parse_python

#: DeepSeek-Coder's ``IMPORT_HELPER["python"]`` (Evaluation/LeetCode/human_eval/evaluation.py),
#: prepended to every program, in its order
DEEPSEEK_IMPORT_HELPER = (
    "import math", "import re", "import sys", "import copy", "import datetime", "import itertools",
    "import collections", "import heapq", "import functools", "import hashlib", "import numpy",
    "import numpy as np", "import string", "from typing import *", "from collections import *",
    "from functools import *",
)
#: the block as the judge runs it: DeepSeek's lines, numpy's only when it is installed (the
#: sandbox's interpreter has no numpy; DeepSeek's environment had it)
DEEPSEEK_PREAMBLE = "".join(
    (f"try:\n    {line}\nexcept ImportError:\n    pass\n" if "numpy" in line else line + "\n")
    for line in DEEPSEEK_IMPORT_HELPER)
#: DeepSeek's ``evaluate_functional_correctness(timeout=10.0)``: one program, all assertions
DEEPSEEK_TIME_S = 10.0
#: the memory limit of the tasks (DeepSeek's harness sets none)
MEMORY_MB = 4096
#: the types of the fields a record may have (checked before anything is built)
_FIELD_TYPES = {"task_id": (str, int), "prompt": str, "prompt_sft": str, "test": str, "meta": dict,
                "title": str, "url": str}
_LICENCE = "MIT (DeepSeek-Coder evaluation data); statements: LeetCode"


def _literal(node: ast.AST, what: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(f"line {node.lineno}: {what} is not a literal ({ast.unparse(node)[:60]})") from None


def leetcode_cases(test_code: str) -> tuple[str, list[tuple[dict, Any]]]:
    """(method name, [(kwargs, expected)]) of a DeepSeek LeetCode ``test`` block whose
    values are literals; ValueError naming the first statement that is not
    ``my_solution = Solution()``, ``test_input = {literal}`` or ``assert
    my_solution.<m>(**test_input) == <literal>``."""
    tree = parse_python(test_code)
    method = None
    current: dict | None = None
    cases: list[tuple[dict, Any]] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
            if target == "my_solution":
                continue
            if target == "test_input":
                current = _literal(node.value, "the test input")
                if not isinstance(current, dict):
                    raise ValueError(f"line {node.lineno}: test_input is not a mapping")
                continue
            raise ValueError(f"line {node.lineno}: unsupported statement {ast.unparse(node)[:60]}")
        if isinstance(node, ast.Assert):
            m = _assert_method(node)
            if m is None or current is None:
                raise ValueError(f"line {node.lineno}: unsupported assertion {ast.unparse(node)[:60]}")
            if method not in (None, m):
                raise ValueError(f"line {node.lineno}: several methods tested ({method}, {m})")
            method = m
            cases.append((current, _literal(node.test.comparators[0], "the expected value")))
            continue
        raise ValueError(f"line {getattr(node, 'lineno', '?')}: unsupported statement {ast.unparse(node)[:60]}")
    if method is None or not cases:
        raise ValueError("no assertions")
    return method, cases


def _assert_method(node: ast.Assert) -> str | None:
    """The method of ``assert my_solution.<m>(**test_input) == ...``, else None."""
    t = node.test
    ok = (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)
          and isinstance(t.left, ast.Call) and isinstance(t.left.func, ast.Attribute)
          and isinstance(t.left.func.value, ast.Name) and t.left.func.value.id == "my_solution"
          and not t.left.args and len(t.left.keywords) == 1 and t.left.keywords[0].arg is None)
    return t.left.func.attr if ok else None


def _script_tests(test_code: str, n_public: int) -> tuple[str, str, int]:
    """(method, public test code, number of assertions) of a test block that builds its
    values (helper lambdas): the public code is the set-up and the first `n_public`
    input/assertion pairs, the hidden code the whole block as DeepSeek runs it."""
    tree = parse_python(test_code)
    lines = test_code.split("\n")
    asserts = [n for n in tree.body if isinstance(n, ast.Assert)]
    methods = {m for m in (_assert_method(n) for n in asserts) if m}
    called = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and isinstance(n.func.value, ast.Name) and n.func.value.id == "my_solution"}
    methods = methods or called
    if len(methods) != 1 or not asserts:
        raise ValueError("the test block calls no single method of my_solution in its assertions")
    cut = asserts[min(n_public, len(asserts)) - 1].end_lineno
    return methods.pop(), "\n".join(lines[:cut]) + "\n", len(asserts)


def _statement(text: str, method: str, starter: str, script: bool) -> str:
    how = ("it is called with each test's arguments by name" if not script else
           "the tests build its arguments (e.g. linked lists from the `ListNode` class of the starter) "
           "and check what it returns")
    return (text.strip() + f"\n\nImplement the method `{method}` of `class Solution` in `main.py` (the "
            f"starter code below); {how}.\n\n```python\n{starter.rstrip()}\n```\n")


def leetcode_contest_task(rec: dict, *, suite: str = "leetcode-contest", time_s: float = DEEPSEEK_TIME_S,
                          memory_mb: int = MEMORY_MB) -> dict:
    """The task of one DeepSeek LeetCode contest record: a function task when its tests
    are literals, else a script task running the test block (ValueError when neither)."""
    prompt = rec.get("prompt") or ""
    # the prompt is a docstring (the statement) followed by the `class Solution` starter
    m = re.search(r'^"""\n?(.*?)\n?"""\s*\n(.*)$', prompt, re.S)
    text, starter = (m.group(1), m.group(2)) if m else (rec.get("prompt_sft") or prompt, "")
    if "class Solution" not in starter:
        raise ValueError("the prompt has no `class Solution` starter")
    # the statement's examples are the first tests (one per "Example N:")
    n_examples = max(1, len(re.findall(r"^Example \d+:", text, re.M)))
    meta_src = rec.get("meta") or {}
    sid = str(rec.get("task_id") or meta_src.get("titleSlug") or "?")
    task: dict[str, Any] = {"id": f"{suite}/{task_name(sid)}", "title": str(meta_src.get("title") or rec.get("title")
                                                                           or sid)}
    extra: dict[str, Any] = {"source_id": sid,
                             "question_id": meta_src.get("questionFrontendId") or meta_src.get("questionId"),
                             "harness": f"DeepSeek-Coder LeetCode: IMPORT_HELPER + completion + test, {time_s:g} s"}
    try:
        method, raw = leetcode_cases(rec["test"])
    except ValueError as why:
        method, public_code, n = _script_tests(rec["test"], n_examples)
        task.update({"statement": _statement(text, method, starter, True), "kind": "script",
                     "language": "python", "entry_point": f"Solution.{method}", "preamble": DEEPSEEK_PREAMBLE,
                     "starter": {"main.py": starter},
                     "tests": {"public": [{"name": "examples", "code": public_code}],
                               "hidden": [{"name": "tests", "code": rec["test"]}]}})
        extra.update({"method": method, "assertions": n, "kind_reason": f"tests are not literals: {why}"})
    else:
        cases = []
        for i, (kwargs, expected) in enumerate(raw):
            try:   # tuples and sets stay what they are (tagged in the file): == tells them apart
                cases.append({"name": f"test-{i}", "kwargs": file_value(kwargs), "expected": file_value(expected)})
            except (TypeError, ValueError) as e:
                raise ValueError(f"test {i}: {e}") from None
        task.update({"statement": _statement(text, method, starter, False), "kind": "function",
                     "language": "python", "entry_point": f"Solution.{method}", "preamble": DEEPSEEK_PREAMBLE,
                     "starter": {"main.py": starter},
                     "tests": {"public": cases[:min(n_examples, len(cases))], "hidden": cases},
                     # DeepSeek's `assert ... == expected`: Python's ==, so a tuple is not a list
                     "checker": {"type": "exact", "seq_lenient": False}})
        extra.update({"method": method, "comparison": "==" + (" (floats exactly)" if any(
            has_float(c["expected"]) for c in cases) else "")})
    task["limits"] = {"time_s": time_s, "memory_mb": memory_mb}
    metadata: dict[str, Any] = {"source": "leetcode-contest", "licence": _LICENCE, "url": rec.get("url"),
                                "tags": ["leetcode", "functional"], "extra": extra}
    difficulty = str(meta_src.get("difficulty") or "").lower() or None
    if difficulty:
        metadata["difficulty"] = difficulty
    start = rec.get("start_time")
    if isinstance(start, (int, float)) and not isinstance(start, bool):   # a Unix time, year 1970-9999
        start = finite_number(start, "start_time", 0, 253402300799)
        metadata["release_date"] = datetime.fromtimestamp(start, tz=UTC).date().isoformat()
    task["metadata"] = {k: v for k, v in metadata.items() if v is not None}
    return task


def import_leetcode_contest(path: str | os.PathLike, out_dir: str | os.PathLike, *,
                            since: date | str | None = None, until: date | str | None = None,
                            difficulty: str | Iterable[str] | None = None, suite_name: str = "leetcode-contest",
                            time_s: float = DEEPSEEK_TIME_S, memory_mb: int = MEMORY_MB, limit: int | None = None,
                            ids: Iterable[str] | None = None, validate: bool = True,
                            caps: DataCaps = DEFAULT_DATA_CAPS) -> ImportReport:
    """Import the DeepSeek-Coder LeetCode contest file into `out_dir` (see the module
    docstring); a record that cannot be read is skipped with its line and the reason.
    `ids`: only these ``task_id``s."""
    t0 = time.monotonic()
    report = ImportReport(source=str(path), out_dir=str(out_dir))
    lo, hi = as_date(since, "since"), as_date(until, "until")
    diffs = difficulties(difficulty)
    src = read_source(path, caps=caps)
    for where, why in src.bad:
        report.skip(where, why)
    tasks = []
    wanted = set(ids) if ids is not None else None
    for where, rec in src.records:
        if wanted is not None and rec.get("task_id") not in wanted:
            continue
        at = record_at(where, rec, "task_id")
        missing = missing_fields(rec, ("task_id", "prompt", "test"))
        if missing:
            report.skip(at, f"missing field {', '.join(map(repr, missing))}", f"missing field {missing[0]!r}")
            continue
        try:
            check_types(rec, _FIELD_TYPES)
            t = leetcode_contest_task(rec, suite=suite_name, time_s=time_s, memory_mb=memory_mb)
        except RECORD_ERRORS as e:
            report.skip(at, record_error(e))
            continue
        rd = t["metadata"].get("release_date")
        if not keep_problem(date.fromisoformat(rd) if rd else None, t["metadata"].get("difficulty") or "",
                            lo, hi, diffs):
            continue
        tasks.append(t)
        report.count(t["kind"])
        report.count("cases", len(t["tests"]["hidden"]))
        if limit is not None and len(tasks) >= limit:
            break
    return write_import(report, out_dir, tasks, t0, name=suite_name, validate=validate,
                        description="LeetCode weekly/biweekly contest problems (DeepSeek-Coder evaluation set), "
                                    "judged like DeepSeek's harness")
