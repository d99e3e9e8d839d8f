"""No caller probes a sandbox: what a backend can do is declared on `Sandbox`.

`codegym.sandbox.types.Sandbox` declares every ability some backends add (``workers``,
``root``, ``task_images`` with ``for_task`` / ``image_from_dockerfile``, ``remote`` with
``remote_call`` / ``remote_async``, ``split_min_cases`` with ``map_chunks``, ``closed``)
with the default of a backend without it, so code asks ``sandbox.remote`` instead of
``hasattr(sandbox, "remote_call")``. Checked with `ast` over the package: no ``hasattr`` /
``getattr`` whose object is named like a sandbox (``sandbox``, ``sb``, ``self.sandbox``,
``task_sandbox`` ...) or whose attribute is one of those abilities.
"""

from __future__ import annotations

import ast
from pathlib import Path

from codegym.sandbox.types import Sandbox

PKG = Path(__file__).resolve().parents[2] / "codegym"

#: the abilities only some backends had before they were declared on `Sandbox`
ABILITIES = {"for_task", "image_from_dockerfile", "remote_call", "remote_async", "map_chunks",
             "split_min_cases", "task_images", "remote", "run_many"}


def _names_a_sandbox(node: ast.expr) -> bool:
    last = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    last = last.lower().lstrip("_")
    return last in ("sandbox", "sb") or last.endswith(("_sandbox", "_sb"))


def _probes() -> list[str]:
    out = []
    for p in sorted(PKG.rglob("*.py")):
        for n in ast.walk(ast.parse(p.read_text())):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id in ("hasattr", "getattr") and len(n.args) >= 2):
                continue
            attr = n.args[1].value if isinstance(n.args[1], ast.Constant) else None
            if _names_a_sandbox(n.args[0]) or attr in ABILITIES:
                out.append(f"{p.relative_to(PKG.parent)}:{n.lineno}: {ast.unparse(n)}")
    return out


def test_no_hasattr_or_getattr_on_a_sandbox():
    bad = _probes()
    assert not bad, ("sandbox abilities are declared on codegym.sandbox.types.Sandbox: ask them "
                     "(sandbox.remote, sandbox.task_images ...) instead of probing:\n" + "\n".join(bad))


def test_the_abilities_are_declared_with_defaults():
    for name in ABILITIES | {"workers", "root", "closed", "isolation"}:
        assert hasattr(Sandbox, name), name
    assert (Sandbox.workers, Sandbox.root, Sandbox.task_images, Sandbox.remote, Sandbox.split_min_cases) \
        == (1, None, False, False, None)
