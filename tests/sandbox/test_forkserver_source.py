"""The fork server's parts join into one program that needs only the standard library."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from codegym.sandbox.forkserver.source import PARTS, part_lines, server_source


def _top_level_names(lines: list[str]) -> set[str]:
    names: set[str] = set()
    for node in ast.parse("\n".join(lines)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_the_joined_program_imports_no_part_and_starts_with_its_future_import():
    src = server_source().decode()
    compile(src, "codegym-forkserver", "exec")
    assert src.startswith("from __future__ import annotations\n")
    assert src.count("from __future__") == 1
    assert "from codegym" not in src and "import codegym" not in src


def test_no_two_parts_define_the_same_name():
    seen: dict[str, str] = {}
    for part in PARTS:
        for name in _top_level_names(part_lines(part)):
            assert name not in seen, f"{name} is defined in {seen.get(name)} and {part}"
            seen[name] = part


def test_the_program_runs_without_codegym_on_the_path(tmp_path):
    """Run as a slot runs it (``python3 -I -S``): it answers the ready frame, then exits at EOF."""
    path = tmp_path / "forkserver.py"
    path.write_bytes(server_source())
    box = tmp_path / "box"
    box.mkdir()
    cfg = json.dumps({"box": str(box), "wipe": []})
    p = subprocess.run([sys.executable, "-I", "-S", str(path), cfg], input=b"", capture_output=True,
                       timeout=60, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout[:4] == b"CGFS" and b'"op":"ready"' in p.stdout
