"""Issue 31's before/after table, measured statically on two (or more) checkouts of codegym.

Nothing of a checkout is imported: every count comes from parsing the files of its
``codegym`` package with `ast` (and `tokenize` for comments), except the last row, which
runs mypy on each checkout with the AFTER checkout's ``[tool.mypy]`` configuration.

Rows:

- constructor widths: parameters (``self`` not counted; ``*args`` / ``**kwargs`` each count
  as one) of ``TimedReward.__init__``, ``StagedReward.__init__``, ``LLMAgent.__init__``,
  ``EpisodeEnv.__init__`` and the module-level ``compare`` of ``codegym/timing``;
- parameters named ``task`` / ``sandbox`` of every ``def`` in the package without an
  annotation, and without one or annotated ``Any`` (the issue's "untyped"), of all such
  parameters (lambdas not counted: they cannot be annotated);
- twins: functions that run ``git`` through ``subprocess`` outside the one git helper module
  (``codegym/core/git.py``; a function counts when it calls ``subprocess.*`` and holds a list
  or tuple whose first item is the string ``"git"``), module- or class-level definitions of a
  git environment (a name with ``GIT`` and ``ENV`` or ``IDENTITY`` in it, assigned a dict)
  outside that module, assignments to ``STAGES``, ``def classify``, ``baseline_name``
  definitions (``def`` or assignment), ``reference_name`` definitions, ``class EnvSpec``;
- ``__all__``: the modules that assign one and the names listed (string constants of its
  list / tuple, ``+=`` included, ``sorted(NAME)`` of a module-level list or dict read);
- ``type: ignore`` comments in the package;
- mypy: ``python -m mypy --config-file AFTER/pyproject.toml --cache-dir TMP FILES`` run in
  each checkout, FILES being the AFTER config's ``files`` that exist in that checkout (the
  ones missing are named); errors as mypy's summary counts them.

    python benchmarks/house_metrics.py --before ../before --after . [--column LABEL=DIR] [--no-mypy]
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import tokenize
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

GIT_HELPER = "codegym/core/git.py"
CONSTRUCTORS = ("TimedReward", "StagedReward", "LLMAgent", "EpisodeEnv")
GIT_ENV_NAME = re.compile(r"GIT\w*(ENV|IDENTITY)", re.I)


@dataclass
class Tree:
    """What one checkout's package holds."""
    root: Path
    widths: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    # name -> [no annotation, no annotation or Any, all]
    untyped: dict[str, list[int]] = field(default_factory=lambda: {"task": [0, 0, 0], "sandbox": [0, 0, 0]})
    twins: dict[str, list[str]] = field(default_factory=dict)
    all_modules: int = 0
    all_names: int = 0
    modules: int = 0
    ignores: int = 0
    mypy: str = "not run"


def n_params(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> int:
    a = fn.args
    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    return n - 1 if method and (a.posonlyargs or a.args) else n


def params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def _own_nodes(fn: ast.AST):
    """The nodes of a function's body, not those of the functions and classes defined in it."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))


def runs_git(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    calls_subprocess = starts_git = False
    for node in _own_nodes(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "subprocess":
                calls_subprocess = True
        if isinstance(node, ast.List | ast.Tuple) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and first.value == "git":
                starts_git = True
    return calls_subprocess and starts_git


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _strings(value: ast.AST | None, names: dict[str, ast.AST]) -> int:
    """String constants of an `__all__` value: a list / tuple / set, a sum of them, or
    sorted() / list() / tuple() of a module-level name holding one (or a dict: its keys)."""
    if isinstance(value, ast.List | ast.Tuple | ast.Set):
        return sum(1 for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    if isinstance(value, ast.Dict):
        return sum(1 for e in value.keys if isinstance(e, ast.Constant) and isinstance(e.value, str))
    if isinstance(value, ast.BinOp):
        return _strings(value.left, names) + _strings(value.right, names)
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id in ("sorted", "list", "tuple") and len(value.args) == 1):
        return _strings(value.args[0], names)
    if isinstance(value, ast.Name) and value.id in names:
        return _strings(names[value.id], {})
    return 0


def measure(root: Path) -> Tree:
    tree = Tree(root)
    pkg = root / "codegym"
    for kind in ("git runners", "git environments", "STAGES", "classify", "baseline_name", "reference_name",
                 "EnvSpec"):
        tree.twins[kind] = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        try:
            mod = ast.parse(text, filename=rel)
        except SyntaxError:
            continue  # (none in the package; task data would be)
        tree.modules += 1
        tree.ignores += sum(1 for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                            if tok.type == tokenize.COMMENT and re.search(r"type:\s*ignore", tok.string))
        n_all = None
        values = {t: node.value for node in mod.body if isinstance(node, ast.Assign) for t in _targets(node)}
        for node in mod.body:
            if "__all__" in _targets(node):
                n_all = (n_all or 0) + _strings(node.value, values)
        if n_all is not None:
            tree.all_modules += 1
            tree.all_names += n_all
        for node in ast.walk(mod):
            if isinstance(node, ast.ClassDef):
                if node.name == "EnvSpec":
                    tree.twins["EnvSpec"].append(f"{rel}:{node.lineno}")
                if node.name in CONSTRUCTORS:
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                            tree.widths.setdefault(node.name, []).append((rel, n_params(item, True)))
                for item in node.body:  # class-level twins
                    for name in _targets(item):
                        _assigned_twin(tree, rel, item, name)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for a in params(node):
                    if a.arg in tree.untyped:
                        bare = a.annotation is None
                        anything = bare or ast.unparse(a.annotation).strip("'\"") in ("Any", "typing.Any")
                        counts = tree.untyped[a.arg]
                        counts[0], counts[1], counts[2] = counts[0] + bare, counts[1] + anything, counts[2] + 1
                if node.name in ("classify", "baseline_name", "reference_name"):
                    tree.twins[node.name].append(f"{rel}:{node.lineno}")
                if rel != GIT_HELPER and runs_git(node):
                    tree.twins["git runners"].append(f"{rel}:{node.lineno} {node.name}")
        for node in mod.body:
            for name in _targets(node):
                _assigned_twin(tree, rel, node, name)
            if (isinstance(node, ast.FunctionDef) and node.name == "compare"
                    and rel.startswith("codegym/timing/")):
                tree.widths.setdefault("timing.compare", []).append((rel, n_params(node, False)))
    return tree


def _assigned_twin(tree: Tree, rel: str, node: ast.stmt, name: str) -> None:
    where = f"{rel}:{node.lineno}"
    if name == "STAGES":
        tree.twins["STAGES"].append(where)
    elif name in ("baseline_name", "reference_name"):
        tree.twins[name].append(where)
    elif (GIT_ENV_NAME.search(name) and rel != GIT_HELPER
          and isinstance(getattr(node, "value", None), ast.Dict | ast.Call)):
        tree.twins["git environments"].append(f"{where} {name}")


def mypy_files(after: Path) -> tuple[list[str], list[str]]:
    cfg = tomllib.loads((after / "pyproject.toml").read_text())["tool"]["mypy"]
    files = cfg["files"]
    return ([files] if isinstance(files, str) else list(files)), list(cfg.get("exclude") or [])


def run_mypy(tree: Tree, after: Path) -> list[str]:
    """mypy with the after checkout's configuration on `tree`; returns the command line run."""
    files, _ = mypy_files(after)
    present = [f for f in files if (tree.root / f).exists()]
    missing = [f for f in files if f not in present]
    with tempfile.TemporaryDirectory(prefix="house_mypy_") as cache:
        cmd = [sys.executable, "-m", "mypy", "--config-file", str((after / "pyproject.toml").resolve()),
               "--cache-dir", cache, *present]
        env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=tree.root, env=env, capture_output=True, text=True)
        took = time.monotonic() - t0
    out = (p.stdout + p.stderr).strip().splitlines()
    summary = out[-1] if out else f"(no output, rc {p.returncode})"
    m = re.match(r"Found (\d+) errors? in (\d+) files? \(checked (\d+) source files?\)", summary)
    ok = re.match(r"Success: no issues found in (\d+) source files?", summary)
    if m:
        tree.mypy = f"{m[1]} errors in {m[2]} files ({m[3]} checked)"
    elif ok:
        tree.mypy = f"0 errors ({ok[1]} checked)"
    else:
        tree.mypy = f"? ({summary[:80]})"
    if missing:
        tree.mypy += f"; not in this checkout: {', '.join(missing)}"
    return [f"cd {tree.root} && {' '.join(cmd[:4])} {cmd[4]} --cache-dir <fresh tmp> {' '.join(present)}"
            f"  # {took:.0f} s, rc {p.returncode}"]


def git_describe(root: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %cd %s",
                              "--date=format:%Y-%m-%d %H:%M"], capture_output=True, text=True, check=True)
        return out.stdout.strip()[:110]
    except (OSError, subprocess.CalledProcessError):
        return "(not a git checkout)"


def table(cols: list[tuple[str, Tree]]) -> list[str]:
    head = "| measure | " + " | ".join(label for label, _ in cols) + " |"
    lines = [head, "|---|" + "---|" * len(cols)]

    def row(name: str, cells: list[str]) -> None:
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    for ctor in (*CONSTRUCTORS[:3], "timing.compare", "EpisodeEnv"):
        label = f"{ctor}.__init__ parameters" if ctor != "timing.compare" else "timing.compare parameters"
        row(label, [", ".join(str(n) for _, n in t.widths.get(ctor, [])) or "-" for _, t in cols])
    for name in ("task", "sandbox"):
        row(f"`{name}` parameters without annotation / all", [f"{t.untyped[name][0]} / {t.untyped[name][2]}"
                                                            for _, t in cols])
        row(f"`{name}` parameters without annotation or `Any` / all",
            [f"{t.untyped[name][1]} / {t.untyped[name][2]}" for _, t in cols])
    names = {"git runners": f"functions running git via subprocess outside {GIT_HELPER}",
             "git environments": "git environment dicts outside the helper",
             "STAGES": "`STAGES` definitions", "classify": "`def classify`",
             "baseline_name": "`baseline_name` definitions", "reference_name": "`reference_name` definitions",
             "EnvSpec": "`class EnvSpec` in codegym"}
    for kind, label in names.items():
        row(label, [str(len(t.twins[kind])) for _, t in cols])
    row("modules with `__all__` / modules", [f"{t.all_modules} / {t.modules}" for _, t in cols])
    row("names in `__all__`", [str(t.all_names) for _, t in cols])
    row("`type: ignore` comments", [str(t.ignores) for _, t in cols])
    row("mypy (after's config)", [t.mypy for _, t in cols])
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, type=Path, help="checkout before the change")
    ap.add_argument("--after", required=True, type=Path, help="checkout after it (its [tool.mypy] is used)")
    ap.add_argument("--column", action="append", default=[], metavar="LABEL=DIR",
                    help="another checkout, a column before 'before' (repeatable)")
    ap.add_argument("--no-mypy", action="store_true", help="leave out the mypy row")
    ap.add_argument("--details", action="store_true", help="also list where each twin is")
    args = ap.parse_args(argv)
    cols: list[tuple[str, Path]] = []
    for spec in args.column:
        label, _, d = spec.partition("=")
        cols.append((label, Path(d)))
    cols += [("before", args.before), ("after", args.after)]
    trees = [(label, measure(d.resolve())) for label, d in cols]
    print(f"# house metrics, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for label, t in trees:
        print(f"# {label}: {t.root} = {git_describe(t.root)}")
    if not args.no_mypy:
        for label, t in trees:
            for line in run_mypy(t, args.after.resolve()):
                print(f"# mypy {label}: {line}")
    print()
    print("\n".join(table([(label, t) for label, t in trees])))
    if args.details:
        for label, t in trees:
            print(f"\n## {label}: where the twins are")
            for kind, where in t.twins.items():
                for w in where:
                    print(f"- {kind}: {w}")
            for ctor, found in t.widths.items():
                for rel, n in found:
                    print(f"- width {ctor}: {rel} {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
