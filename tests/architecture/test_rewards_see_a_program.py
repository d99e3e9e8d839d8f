"""Rewards see a program, not the env (issue 31): no reward wrapper reaches into the env.

A wrapper of `codegym/wrappers/` works on the step's outputs and on the `FinalProgram` the
env hands it (`EpisodeEnv.program`: the typed report, the files, the `Bench` that judges
and times them); it asks the env for anything else through Gymnasium's
``get_wrapper_attr`` (`codegym.wrappers.base.env_attr`). Checked with `ast` on the code
(docstring examples, which are a user's code, aside): no ``.unwrapped`` and no ``.sandbox``,
``.workspace`` or ``.task`` read from ``self.env`` / ``env``.
"""

from __future__ import annotations

import ast
from pathlib import Path

WRAPPERS = Path(__file__).resolve().parents[2] / "codegym" / "wrappers"
#: what a wrapper must not read from an env (the program's task is `FinalProgram.task`)
ENV_INNARDS = {"unwrapped", "sandbox", "workspace", "task"}


def _is_env(node: ast.AST) -> bool:
    """``env`` or ``self.env`` (or ``something.env``)."""
    return (isinstance(node, ast.Name) and node.id == "env") or (isinstance(node, ast.Attribute) and node.attr == "env")


def _reaches(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and (node.attr == "unwrapped" or (node.attr in ENV_INNARDS
                                                                             and _is_env(node.value))):
            out.append(f"{path.name}:{node.lineno}: .{node.attr}")
    return out


def test_no_wrapper_touches_the_envs_innards():
    found = [hit for p in sorted(WRAPPERS.glob("*.py")) for hit in _reaches(p)]
    assert not found, "a reward wrapper reaches into the env (use the FinalProgram it is handed):\n" + "\n".join(found)


def test_the_check_sees_a_reach(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(self):\n    return self.env.unwrapped.sandbox, self.env.task\n")
    assert len(_reaches(bad)) == 2
