"""The house rules, checked on the code: folders are layers that import only downward.

Reads every module of the package with `ast` (nothing is imported) and checks:
no import cycle (imports under ``if TYPE_CHECKING:``, for annotations only, aside), no
import from a lower layer to a higher one (those included), imports of codegym
modules at the top of a module (a package's lazy ``__getattr__`` aside), no ``_private``
name imported from another package (folder), and no module over 700 lines. The layer order is
`LAYERS`; docs/architecture.md explains it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "codegym"

#: lowest first; a module may import its own layer and the layers before it
LAYERS = ["core", "sandbox", "timing", "tasks", "edits", "judge", "wrappers", "envs", "agents",
          "rollout", "evaluation", "importers", "integrations", "cli"]
#: the package's front door: may import any layer, imported by none
FACADE = {"codegym", "codegym.__main__"}
MAX_LINES = 700


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = p.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


MODULES = _modules()


def _resolve(name: str) -> str:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(name: str, path: Path):
    """(target module, imported name or "", line, inside a function) of each codegym import."""
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"

    def walk(node, in_func):
        for child in ast.iter_child_nodes(node):
            f = in_func or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.split(".")[0] == "codegym":
                        yield _resolve(a.name), "", child.lineno, f
            elif isinstance(child, ast.ImportFrom):
                mod = child.module or ""
                if child.level:
                    base = name if is_pkg else name.rpartition(".")[0]
                    for _ in range(child.level - 1):
                        base = base.rpartition(".")[0]
                    mod = f"{base}.{mod}" if mod else base
                if mod.split(".")[0] == "codegym":
                    for a in child.names:
                        full = f"{mod}.{a.name}"
                        yield (full if full in MODULES else _resolve(mod)), a.name, child.lineno, f
            yield from walk(child, f)

    yield from walk(tree, False)


EDGES = {name: list(_imports(name, path)) for name, path in MODULES.items()}


def _typing_only_lines(path: Path) -> set[int]:
    """The lines of imports under ``if TYPE_CHECKING:`` (never run: no cycle at import time)."""
    out: set[int] = set()
    for n in ast.walk(ast.parse(path.read_text())):
        if isinstance(n, ast.If) and ast.unparse(n.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            out.update(c.lineno for b in n.body for c in ast.walk(b) if isinstance(c, (ast.Import, ast.ImportFrom)))
    return out


TYPING_ONLY = {name: _typing_only_lines(path) for name, path in MODULES.items()}


def _layer(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_module_is_in_a_layer():
    stray = sorted(n for n in MODULES if n not in FACADE and _layer(n) is None)
    assert not stray, f"modules outside the layer folders {LAYERS}: {stray}"


def test_imports_go_downward_only():
    bad = []
    for src, edges in EDGES.items():
        ls = _layer(src)
        for tgt, _, line, _ in edges:
            if src in FACADE or tgt == src:
                continue
            lt = _layer(tgt)
            if tgt in FACADE or lt is None or ls is None or lt > ls:
                bad.append(f"{MODULES[src].relative_to(PKG.parent)}:{line}: {src} -> {tgt}")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_no_import_cycle():
    graph = {s: {t for t, _, line, _ in e if t != s and line not in TYPING_ONLY[s]} for s, e in EDGES.items()}
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_codegym_imports_are_at_the_top():
    late = [f"{MODULES[s].relative_to(PKG.parent)}:{line}: {t}"
            for s, e in EDGES.items() for t, _, line, in_func in e
            if in_func and not (MODULES[s].name == "__init__.py" or s in FACADE)]
    assert not late, "codegym imports inside functions (hidden cycles?):\n" + "\n".join(late)


def _package(name: str) -> str:
    """The package (folder) a module belongs to: itself for a package's ``__init__``."""
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def test_no_private_name_crosses_packages():
    """A ``_name`` stays in its folder; a helper other packages need is a plain name (importable
    within the library without being public: the public names are docs/architecture.md's list)."""
    bad = [f"{MODULES[s].relative_to(PKG.parent)}:{line}: {n} from {t}"
           for s, e in EDGES.items() for t, n, line, _ in e
           if n.startswith("_") and not n.startswith("__") and _package(t) != _package(s)]
    assert not bad, "private names imported from another package:\n" + "\n".join(bad)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name):
    n = len(MODULES[name].read_text().splitlines())
    assert n <= MAX_LINES, f"{MODULES[name].relative_to(PKG.parent)} has {n} lines (max {MAX_LINES})"
