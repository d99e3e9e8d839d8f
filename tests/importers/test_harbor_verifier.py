"""The exported Harbor verifier judges with the judge's own kind table, not a copy of it.

`codegym.importers.harbor_verifier.judge_files` runs a task's kind through
`codegym.judge.kinds.table.PROGRAM_KIND_RUNNERS` (the judge's `KIND_RUNNERS` but repo),
and an exported task carries that table as copied source (`harbor_vendor.SUBSETS`). Here:
the verifier has no dispatch of its own, the table it uses is the judge's, the vendored
copy defines the same runners as the installed judge, and on the host the verifier's
reports agree with `codegym.judge.judge` field by field for every kind and early verdict.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys

import pytest

from codegym import load_suite
from codegym.importers import harbor_verifier
from codegym.importers.harbor import EXPORT_KINDS, export_task
from codegym.importers.harbor_vendor import PACKAGE_ROOT, SUBSETS, vendor_judge
from codegym.judge import judge
from codegym.judge.kinds import table
from codegym.tasks.fields import KINDS

#: one task per exported kind, and a compiled language
TASKS = ("examples/digit-sum-queries", "examples/bracket-depth", "examples/run-length", "examples/residue-pairs")
FIELDS = ("verdict", "passed", "total", "stage", "progress", "message", "compile_output", "checker")


def test_the_verifier_has_no_kind_dispatch_of_its_own():
    tree = ast.parse(inspect.getsource(harbor_verifier))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not imported & {"codegym.judge.kinds.stdio", "codegym.judge.kinds.function",
                           "codegym.judge.kinds.script", "codegym.judge.kinds.repo"}
    named_kinds = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in KINDS]
    assert not named_kinds, f"the verifier names task kinds itself: {named_kinds}"
    assert harbor_verifier.PROGRAM_KIND_RUNNERS is table.PROGRAM_KIND_RUNNERS


def test_the_verifiers_table_is_the_judges_for_every_exported_kind():
    assert set(EXPORT_KINDS) == set(table.PROGRAM_KIND_RUNNERS)
    for kind, runner in table.PROGRAM_KIND_RUNNERS.items():
        assert table.KIND_RUNNERS[kind] is runner
    assert set(table.KIND_RUNNERS) == set(KINDS)


def test_the_vendored_table_defines_the_judges_runners(tmp_path):
    """The copy an exported task carries: every kept definition as in the installed
    source, and importable with nothing but the standard library, with the same kinds."""
    vendor_judge(tmp_path, ["python"])
    for rel in ("judge/kinds/table.py", "judge/chunks.py", "judge/run.py"):
        keep = set(SUBSETS[rel][0])
        host = _definitions((PACKAGE_ROOT / rel).read_text(encoding="utf-8"), keep)
        copied = _definitions((tmp_path / "codegym" / rel).read_text(encoding="utf-8"), keep)
        assert set(host) == keep and copied == host, rel
    code = ("import json; from codegym.judge.kinds.table import PROGRAM_KIND_RUNNERS as t; "
            "print(json.dumps({k: [r.run.__name__, r.checks_source, r.message is None] for k, r in t.items()}))")
    p = subprocess.run([sys.executable, "-E", "-s", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.stderr[-2000:]
    want = {k: [r.run.__name__, r.checks_source, r.message is None] for k, r in table.PROGRAM_KIND_RUNNERS.items()}
    assert json.loads(p.stdout) == want


def _definitions(source: str, names: set[str]) -> dict[str, str]:
    """{name: the syntax tree of its top-level definition} for the `names` a module defines."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined = {node.name}
        elif isinstance(node, ast.Assign):
            defined = {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined = {node.target.id}
        else:
            continue
        for name in defined & names:
            out[name] = ast.dump(node)
    return out


def _programs(task) -> dict[str, dict[str, str]]:
    main = task.main_file_for(task.language)
    ref = dict(task.solution(task.reference_name or "reference").files)
    broken = "def (:\n" if task.language == "python" else "int main( {\n"
    return {"reference": ref, "starter": dict(task.starter_files()), "no_code": {main: "\n"},
            "compile_error": {**ref, main: broken}}


@pytest.mark.parametrize("task_id", TASKS)
def test_the_verifier_reports_what_the_judge_reports(task_id, tmp_path):
    task = next(t for t in load_suite(task_id.split("/")[0]) if t.id == task_id)
    folder = export_task(task, tmp_path, correctness_only=True)
    view, cases = harbor_verifier.load_task(str(folder / "tests" / harbor_verifier.TASK_FILE))
    sandbox = harbor_verifier.ProcessSandbox()
    try:
        for label, files in _programs(task).items():
            got = harbor_verifier.judge_files(view, cases, files, sandbox).to_dict()
            want = judge(task, files, split="hidden").to_dict()
            assert {k: got[k] for k in FIELDS} == {k: want[k] for k in FIELDS}, (task_id, label)
            assert [(c["name"], c["status"]) for c in got["cases"]] == [(c["name"], c["status"])
                                                                       for c in want["cases"]], (task_id, label)
    finally:
        sandbox.close()
