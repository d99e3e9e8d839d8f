"""Fuzzing the edit parser (every format) and the unified-diff applier.

Properties:

- `parse_action` never raises, on arbitrary text and on actions mixing every format
  (code blocks, SEARCH/REPLACE, unified diffs, tool calls, submit) with hostile paths
  (``..``, absolute, ``.git``, NUL, backslashes, symlinks out of the workspace);
- every error names where: its first line points at a block, hunk, tool call, line or
  path of the action (or says no edit was found at all);
- applied to a git workspace on disk (holding symlinks that leave it), no file is ever
  written outside the workspace, whatever the action;
- the diff applier inverts the differ: the unified diff `codegym.edits.textdiff`
  makes from A to B, parsed and applied to A, gives B exactly; a damaged diff is an
  error naming its hunk, never an exception.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from _fuzz import budget
from hypothesis import given
from hypothesis import strategies as st

from codegym.edits.parse import parse_action
from codegym.edits.stores import WorkspaceError
from codegym.edits.textdiff import unified_diff
from codegym.edits.workspace import Workspace

FILES = {"main.py": "def f(x):\n    return x + 1\n\nprint(f(1))\n", "pkg/util.py": "A = 1\nB = 2\nC = 3\n"}
PATHS = ["main.py", "pkg/util.py", "new.py", "pkg/new/deep.py", "../escape.py", "/etc/passwd", "a/../../x.py",
         ".git/config", ".git/hooks/pre-commit", "link/x.py", "link", "flink", "pkg/", "", "main.py\x00x",
         "C:/x.py", "a\\b.py", "~/.bashrc", "./main.py", "a//b.py", "pkg/../main.py", " main.py", "-"]
#: the first line of an error must point somewhere (or say that nothing was found)
WHERE = ("line", "block", "hunk", "tool call", "diff", "path", "file", "no edit", "too long", "empty", "fence",
         "main.py", "action", "submit", "json", "argument", "character")

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_lines = st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=20),
                  max_size=5)


@st.composite
def blocks(draw) -> str:
    path = draw(st.sampled_from(PATHS))
    body = "\n".join(draw(_lines))
    kind = draw(st.sampled_from(["fence", "fence_attr", "search", "diff", "tool", "tool_tag", "submit", "junk"]))
    if kind == "fence":
        return f"```python {path}\n{body}\n```"
    if kind == "fence_attr":
        return f"```python path={path}\n{body}\n```"
    if kind == "search":
        old = draw(st.sampled_from(["    return x + 1", "A = 1", "nope", "", body]))
        return f"{path}\n<<<<<<< SEARCH\n{old}\n=======\n{body}\n>>>>>>> REPLACE"
    if kind == "diff":
        minus = draw(st.sampled_from(["-    return x + 1", "-A = 1", "-zzz", " A = 1"]))
        n, m = draw(st.integers(0, 4)), draw(st.integers(0, 4))
        plus = "\n".join("+" + x for x in draw(_lines))
        return f"--- a/{path}\n+++ b/{path}\n@@ -{n},{m} +{m},{n} @@\n{minus}\n{plus}"
    if kind in ("tool", "tool_tag"):
        name = draw(st.sampled_from(["str_replace", "insert", "create", "write_file", "view_file", "delete"]))
        args = {"path": path, "old_str": draw(st.sampled_from(["A = 1", "x", ""])), "new_str": body,
                "insert_line": draw(st.integers(-2, 9)), "content": body}
        call = json.dumps({"name": name, "arguments": args})
        return f"<tool_call>{call}</tool_call>" if kind == "tool_tag" else call
    if kind == "submit":
        return "submit"
    return draw(_text)


@st.composite
def actions(draw) -> str:
    parts = draw(st.lists(blocks(), min_size=1, max_size=3))
    glue = draw(st.sampled_from(["\n", "\n\n", "\nSome words.\n", "\n```\n"]))
    return glue.join(parts)


def _check_error(error: str) -> None:
    first = error.splitlines()[0].lower() if error.strip() else ""
    assert first, f"an empty error: {error!r}"
    assert any(w in first for w in WHERE), f"the error does not say where: {first!r}"


# --------------------------------------------------------------------------- the parser


@budget(150)
@given(st.text(max_size=300))
def test_parse_any_text(text):
    r = parse_action(text, FILES, "main.py")
    if r.error is not None:
        _check_error(r.error)
        assert not r.changes


@budget(150)
@given(actions())
def test_parse_mixed_formats_with_hostile_paths(action):
    r = parse_action(action, FILES, "main.py")
    if r.error is not None:
        _check_error(r.error)
        assert not r.changes
        return
    for path in r.changes:  # (.git and symlinks are the workspace's to refuse: see below)
        assert not path.startswith("/") and ".." not in path.split("/") and "\0" not in path, path
    for span in r.edit_spans:  # spans point into the action text
        assert 0 <= span.start <= span.end <= len(action)


# --------------------------------------------------------------------------- on disk


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file() and not p.is_symlink():
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def disk():
    """A git workspace whose tree holds symlinks out of it, next to an 'outside' folder."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = Path(tempfile.mkdtemp(prefix="codegym-fuzz-ws-"))
    (root / "outside").mkdir()
    (root / "outside" / "f.txt").write_text("outside\n")
    src = root / "ws"
    (src / "pkg").mkdir(parents=True)
    for rel, text in FILES.items():
        (src / rel).write_text(text)
    os.symlink("../outside", src / "link")
    os.symlink("../outside/f.txt", src / "flink")
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    ws = Workspace.from_directory(src)
    yield root, ws
    ws.close()
    shutil.rmtree(root, ignore_errors=True)


@budget(60)
@given(actions())
def test_nothing_is_written_outside_the_workspace(disk, action):
    root, ws = disk
    outside = _tree_digest(root / "outside")
    around = sorted(p.name for p in root.iterdir())
    r = parse_action(action, ws.files, "main.py")
    if r.ok and r.changes:
        try:
            ws.apply(r.changes)
        except WorkspaceError as e:
            assert str(e).strip()
    assert _tree_digest(root / "outside") == outside, "a file outside the workspace changed"
    assert sorted(p.name for p in root.iterdir()) == around, "a file appeared next to the workspace"
    for p in (root / "ws").rglob("*"):
        assert os.path.realpath(p).startswith(str(root / "ws")) or p.is_symlink(), p


# --------------------------------------------------------------------------- the diff applier

_file_lines = st.lists(st.sampled_from(["a", "b", "c", "", "    x = 1", "return y", "}", "\t", "a b"]), max_size=12)


@st.composite
def file_pairs(draw):
    """(old files, new files): random edits of random line files (created, deleted, changed)."""
    names = ["main.py", "pkg/m.py", "t.txt"]
    old = {n: "\n".join(draw(_file_lines)) + draw(st.sampled_from(["\n", ""])) for n in names
           if draw(st.booleans()) or n == "main.py"}
    new = {}
    for n in names:
        if draw(st.integers(0, 5)) == 0:
            continue  # deleted (or never there)
        lines = (old.get(n) or "").split("\n")
        for _ in range(draw(st.integers(0, 4))):
            i = draw(st.integers(0, len(lines)))
            op = draw(st.sampled_from(["ins", "del", "rep"]))
            if op == "ins":
                lines.insert(i, draw(st.sampled_from(["new", "z = 2", "", "  indented"])))
            elif lines and i < len(lines):
                if op == "del":
                    del lines[i]
                else:
                    lines[i] = lines[i] + "!"
        new[n] = "\n".join(lines)
    if "main.py" not in new:
        new["main.py"] = old["main.py"]
    return old, new


@budget(150)
@given(file_pairs())
def test_applying_our_own_diff_gives_the_new_files(pair):
    old, new = pair
    diff = unified_diff(old, new)
    if not diff.strip():
        assert {k: v for k, v in old.items()} == new or set(old) != set(new)
        return
    r = parse_action(f"```diff\n{diff}```", old, "main.py")
    assert r.error is None, (r.error, diff)
    got = dict(old)
    for path, text in r.changes.items():
        if text is None:
            got.pop(path, None)
        else:
            got[path] = text
    assert got == new, diff


@budget(120)
@given(file_pairs(), st.randoms(use_true_random=False))
def test_a_damaged_diff_is_an_error_naming_its_hunk(pair, rnd):
    old, new = pair
    lines = unified_diff(old, new).split("\n")
    if len(lines) < 4:
        return
    for _ in range(rnd.randint(1, 3)):  # drop, duplicate or alter a line
        i = rnd.randrange(len(lines))
        op = rnd.choice(["drop", "dup", "alter", "header"])
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "alter":
            lines[i] = (lines[i][:1] or " ") + "damaged"
        else:
            lines[i] = f"@@ -{rnd.randint(0, 99)},{rnd.randint(0, 9)} +{rnd.randint(0, 99)} @@"
        if not lines:
            return
    r = parse_action("```diff\n" + "\n".join(lines) + "```", old, "main.py")
    if r.error is not None:
        _check_error(r.error)
