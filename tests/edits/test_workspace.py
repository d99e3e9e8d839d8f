"""Tests for codegym.edits.workspace: versions, diffs that real tools apply, undo,
copies, path validation, protected files, and the git backend."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from codegym.edits.stores import WorkspaceError, validate_path
from codegym.edits.textdiff import diff_opcodes, recompose_opcodes, split_lines, unified_diff
from codegym.edits.workspace import StepDiff, Workspace

HAS_GIT = shutil.which("git") is not None
HAS_PATCH = shutil.which("patch") is not None
needs_git = pytest.mark.skipif(not HAS_GIT, reason="git is not installed")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str, env: dict | None = None, check: bool = True) -> str:
    full = {**os.environ, **GIT_ENV, **(env or {})}
    proc = subprocess.run(["git", *args], cwd=cwd, env=full, capture_output=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {args} failed: {proc.stderr.decode()}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def write_tree(root: Path, files: dict[str, str]) -> None:
    for p, text in files.items():
        f = root / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(text.encode("utf-8", "surrogateescape"))


def read_tree(root: Path) -> dict[str, str]:
    out = {}
    for f in root.rglob("*"):
        if ".git" in f.relative_to(root).parts or not f.is_file():
            continue
        out[f.relative_to(root).as_posix()] = f.read_bytes().decode("utf-8", "surrogateescape")
    return out


def git_apply(tmp: Path, old: dict[str, str], patch: str) -> dict[str, str]:
    """Apply `patch` with `git apply` to a directory holding `old`."""
    d = tmp / f"apply-{random.randrange(10**9)}"
    d.mkdir()
    write_tree(d, old)
    (tmp / "p.diff").write_bytes(patch.encode("utf-8", "surrogateescape"))
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", str(tmp / "p.diff")], cwd=d,
                          capture_output=True, env={**os.environ, **GIT_ENV})
    assert proc.returncode == 0, proc.stderr.decode() + "\n" + patch
    return read_tree(d)


# ---------------------------------------------------------------------------
# Diff text
# ---------------------------------------------------------------------------

CASES = {
    "modify": ({"a.py": "x = 1\ny = 2\nz = 3\n"}, {"a.py": "x = 1\ny = 20\nz = 3\n"}),
    "add": ({"a.py": "x\n"}, {"a.py": "x\n", "pkg/new.py": "def f():\n    return 1\n"}),
    "delete": ({"a.py": "x\n", "b.py": "gone\nforever\n"}, {"a.py": "x\n"}),
    "rename-like": ({"old/name.py": "a\nb\nc\n"}, {"new/name.py": "a\nb\nc\n"}),
    "no-eol-old": ({"a": "1\n2"}, {"a": "1\n2\n"}),
    "no-eol-new": ({"a": "1\n2\n"}, {"a": "1\n2"}),
    "no-eol-both": ({"a": "1\n2\n3"}, {"a": "0\n2\n3"}),
    "no-eol-add": ({}, {"a": "only"}),
    "no-eol-delete": ({"a": "x\ny"}, {}),
    "crlf": ({"w.txt": "a\r\nb\r\nc\r\n"}, {"w.txt": "a\r\nB\r\nc\r\n"}),
    "empty-to-text": ({"e": ""}, {"e": "now\n"}),
    "add-empty-file": ({"a": "x\n"}, {"a": "x\n", "empty": ""}),
    "delete-empty-file": ({"a": "x\n", "empty": ""}, {"a": "x\n"}),
    "text-to-empty": ({"e": "was\n"}, {"e": ""}),
    "space and unicode path": ({"dir one/é.py": "α = 1\n"}, {"dir one/é.py": "α = 2\n"}),
    "many hunks": ({"m": "".join(f"{i}\n" for i in range(60))},
                   {"m": "".join(f"{i}\n" if i % 20 else f"changed {i}\n" for i in range(60))}),
}


@needs_git
@pytest.mark.parametrize("name", sorted(CASES))
def test_unified_diff_applies_with_git(tmp_path, name):
    old, new = CASES[name]
    patch = unified_diff(old, new)
    assert patch.count("diff --git ") == len({p for p in set(old) | set(new) if old.get(p) != new.get(p)})
    assert git_apply(tmp_path, old, patch) == new


@pytest.mark.skipif(not HAS_PATCH, reason="GNU patch is not installed")
@pytest.mark.parametrize("name", ["modify", "add", "delete", "no-eol-old", "no-eol-new", "no-eol-both", "crlf",
                                  "many hunks"])
def test_unified_diff_applies_with_patch(tmp_path, name):
    old, new = CASES[name]
    d = tmp_path / "tree"
    d.mkdir()
    write_tree(d, old)
    proc = subprocess.run(["patch", "-p1", "-s", "--no-backup-if-mismatch"], cwd=d,
                          input=unified_diff(old, new).encode(), capture_output=True)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert read_tree(d) == new


def test_diff_format_details():
    d = unified_diff({"a": "1\n2"}, {"a": "1\n3"})
    assert d == (
        "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n 1\n-2\n"
        "\\ No newline at end of file\n+3\n\\ No newline at end of file\n"
    )
    added = unified_diff({}, {"n.txt": "x\n"})
    assert added.splitlines()[:4] == ["diff --git a/n.txt b/n.txt", "new file mode 100644", "--- /dev/null",
                                      "+++ b/n.txt"]
    assert "@@ -0,0 +1 @@" in added
    deleted = unified_diff({"n.txt": "x\ny\n"}, {})
    assert "deleted file mode 100644\n--- a/n.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n" in deleted
    # git's quoting of unusual paths
    assert 'diff --git "a/tab\\there" "b/tab\\there"' in unified_diff({}, {"tab\there": "x\n"})
    assert unified_diff({"a": "same\n"}, {"a": "same\n"}) == ""
    # "\r" is content, not a line break
    assert split_lines("a\rb\nc") == ["a\rb", "c\n"]


# ---------------------------------------------------------------------------
# In-memory workspace
# ---------------------------------------------------------------------------


def test_versions_history_and_step_diffs():
    ws = Workspace.in_memory({"main.py": "print(1)\n", "lib/util.py": "X = 1\n"})
    assert (ws.version, ws.diff, ws.cumulative_diff()) == (0, "", "")
    s1 = ws.apply({"main.py": "print(2)\n", "lib/new.py": "Y = 2\n"})
    assert isinstance(s1, StepDiff) and s1.version == ws.version == 1
    assert [(c.path, c.status) for c in s1.changes] == [("lib/new.py", "added"), ("main.py", "modified")]
    assert ws.diff == s1.text == unified_diff({"main.py": "print(1)\n"},
                                              {"main.py": "print(2)\n", "lib/new.py": "Y = 2\n"})
    s2 = ws.apply({"lib/util.py": None})
    assert s2.changes[0].status == "deleted" and "deleted file mode" in ws.diff
    assert ws.list() == ["lib/new.py", "main.py"]
    assert ws.files == {"main.py": "print(2)\n", "lib/new.py": "Y = 2\n"}
    assert [s.version for s in ws.history] == [1, 2]
    assert ws.cumulative_diff() == unified_diff({"main.py": "print(1)\n", "lib/util.py": "X = 1\n"}, ws.files)
    assert s2.old_files == {"lib/util.py": "X = 1\n"} and s2.new_files == {}
    assert s1.to_dict()["changes"][0] == {"path": "lib/new.py", "status": "added"}


def test_noop_edit_makes_an_empty_version():
    ws = Workspace.in_memory({"a": "x\n"})
    step = ws.apply({"a": "x\n"})
    assert step.is_empty and ws.version == 1 and ws.diff == ""


def test_undo():
    start = {"a.py": "1\n", "b.py": "2\n"}
    ws = Workspace.in_memory(start)
    ws.apply({"a.py": "10\n"})
    first_diff = ws.diff
    ws.apply({"a.py": None, "c.py": "3\n", "b.py": "20"})
    undone = ws.undo()
    assert undone.version == 2 and ws.version == 1
    assert ws.files == {"a.py": "10\n", "b.py": "2\n"} and ws.diff == first_diff
    ws.undo()
    assert ws.files == start and ws.version == 0 and ws.cumulative_diff() == ""
    with pytest.raises(WorkspaceError, match="nothing to undo"):
        ws.undo()
    # the line cache must not serve stale lines after undo
    ws.apply({"a.py": "1\n2\n"})
    assert ws.diff == unified_diff({"a.py": "1\n"}, {"a.py": "1\n2\n"})


def test_copy_is_independent():
    ws = Workspace.in_memory({"a": "1\n"})
    ws.apply({"a": "2\n"})
    fork = ws.copy()
    fork.apply({"a": "3\n", "b": "new\n"})
    ws.apply({"a": "4\n"})
    assert ws.files == {"a": "4\n"} and fork.files == {"a": "3\n", "b": "new\n"}
    assert ws.version == fork.version == 2
    assert "+4" in ws.diff and "+3" in fork.diff
    fork.undo()
    fork.undo()
    assert fork.files == {"a": "1\n"} and ws.files == {"a": "4\n"}


def test_files_snapshot_does_not_alias():
    ws = Workspace.in_memory({"a": "1\n"})
    snap = ws.files
    snap["a"] = "mutated"
    assert ws.read("a") == "1\n"


def test_random_edit_sequences_compose(tmp_path):
    """Property check: step diffs chain, the cumulative diff spans them, undo
    walks back, and the texts apply with git."""
    rng = random.Random(7)
    words = ["alpha", "beta", "", "  indent", "}", "end", "x = 1", "\t tab"]

    def rand_text():
        lines = [rng.choice(words) for _ in range(rng.randrange(0, 12))]
        text = "\n".join(lines)
        return text + ("\n" if rng.random() < 0.7 and text else "")

    start = {f"f{i}.txt": rand_text() for i in range(3)}
    ws = Workspace.in_memory(start)
    states = [dict(start)]
    for _ in range(25):
        changes = {}
        for p in rng.sample([f"f{i}.txt" for i in range(5)], 2):
            if p in ws.list() and rng.random() < 0.2:
                changes[p] = None
            else:
                changes[p] = rand_text()
        ws.apply(changes)
        states.append(ws.files)
        assert unified_diff(states[-2], states[-1]) == ws.diff
    if HAS_GIT:
        assert git_apply(tmp_path, start, ws.cumulative_diff()) == ws.files
    for k in range(len(states) - 1, 0, -1):
        assert ws.files == states[k]
        ws.undo()
    assert ws.files == start


def test_write_to(tmp_path):
    ws = Workspace.in_memory({"a/b.txt": "x\r\n", "c": "no newline", "bin": b"\xff\xfe ok".decode("latin-1")})
    ws.apply({"d/e/f.py": "pass\n"})
    out = ws.write_to(tmp_path / "out")
    assert read_tree(out) == ws.files
    assert (out / "a/b.txt").read_bytes() == b"x\r\n"


def test_bytes_are_kept_faithfully():
    raw = b"ok \xff\xfe bytes\n"
    ws = Workspace.in_memory({"f": raw})
    assert ws.read("f").encode("utf-8", "surrogateescape") == raw


# ---------------------------------------------------------------------------
# Paths and protection
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad,msg", [
    ("/etc/passwd", "absolute"),
    ("../escape.py", r"'\.\.'"),
    ("a/../../b", r"'\.\.'"),
    (".git/config", r"\.git"),
    ("sub/.git/hooks/pre-commit", r"\.git"),
    (".GIT/config", r"\.git"),
    ("", "empty"),
    ("dir/", "directory"),
    (".", "root"),
    ("a\\b.py", "separator"),
    ("C:/x.py", "absolute"),
    ("nul\0byte", "NUL"),
])
def test_invalid_paths_are_refused(bad, msg):
    ws = Workspace.in_memory({"a.py": "1\n"})
    with pytest.raises(WorkspaceError, match=msg):
        ws.apply({"a.py": "2\n", bad: "x"})
    assert ws.version == 0 and ws.read("a.py") == "1\n"  # nothing applied


def test_path_normalisation_and_type_errors():
    assert validate_path("./src//main.py") == "src/main.py"
    with pytest.raises(WorkspaceError, match="string"):
        validate_path(["a"])  # type: ignore[arg-type]
    ws = Workspace.in_memory({"src/main.py": "1\n"})
    ws.apply({"./src//main.py": "2\n"})
    assert ws.read("src/main.py") == "2\n"
    with pytest.raises(WorkspaceError, match="given twice"):
        ws.apply({"src/main.py": "3\n", "./src/main.py": "4\n"})
    with pytest.raises(WorkspaceError, match="must be text"):
        ws.apply({"x": 3})  # type: ignore[dict-item]
    with pytest.raises(WorkspaceError, match="no such file"):
        ws.apply({"missing.py": None})
    with pytest.raises(WorkspaceError, match="no such file"):
        ws.read("missing.py")


def test_file_directory_clashes():
    ws = Workspace.in_memory({"pkg/mod.py": "x\n", "file": "y\n"})
    with pytest.raises(WorkspaceError, match="directory"):
        ws.apply({"pkg": "oops"})
    with pytest.raises(WorkspaceError, match="is a file"):
        ws.apply({"file/inner.py": "z"})
    with pytest.raises(WorkspaceError, match="file and a directory"):
        ws.apply({"new": "a", "new/b": "b"})
    assert ws.version == 0
    ws.apply({"pkg/mod.py": None})
    ws.apply({"pkg": "now a file\n"})  # the directory is gone, the name is free
    assert ws.read("pkg") == "now a file\n"


@pytest.mark.parametrize("pattern", ["tests/*", "tests", "tests/**", "*.yaml"])
def test_protected_paths(pattern):
    ws = Workspace.in_memory({"tests/test_a.py": "t\n", "task.yaml": "y\n", "main.py": "m\n"},
                             protected=[pattern])
    target = "task.yaml" if pattern == "*.yaml" else "tests/test_a.py"
    with pytest.raises(WorkspaceError, match="protected"):
        ws.apply({"main.py": "ok\n", target: "changed\n"})
    with pytest.raises(WorkspaceError, match="protected"):
        ws.apply({target: None})
    assert ws.version == 0 and ws.read(target) in ("t\n", "y\n")
    ws.apply({"main.py": "ok\n"})
    assert ws.read("main.py") == "ok\n"


def test_protected_new_files_too():
    ws = Workspace.in_memory({"main.py": "m\n"}, protected=["tests"])
    with pytest.raises(WorkspaceError, match="protected"):
        ws.apply({"tests/sneaky_conftest.py": "import os\n"})


# ---------------------------------------------------------------------------
# Git backend
# ---------------------------------------------------------------------------

STARTER = {
    "README.md": "# demo\n",
    "src/app.py": "def main():\n    return 1\n\n\nif __name__ == '__main__':\n    main()\n",
    "src/util.py": "A = 1\nB = 2\n",
    "data/no_eol.txt": "last line",
    ".gitignore": "*.log\n",
}


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "origin"
    root.mkdir()
    write_tree(root, STARTER)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def git_diff_from(root: Path, starter: str) -> str:
    """`git diff --no-renames <starter>` of the working tree, new files
    included (through a throwaway index, leaving the repo's index alone)."""
    env = {"GIT_INDEX_FILE": str(root / ".git" / "test-index")}
    git(root, "read-tree", starter, env=env)
    git(root, "add", "-A", env=env)
    out = git(root, "diff", "--cached", "--no-renames", starter, env=env)
    os.unlink(root / ".git" / "test-index")
    # ours has no "index" lines and no function context after "@@ ... @@"
    lines = []
    for line in out.splitlines(keepends=True):
        if line.startswith("index "):
            continue
        if line.startswith("@@ "):
            line = line[: line.index("@@", 2) + 2] + "\n"
        lines.append(line)
    return "".join(lines)


@needs_git
def test_git_backend_cumulative_diff_equals_git_diff(repo, tmp_path):
    ws = Workspace.from_directory(repo, copy_to=tmp_path / "work")
    assert ws.backend == "git" and ws.root == (tmp_path / "work").resolve()
    assert ws.starter_commit == git(repo, "rev-parse", "HEAD").strip()  # clean tree: HEAD
    ws.apply({"src/app.py": STARTER["src/app.py"].replace("return 1", "return 2")})
    ws.apply({"src/util.py": None, "src/new_mod.py": "def f():\n    pass\n"})
    ws.apply({"data/no_eol.txt": "last line\nand more", "README.md": "# demo\n\nmore\n"})
    ours = ws.cumulative_diff()
    assert ours == git_diff_from(ws.root, ws.starter_commit)
    # and it applies to the starter to give the current tree
    assert git_apply(tmp_path, STARTER, ours) == read_tree(ws.root)
    # the original directory was copied, not touched
    assert read_tree(repo) == STARTER and git(repo, "status", "--porcelain") == ""


@needs_git
def test_git_backend_sees_outside_changes_and_ignores(repo, tmp_path):
    ws = Workspace.from_directory(repo, copy_to=tmp_path / "work")
    ws.apply({"src/util.py": "A = 10\nB = 2\n"})
    # a tool run by the environment writes files: tracked-style ones count,
    # ignored ones do not (like `git diff`)
    (ws.root / "generated.py").write_text("X = 1\n")
    (ws.root / "run.log").write_text("noise\n")
    diff = ws.cumulative_diff()
    assert "b/generated.py" in diff and "run.log" not in diff
    assert diff == git_diff_from(ws.root, ws.starter_commit)
    assert "generated.py" in ws.list() and "run.log" not in ws.list()


@needs_git
def test_git_backend_undo_copy_write_to(repo, tmp_path):
    ws = Workspace.from_directory(repo, copy_to=tmp_path / "work")
    ws.apply({"src/app.py": "print('v1')\n", "pkg/deep/new.py": "N = 1\n"})
    ws.apply({"README.md": None})
    assert not (ws.root / "README.md").exists()
    assert ws.read("pkg/deep/new.py") == "N = 1\n"
    fork = ws.copy()
    try:
        assert fork.root != ws.root and fork.version == 2 and fork.files == ws.files
        fork.apply({"src/app.py": "print('fork')\n"})
        assert ws.read("src/app.py") == "print('v1')\n"
        ws.undo()
        ws.undo()
        assert read_tree(ws.root) == STARTER and ws.cumulative_diff() == ""
        assert not (ws.root / "pkg").exists()  # emptied directories are removed
        assert fork.read("src/app.py") == "print('fork')\n" and fork.version == 3
        out = fork.write_to(tmp_path / "materialised")
        assert read_tree(out) == fork.files and ".git" not in os.listdir(out)
        fork_root = fork.root
    finally:
        fork.close()
    assert not fork_root.exists()  # a copy owns its temporary directory


@needs_git
def test_a_copy_shares_the_files_but_never_writes_through_them(repo):
    """A copy hard-links the pristine tree's files (a large repository copies in a moment); an
    edit replaces the shared file, so the pristine tree and the other copies keep theirs, and
    the mode (an executable script) is kept."""
    (repo / "run.sh").write_text("echo a\n")
    os.chmod(repo / "run.sh", 0o755)
    pristine = Workspace.from_directory(repo)
    a, b = pristine.copy(), pristine.copy()
    try:
        assert os.stat(a.root / "src/app.py").st_ino == os.stat(repo / "src/app.py").st_ino
        a.apply({"src/app.py": "print('a')\n", "run.sh": "echo b\n"})
        assert (repo / "src/app.py").read_text() == STARTER["src/app.py"]
        assert b.read("src/app.py") == STARTER["src/app.py"] and (repo / "run.sh").read_text() == "echo a\n"
        assert a.read("src/app.py") == "print('a')\n" and os.stat(a.root / "run.sh").st_mode & 0o777 == 0o755
    finally:
        a.close()
        b.close()


@needs_git
def test_git_backend_dirty_repo_in_place(repo):
    (repo / "src/util.py").write_text("A = 'dirty'\nB = 2\n")
    (repo / "untracked.py").write_text("U = 1\n")
    head = git(repo, "rev-parse", "HEAD").strip()
    status = git(repo, "status", "--porcelain")
    ws = Workspace.from_directory(repo)  # in place
    # the starter records the dirty tree without moving HEAD or the index
    assert ws.starter_commit != head
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert git(repo, "status", "--porcelain") == status
    assert git(repo, "show", f"{ws.starter_commit}:untracked.py") == "U = 1\n"
    assert ws.cumulative_diff() == ""
    ws.apply({"untracked.py": "U = 2\n"})
    assert ws.cumulative_diff() == unified_diff({"untracked.py": "U = 1\n"}, {"untracked.py": "U = 2\n"})
    ws.close()


@needs_git
def test_git_backend_plain_directory(tmp_path):
    d = tmp_path / "plain"
    d.mkdir()
    write_tree(d, {"main.c": "int main(){return 0;}\n"})
    ws = Workspace.from_directory(d)
    assert (d / ".git").is_dir() and ws.list() == ["main.c"]
    ws.apply({"main.c": "int main(){return 1;}\n"})
    assert ws.cumulative_diff() == git_diff_from(d, ws.starter_commit)
    ws.close()


@needs_git
def test_git_backend_refuses_escapes_and_protected(repo, tmp_path):
    ws = Workspace.from_directory(repo, copy_to=tmp_path / "work", protected=["data/*"])
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ws.root / "link")
    (outside / "secret.txt").write_text("s3cret")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.apply({"link/pwned.txt": "x"})
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.read("link/secret.txt")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        ws.apply({"link/secret.txt": None})
    os.symlink(outside / "secret.txt", ws.root / "alias.txt")
    with pytest.raises(WorkspaceError, match="out of the workspace"):
        ws.read("alias.txt")
    with pytest.raises(WorkspaceError, match=r"\.git"):
        ws.apply({".git/hooks/post-checkout": "#!/bin/sh\n"})
    with pytest.raises(WorkspaceError, match="protected"):
        ws.apply({"data/no_eol.txt": "x"})
    with pytest.raises(WorkspaceError, match="directory"):
        ws.apply({"src": "x"})
    assert [f.name for f in outside.iterdir()] == ["secret.txt"] and ws.version == 0
    # a link out of the workspace is not part of it: not listed in files, not materialised
    assert "alias.txt" not in ws.files
    out = ws.write_to(tmp_path / "out")
    assert not (out / "alias.txt").exists() and "s3cret" not in str(read_tree(out))
    ws.close()


@needs_git
def test_git_backend_write_to_keeps_executable_bit(repo, tmp_path):
    script = repo / "run.sh"
    script.write_text("#!/bin/sh\necho ok\n")
    script.chmod(0o755)
    ws = Workspace.from_directory(repo, copy_to=tmp_path / "work")
    ws.apply({"run.sh": "#!/bin/sh\necho changed\n"})  # editing keeps the mode too
    out = ws.write_to(tmp_path / "out")
    assert os.access(out / "run.sh", os.X_OK) and os.access(ws.root / "run.sh", os.X_OK)
    ws.close()


@needs_git
def test_git_backend_empty_repository(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    git(d, "init", "-q")
    ws = Workspace.from_directory(d)
    assert ws.list() == []
    ws.apply({"a.py": "x = 1\n"})
    assert ws.cumulative_diff() == git_diff_from(d, ws.starter_commit)
    ws.close()


def test_from_directory_errors(tmp_path):
    with pytest.raises(WorkspaceError, match="not a directory"):
        Workspace.from_directory(tmp_path / "missing")
    (tmp_path / "src").mkdir()
    (tmp_path / "dst").mkdir()
    (tmp_path / "dst" / "x").write_text("occupied")
    with pytest.raises(WorkspaceError, match="not empty"):
        Workspace.from_directory(tmp_path / "src", copy_to=tmp_path / "dst")


def _check_opcodes(a: list[str], b: list[str], ops) -> None:
    """`ops` (non-equal blocks) is a valid diff a -> b: ordered, and the lines
    between blocks are equal on both sides."""
    i = j = 0
    for tag, i1, i2, j1, j2 in ops:
        assert i1 >= i and j1 >= j and i1 - i == j1 - j, (ops, i, j)
        assert a[i:i1] == b[j:j1]
        assert (tag == "insert") == (i1 == i2) and (tag == "delete") == (j1 == j2)
        i, j = i2, j2
    assert len(a) - i == len(b) - j and a[i:] == b[j:]


def test_recomposed_opcodes_stay_valid_over_many_local_edits():
    rng = random.Random(11)
    pool = ["}", "", "return x", "x += 1", "end"] + [f"line {k}" for k in range(40)]
    a = [rng.choice(pool) for _ in range(300)]
    b = list(a)
    ops = diff_opcodes(a, b)
    for _ in range(400):
        new = list(b)
        for _ in range(rng.randrange(1, 3)):  # one or two local edits per step
            at = rng.randrange(0, len(new) + 1)
            cut = rng.randrange(0, 4)
            new[at:at + cut] = [rng.choice(pool + ["edited"]) for _ in range(rng.randrange(0, 4))]
        step = diff_opcodes(b, new)
        if step:
            ops = recompose_opcodes(a, b, new, ops, step)
        b = new
        _check_opcodes(a, b, ops)
    _check_opcodes(a, b, diff_opcodes(a, b))


def test_incremental_cumulative_diff_applies_at_every_step(tmp_path):
    rng = random.Random(5)
    start = "".join(f"def f{k}(x):\n    y = x + {k}\n    return y\n\n" for k in range(60))
    ws = Workspace.in_memory({"m.py": start, "other.txt": "keep\n"})
    for step in range(30):
        lines = ws.read("m.py").split("\n")
        at = rng.randrange(0, len(lines))
        if rng.random() < 0.3 and len(lines) > 5:
            del lines[at:at + 2]
        else:
            lines.insert(at, f"    # note {step}")
        ws.apply({"m.py": "\n".join(lines)})
        cum = ws.cumulative_diff()
        assert cum.startswith("diff --git a/m.py b/m.py\n") and "other.txt" not in cum
        if HAS_GIT and step % 5 == 4:
            assert git_apply(tmp_path, {"m.py": start, "other.txt": "keep\n"}, cum) == ws.files
    ws.apply({"m.py": start})  # back to the starter: no diff at all
    assert ws.cumulative_diff() == ""
    ws.undo()
    if HAS_GIT:
        assert git_apply(tmp_path, {"m.py": start, "other.txt": "keep\n"}, ws.cumulative_diff()) == ws.files


def test_cumulative_diff_reused_hunk_bodies_equal_a_fresh_render():
    """Hunk bodies carried between renders of the cumulative diff (see `render_diff`)
    give exactly the text a render from scratch of the same opcodes gives."""
    from codegym.edits.textdiff import git_path, render_diff

    rng = random.Random(17)
    pool = ["    y = x + 1", "    return y", "", "}", "    # same", "end"]
    start = "".join(f"def f{k}(x):\n    y = x + {k}\n    return y\n\n" for k in range(80))
    ws = Workspace.in_memory({"m.py": start})
    reused = 0
    for step in range(300):
        lines = ws.read("m.py").split("\n")
        at = rng.randrange(0, len(lines))
        r = rng.random()
        if r < 0.25 and len(lines) > 5:
            del lines[at:at + rng.randrange(1, 4)]
        elif r < 0.5:
            lines[at:at + 1] = [rng.choice(pool)]
        else:
            lines[at:at] = [rng.choice(pool + [f"    # note {step}"]) for _ in range(rng.randrange(1, 3))]
        ws.apply({"m.py": "\n".join(lines)})
        cum = ws.cumulative_diff()
        entry = ws._cum_cache.get("m.py")
        if entry is None or not entry.opcodes:
            continue
        before = len(entry.bodies)
        qa, qb = git_path("a/", "m.py"), git_path("b/", "m.py")
        fresh = render_diff([f"diff --git {qa} {qb}\n"], qa, qb, start, entry.text, entry.starter_lines,
                        entry.lines, entry.opcodes, context=3)
        assert cum == fresh, f"step {step}"
        reused += before
    assert reused > 1000  # bodies were there to reuse
