"""One of each in the judge's vocabulary (issue 31.4): the stage tables, the stage rule and
the progress rule are defined once, in `codegym/judge/report.py`; one `classify` in the
package (the sandbox's: one execution's status). Reads the modules with `ast`."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "codegym"
REPORT = PKG / "judge" / "report.py"
#: module-level names only the judge's report module may define
VOCABULARY = {"STAGES", "PROGRAM_STAGES", "RUNTIME_STATUSES", "program_stage", "ran_progress"}


def _is_half(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0.5


def _leftmost(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.BinOp):
        node = node.left
    return node


def _offences(path: Path, root: Path = PKG.parent) -> list[str]:
    rel = path.relative_to(root)
    bad = []
    tree = ast.parse(path.read_text())
    for node in tree.body:
        names: list[str] = []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        bad += [f"{rel}:{node.lineno}: {n} (a stage table or rule of its own)" for n in names
                if n in VOCABULARY or n.endswith("_STAGES")]
    for node in ast.walk(tree):
        # the progress rule 0.5 + 0.5 * passed / total
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _is_half(node.left) \
                and isinstance(node.right, ast.BinOp) and _is_half(_leftmost(node.right)):
            bad.append(f"{rel}:{node.lineno}: a copy of the progress rule (use judge.report.ran_progress)")
    return bad


def test_the_stage_vocabulary_and_the_progress_rule_are_the_judges():
    bad = [b for p in sorted(PKG.rglob("*.py")) if p != REPORT for b in _offences(p)]
    assert not bad, "defined outside codegym/judge/report.py:\n" + "\n".join(bad)
    assert not _offences(REPORT.parent / "run.py")


def test_one_classify():
    found = [p.relative_to(PKG.parent) for p in sorted(PKG.rglob("*.py"))
             for n in ast.parse(p.read_text()).body if isinstance(n, ast.FunctionDef) and n.name == "classify"]
    assert [str(p) for p in found] == ["codegym/sandbox/classify.py"], found


def test_the_check_sees_the_old_forms(tmp_path):
    src = tmp_path / "m.py"
    src.write_text('STAGES = ("no_code", "correct")\n'
                   'def f(p, t):\n    return 0.5 + 0.5 * p / t if t else 0.5\n')
    assert len(_offences(src, tmp_path)) == 2
