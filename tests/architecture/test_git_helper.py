"""One git helper: every git command of the package goes through `codegym.core.git` (where a
repository's configuration is neutralised, issue 28). Reads the modules with `ast`."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "codegym"
HELPER = PKG / "core" / "git.py"
_RUNNERS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput", "system",
            "execv", "execvp", "execvpe", "execl", "execlp", "spawnv", "spawnvp", "posix_spawn", "posix_spawnp"}


#: what only the helper sets: its neutralising variables (named anywhere) ...
_ENV_COPIES = {"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_ATTR_NOSYSTEM",
               "GIT_NO_REPLACE_OBJECTS", "GIT_LITERAL_PATHSPECS"}
#: ... and the commit identity (`GIT_IDENTITY`: reading it is fine, setting one of one's own is not)
_IDENTITY = {"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"}


def _sets_identity(node: ast.AST) -> str | None:
    keys = node.keys if isinstance(node, ast.Dict) else \
        [node.slice] if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) else []
    return next((k.value for k in keys if isinstance(k, ast.Constant) and k.value in _IDENTITY), None)


def _is_git(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and \
        (node.value == "git" or node.value.endswith("/git") or node.value.startswith("git "))


def _offences(path: Path, root: Path = PKG.parent) -> list[str]:
    tree = ast.parse(path.read_text())
    rel = path.relative_to(root)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts and _is_git(node.elts[0]):
            bad.append(f"{rel}:{node.lineno}: an argv that starts with git")
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in _RUNNERS and node.args and _is_git(node.args[0]):
                bad.append(f"{rel}:{node.lineno}: {name}(git ...)")
            elif name == "which" and node.args and _is_git(node.args[0]):
                bad.append(f"{rel}:{node.lineno}: which(git): a git binary of its own")
        elif isinstance(node, ast.Import) and any(a.name == "git" or a.name.startswith("git.") for a in node.names):
            bad.append(f"{rel}:{node.lineno}: import git (GitPython runs git with its own environment)")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "git" and not node.level:
            bad.append(f"{rel}:{node.lineno}: from git import ...")
        elif isinstance(node, ast.Constant) and node.value in _ENV_COPIES:
            bad.append(f"{rel}:{node.lineno}: a copy of the git environment ({node.value})")
        elif _sets_identity(node):
            bad.append(f"{rel}:{node.lineno}: a git identity of its own ({_sets_identity(node)})")

        elif isinstance(node, ast.FunctionDef) and node.name in ("_git", "git"):
            bad.append(f"{rel}:{node.lineno}: a git helper of its own ({node.name})")
    return bad


def test_no_git_outside_the_helper():
    bad = [b for p in sorted(PKG.rglob("*.py")) if p != HELPER for b in _offences(p)]
    assert not bad, "git run outside codegym/core/git.py:\n" + "\n".join(bad)


def test_the_check_sees_the_old_forms(tmp_path):
    """The check itself: each way git used to be run is caught."""
    src = tmp_path / "m.py"
    src.write_text('import shutil, subprocess\nimport git\n_E = {"GIT_CONFIG_NOSYSTEM": "1"}\n'
                   'def _git(*a):\n    return subprocess.run(["git", *a])\n'
                   'subprocess.check_output(("git", "log"))\n'
                   '_ID = {"GIT_AUTHOR_NAME": "me"}\nEXE = shutil.which("git")\n'
                   'from codegym.core.git import GIT_IDENTITY\nWHO = GIT_IDENTITY["GIT_AUTHOR_NAME"]\n')
    found = _offences(src, tmp_path)
    assert len(found) == 7, found
