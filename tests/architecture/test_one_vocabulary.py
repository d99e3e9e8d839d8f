"""One of each in the judge's vocabulary (issue 31.4): the stage tables, the stage rule and
the progress rule are defined once, in `codegym/judge/report.py`; one `classify` in the
package (the sandbox's: one execution's status); the judge dispatches task kinds through
its table (`codegym/judge/kinds/table.py`, issue 31.2), not by comparing kind names, and
builds its report without copying another's ``__dict__``. Reads the modules with `ast`."""

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


RUN = PKG / "judge" / "run.py"
#: the one function of judge/run.py that names kinds: the checker tag (copied as it is into
#: exported Harbor tasks, which have no table)
TAGGER = "checker_tag"


def _dispatch_offences(path: Path) -> list[str]:
    bad = []
    tree = ast.parse(path.read_text())
    for top in tree.body:
        if isinstance(top, ast.FunctionDef) and top.name == TAGGER:
            continue
        for node in ast.walk(top):
            if isinstance(node, ast.Compare) and any(
                    isinstance(x, ast.Constant) and x.value in ("stdio", "function", "script", "repo")
                    for y in (node.left, *node.comparators)
                    for x in (y.elts if isinstance(y, (ast.Tuple, ast.List, ast.Set)) else (y,))):
                bad.append(f"{path.name}:{node.lineno}: a kind compared by name (use KIND_RUNNERS)")
            elif isinstance(node, ast.Attribute) and node.attr == "__dict__":
                bad.append(f"{path.name}:{node.lineno}: a report filled from another's __dict__")
    return bad


def test_the_judge_dispatches_kinds_through_its_table():
    assert not _dispatch_offences(RUN)
    assert "KIND_RUNNERS" in RUN.read_text()


def test_the_check_sees_the_old_forms(tmp_path):
    src = tmp_path / "m.py"
    src.write_text('STAGES = ("no_code", "correct")\n'
                   'def f(p, t):\n    return 0.5 + 0.5 * p / t if t else 0.5\n')
    assert len(_offences(src, tmp_path)) == 2
    run = tmp_path / "run.py"
    run.write_text('def checker_tag(task, kind):\n    return kind == "stdio"\n'
                   'def judge(rep, task, other):\n    if task.kind == "repo":\n        pass\n'
                   '    elif kind in ("script", "function"):\n        rep.__dict__.update(other.__dict__)\n')
    assert len(_dispatch_offences(run)) == 4, _dispatch_offences(run)  # (two __dict__ on line 7)
