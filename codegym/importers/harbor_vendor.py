"""The judge an exported Harbor task carries: codegym's stdlib-only judge modules, copied.

`vendor_judge(dest, languages)` writes ``dest/codegym/...`` so that
``tests/codegym_verify.py`` (`codegym.importers.harbor_verifier`) runs with a bare
``python3`` in the task's container:

- `VENDORED`: modules copied byte for byte from the installed package (the test kinds,
  checkers, drivers, verdict rule, run records and verdict rules of executions);
- `SUBSETS`: modules whose stdlib-only parts are copied (their definitions, selected by
  name from the real source) without the rest (YAML, pydantic, tree-sitter, backends):
  the language table (read from ``languages.json``, written for the task's languages),
  the judge's pre-run checks (`source_verdict`; a language other than Python is checked
  by its build), the `Case` record, the checker factory, and the judge's table of kinds
  (`PROGRAM_KIND_RUNNERS`, with the split of a stdio task's cases over workers, which a
  process sandbox never does): the verifier dispatches a kind as the judge does;
- empty package ``__init__`` files, and a `codegym.sandbox` that has no backends.

Nothing here is rewritten by hand, so a change of the judge reaches exported tasks the
next time they are exported; `tests/importers/test_harbor.py` runs the result with
``python3 -I`` and in the task's container.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import sys
from collections.abc import Iterable
from pathlib import Path

from codegym.core.languages import get_language

PACKAGE_ROOT = Path(__file__).resolve().parents[1]   # the installed codegym/ folder

VENDORED = ("core/limits.py", "judge/checkers/base.py", "judge/checkers/text.py", "judge/checkers/values.py",
            "judge/protocol.py", "judge/report.py", "judge/harness.py", "judge/kinds/common.py",
            "judge/kinds/stdio.py", "judge/kinds/function.py", "judge/kinds/script.py", "judge/logs/julia.py",
            "sandbox/types.py", "sandbox/launcher.py", "sandbox/classify.py")
EMPTY = ("__init__.py", "core/__init__.py", "judge/__init__.py", "judge/kinds/__init__.py",
         "judge/logs/__init__.py")

_LANG_TAIL = '''

# --- the exported task's language table (languages.json, written by codegym's Harbor exporter)
_TABLE = json.loads(Path(__file__).with_name("languages.json").read_text(encoding="utf-8"))
_TUPLES = ("run", "aliases", "extensions", "compile", "artifacts", "version_cmd", "tools")


def get_language(name: str) -> LanguageSpec:
    key = str(name).lower()
    for spec in _TABLE.values():
        if key == spec["name"] or key in spec.get("aliases", ()):
            return LanguageSpec(**{k: (tuple(v) if k in _TUPLES and v is not None else v) for k, v in spec.items()})
    raise UnknownLanguageError(f"unknown language {name!r} (this task knows {', '.join(_TABLE)})")


def list_languages() -> list[LanguageSpec]:
    return [get_language(n) for n in _TABLE]
'''

_RUN_TAIL = '''

def precheck(language, files, main_file):  # the judge's tree-sitter check: not in an exported task
    return None  # (a program in another language than Python is checked by its build)
'''

#: module -> (names kept from the real source, text added after them)
SUBSETS: dict[str, tuple[tuple[str, ...], str]] = {
    "core/languages.py": (("log", "DEFAULT_PYTHON", "UnknownLanguageError", "python_path", "_checked_python",
                           "LanguageSpec", "SANDBOX_PATH", "_which", "_probe"), _LANG_TAIL),
    "judge/run.py": (("_COMMENT_LINE", "_BLOCK", "is_blank_code", "python_compile_error", "checker_tag",
                      "source_verdict"), _RUN_TAIL),
    "judge/testgen.py": (("TestgenError", "Case"), ""),
    "judge/checkers/__init__.py": (("_SINGLETONS", "make_checker"), ""),
    "judge/chunks.py": (("splits", "chunk_bounds", "_Stoppable", "run_chunk", "_gave_up", "run_split"), ""),
    "judge/kinds/table.py": (("KindResult", "RunKind", "KindRunner", "build_failed", "_compiled", "_run_stdio",
                              "_run_function", "_run_script", "PROGRAM_KIND_RUNNERS"), ""),
}

_SANDBOX_INIT = '''"""codegym.sandbox in an exported Harbor task: the records only (the verifier runs processes)."""
from codegym.core.limits import COMPILE_LIMITS, Limits  # noqa: F401
from codegym.sandbox.types import STATUSES, Build, ExecResult, RunRequest, Sandbox  # noqa: F401


def make_sandbox(*args, **kwargs):
    raise RuntimeError("the exported verifier has no sandbox backends")
'''


def _is_kept_import(node: ast.Import | ast.ImportFrom) -> bool:
    """Stdlib imports, codegym imports of fully copied modules, and ``from`` imports of
    names only that a subset keeps (`SUBSETS`)."""
    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
    for n in names:
        top = n.split(".")[0]
        if top == "codegym":
            rel = n.replace(".", "/")[len("codegym/"):] + ".py"
            if rel in VENDORED:
                continue
            subset = SUBSETS.get(rel) or SUBSETS.get(rel[:-len(".py")] + "/__init__.py")
            if (subset is None or not isinstance(node, ast.ImportFrom)
                    or any(a.name not in subset[0] for a in node.names)):
                return False
        elif top != "__future__" and top not in sys.stdlib_module_names:
            return False
    return True


def _targets(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def subset_source(source: str, keep: Iterable[str], tail: str = "") -> str:
    """The docstring, the kept imports and the top-level definitions named in `keep`."""
    keep = set(keep)
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    out: list[str] = []
    found: set[str] = set()
    for i, node in enumerate(tree.body):
        first = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
        seg = "".join(lines[first - 1:node.end_lineno])
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            out.append(seg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if _is_kept_import(node):
                out.append(seg)
        elif _targets(node) & keep:
            out.append(seg)
            found |= _targets(node)
    missing = keep - found
    if missing:
        raise RuntimeError(f"the judge's source changed: {sorted(missing)} not found (update harbor_vendor.SUBSETS)")
    return "\n".join(out) + "\n" + tail


#: the special-judge checker runs programs in a sandbox: exported tasks never have one, and the
#: vendored judge (``judge/kinds/stdio.py``, ``judge/checkers/__init__.py``) imports this stand-in
#: the judge's kinds name `Task` in their annotations only (the exported task is JSON)
_TASK_STUB = ('"""codegym.tasks.schema in an exported Harbor task: the name annotations use."""\n\n\n'
              'class Task:\n    """Stand-in: an exported task is its JSON file, not a codegym Task."""\n')

_PROGRAM_STUB = ('"""codegym.judge.checkers.program in an exported Harbor task: no program checkers."""\n\n\n'
                 'class ProgramChecker:  # exported tasks have no program checkers\n'
                 '    def __init__(self, *args, **kwargs):\n'
                 '        raise ValueError("program checkers are not exported")\n')


def _checkers_init(source: str) -> str:
    text = subset_source(source, SUBSETS["judge/checkers/__init__.py"][0])
    return text + "\nfrom codegym.judge.checkers.program import ProgramChecker  # noqa: E402,F401\n"


def vendor_judge(dest: Path, languages: Iterable[str]) -> list[Path]:
    """Write the judge package under ``dest/codegym``; returns the files written."""
    pkg = dest / "codegym"
    written: list[Path] = []

    def put(rel: str, text: str) -> None:
        p = pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        written.append(p)

    for rel in VENDORED:
        put(rel, (PACKAGE_ROOT / rel).read_text(encoding="utf-8"))
    for drv in sorted((PACKAGE_ROOT / "judge" / "drivers").glob("*.py")):
        put(f"judge/drivers/{drv.name}", drv.read_text(encoding="utf-8"))
    for rel in EMPTY:
        put(rel, "")
    put("sandbox/__init__.py", _SANDBOX_INIT)
    put("judge/checkers/program.py", _PROGRAM_STUB)
    put("tasks/__init__.py", "")
    put("tasks/schema.py", _TASK_STUB)
    for rel, (keep, tail) in SUBSETS.items():
        src = (PACKAGE_ROOT / rel).read_text(encoding="utf-8")
        put(rel, _checkers_init(src) if rel == "judge/checkers/__init__.py" else subset_source(src, keep, tail))
    table = {}
    for name in dict.fromkeys(["python", *languages]):
        d = dataclasses.asdict(get_language(name))
        d["env"] = dict(d.get("env") or {})
        table[d["name"]] = d
    put("core/languages.json", json.dumps(table, indent=1, sort_keys=True))
    return written
