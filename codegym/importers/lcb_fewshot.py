"""LiveCodeBench's few-shot example files as tasks (``lcb_runner/prompts/few_shot_examples``).

A record is ``{question, answer}`` (stdin problems) or ``{question, sample_code,
answer}`` (LeetCode problems with a ``class Solution`` starter). The files carry no
tests: the tests are the examples of each statement -- ``Input: a = [1,2], b = "x"`` /
``Output: 3`` for LeetCode problems (the arguments in the method's order, values as
JSON), the ``Input`` / ``Output`` blocks after the ``Example(s)`` heading for stdin ones
-- and the answer is the reference solution, judged like every LCB task (the caller
gives LCB's preamble). Called by `codegym.importers.lcb.import_lcb`.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from codegym.core.jsonl import loads
from codegym.importers.common import RECORD_ERRORS, ImportReport, check_types, missing_fields, record_error
from codegym.judge.protocol import parse_python

_LICENCE = "MIT (LiveCodeBench few-shot examples); statements belong to their platforms"
_IO_LINE = re.compile(r"^\s*(Input|Output)\s*:\s*(.*)$")
_ASSIGN = re.compile(r"(?:^|,)\s*([A-Za-z_]\w*)\s*=\s*")
_HEADING = re.compile(r"^\s*-*\s*(Examples?|Sample (?:Input|Tests?)s?)\s*-*\s*:?\s*$", re.I)
_END = re.compile(r"^\s*-*\s*(Notes?|Explanation|Constraints)\s*-*\s*:?\s*$", re.I)


def _value(text: str) -> Any:
    """A LeetCode example value: JSON, else a Python literal (``true``/``false``/``null``)."""
    text = text.strip()
    try:
        return loads(text)
    except ValueError:
        pass
    fixed = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", text)))
    try:
        return ast.literal_eval(fixed)
    except (ValueError, SyntaxError) as e:
        raise ValueError(f"example value {text[:60]!r} is neither JSON nor a literal ({e})") from None


def _signature(sample_code: str) -> tuple[str, list[str]]:
    """(method name, parameter names without self) of a ``class Solution`` starter."""
    tree = parse_python(sample_code.rstrip() + "\n        pass\n")
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            return node.name, [a.arg for a in node.args.args[1:]]
    raise ValueError("sample_code defines no method")


def functional_examples(question: str, params: list[str]) -> list[tuple[list, Any]]:
    """[(positional arguments, expected)] of a LeetCode statement's examples."""
    out, pending = [], None
    for line in question.split("\n"):
        m = _IO_LINE.match(line)
        if not m:
            continue
        if m.group(1) == "Input":
            text = m.group(2)
            names = [(a.group(1), a.start(), a.end()) for a in _ASSIGN.finditer(text)]
            values = {n: _value(text[e:(names[k + 1][1] if k + 1 < len(names) else len(text))])
                      for k, (n, _, e) in enumerate(names)}
            if set(values) != set(params):
                raise ValueError(f"example input names {sorted(values)} are not the parameters {params}")
            pending = [values[p] for p in params]
        elif pending is not None:
            out.append((pending, _value(m.group(2))))
            pending = None
    return out


def stdin_examples(question: str) -> list[tuple[str, str]]:
    """[(stdin, expected stdout)] of the ``Input`` / ``Output`` blocks after a statement's
    ``Example(s)`` heading (until a ``Note`` heading or the end)."""
    lines = question.split("\n")
    start = next((i for i, ln in enumerate(lines) if _HEADING.match(ln)), None)
    if start is None:
        return []
    blocks: list[tuple[str, list[str]]] = []
    for ln in lines[start + 1:]:
        head = ln.strip().rstrip(":")
        if _END.match(ln):
            break
        if head in ("Input", "Output"):
            blocks.append((head, []))
        elif blocks:
            blocks[-1][1].append(ln)
    out = []
    for (k1, b1), (k2, b2) in zip(blocks[::2], blocks[1::2]):
        if (k1, k2) != ("Input", "Output"):
            raise ValueError("the examples do not alternate Input and Output")
        out.append(("\n".join(b1).strip("\n") + "\n", "\n".join(b2).strip("\n") + "\n"))
    return out


def fewshot_tasks(records: list[tuple[str, dict]], report: ImportReport, *, suite: str, time_s: float,
                  memory_mb: int, preamble: str) -> list[dict]:
    """One task per few-shot record (see the module docstring); records that cannot be
    tasks are skipped into `report` with their line."""
    tasks = []
    for n, (where, rec) in enumerate(records, 1):
        missing = missing_fields(rec, ("question", "answer"))
        if missing:
            report.skip(where, f"missing field {', '.join(map(repr, missing))}", f"missing field {missing[0]!r}")
            continue
        try:
            check_types(rec, {"question": str, "answer": str, "sample_code": str})
            task = _task(rec, n, suite, preamble)
        except RECORD_ERRORS as e:
            report.skip(where, record_error(e))
            continue
        task["limits"] = {"time_s": time_s, "memory_mb": memory_mb}
        tasks.append(task)
        report.count(task["kind"])
        report.count("cases", len(task["tests"]["hidden"]))
    return tasks


def _task(rec: dict, n: int, suite: str, preamble: str) -> dict:
    question, answer = str(rec["question"]), str(rec["answer"])
    sample = rec.get("sample_code")
    if sample:
        method, params = _signature(str(sample))
        cases = [{"name": f"example-{i}", "args": a, "expected": e}
                 for i, (a, e) in enumerate(functional_examples(question, params), 1)]
        kind = {"kind": "function", "language": "python", "entry_point": f"Solution.{method}",
                "preamble": preamble, "starter": {"main.py": str(sample)},
                "checker": {"type": "exact", "seq_lenient": "top"}}
        name, how = f"fewshot-func-{n}", (f"Implement the method `{method}` of `class Solution` in `main.py`:"
                                          f"\n\n```python\n{str(sample).rstrip()}\n```\n")
    else:
        cases = [{"name": f"example-{i}", "stdin": a, "expected": e}
                 for i, (a, e) in enumerate(stdin_examples(question), 1)]
        kind = {"kind": "stdio", "language": "python", "preamble": preamble, "starter": {"main.py": ""},
                "checker": "decimal_lines"}
        name = f"fewshot-stdin-{n}"
        how = "Read the input from standard input and write the answer to standard output.\n"
    if not cases:
        raise ValueError("the statement has no examples to test with")
    return {"id": f"{suite}/{name}", "title": question.strip().split("\n", 1)[0][:80],
            "statement": question.rstrip() + "\n\n" + how, **kind,
            "tests": {"public": cases, "hidden": cases},
            "solutions": {"reference": {"files": {"main.py": answer}}},
            "metadata": {"source": "livecodebench", "licence": _LICENCE, "tags": ["lcb", "few-shot"],
                         "extra": {"source_index": n, "tests": "the statement's examples"}}}
