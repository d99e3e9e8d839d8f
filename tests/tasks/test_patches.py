"""Patches and trees from strangers (issue 28 item 2): a patch that leaves the tree or makes a
link is refused before anything is written; no file is read through a link out of the tree;
an incomplete repository is one clear error. Host files stand in for /etc/shadow."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from _repo_tasks import commit_files, git

from codegym.tasks.patches import SWEError, apply_patch, check_patch, check_relpath
from codegym.tasks.repo import RepoSource, base_tree, materialize

SECRET = "host secret 4711\n"


def _new_file(path: str, text: str, mode: str = "100644") -> str:
    lines = text.splitlines()
    body = "".join(f"+{x}\n" for x in lines)
    return (f"diff --git a/{path} b/{path}\nnew file mode {mode}\nindex 0000000..1111111\n--- /dev/null\n"
            f"+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}")


@pytest.fixture
def secret(tmp_path):
    p = tmp_path / "host" / "shadow"
    p.parent.mkdir()
    p.write_text(SECRET)
    return p


def test_a_patch_that_makes_a_link_is_refused(secret):
    link = _new_file("leak.txt", str(secret), mode="120000")
    with pytest.raises(SWEError, match="makes 'leak.txt' a symbolic link"):
        apply_patch({}, link)
    mode_change = "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 120000\n"
    with pytest.raises(SWEError, match="symbolic link"):
        check_patch(mode_change)
    sub = _new_file("vendor/lib", "Subproject commit " + "a" * 40, mode="160000")
    with pytest.raises(SWEError, match="a submodule"):
        apply_patch({}, sub)


@pytest.mark.parametrize("path, why", [
    ("../../escaped-{u}.txt", "leaves the tree"), ("/tmp/escaped-{u}.txt", "absolute"),
    (".git/hooks/post-checkout", "inside .git"), ("a/../../escaped-{u}.txt", "leaves the tree"),
])
def test_a_patch_that_leaves_the_tree_writes_nothing(path, why, tmp_path):
    u = uuid.uuid4().hex
    path = path.format(u=u)
    modify = (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-old\n+new\n")
    before = set(Path("/tmp").iterdir())
    with pytest.raises(SWEError, match=why):
        apply_patch({path: "old\n"}, modify)     # the old code wrote `path` before git apply refused
    with pytest.raises(SWEError, match=why):
        apply_patch({}, _new_file(path, "x"))
    assert not any(u in p.name for p in set(Path("/tmp").iterdir()) - before)
    assert not list(tmp_path.parent.glob(f"*{u}*"))


def test_renames_are_checked_too():
    rename = "diff --git a/a.py b/../x.py\nsimilarity index 100%\nrename from a.py\nrename to ../x.py\n"
    with pytest.raises(SWEError, match="leaves the tree"):
        check_patch(rename)
    assert check_relpath("src/pkg/a.py") is None and check_relpath("a/.GIT/x") == "a path inside .git"


def test_no_file_is_read_through_a_link_out_of_the_tree(tmp_path, secret, monkeypatch):
    """A repository holding links to a host file (absolute and relative) and one inside the tree:
    the outside ones are not written out, the inside one is kept, no text holds the secret."""
    monkeypatch.setenv("CODEGYM_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("plain\n")
    os.symlink(str(secret), repo / "abs_leak")
    os.symlink(os.path.relpath(secret, repo), repo / "rel_leak")
    os.symlink("a.txt", repo / "inside")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "links")
    head = git(repo, "rev-parse", "HEAD").strip()
    out = materialize(RepoSource("dir", str(repo), head), tmp_path / "m")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "inside"]
    assert os.readlink(out / "inside") == "a.txt"
    tree = base_tree(RepoSource("dir", str(repo), head))
    assert tree.files == {"a.txt": "plain\n", "inside": "plain\n"}
    # a directory source (no commit) copies the links inside the tree only
    tree = base_tree(RepoSource("dir", str(repo)))
    assert sorted(p.name for p in tree.root.iterdir() if p.name != ".git") == ["a.txt", "inside"]
    assert SECRET not in "".join(tree.files.values()) and "abs_leak" not in tree.files
    # a patch over a link out of the tree: the link's target is not read
    with pytest.raises(SWEError):
        apply_patch(tree.files, "diff --git a/abs_leak b/abs_leak\n--- a/abs_leak\n+++ b/abs_leak\n"
                                "@@ -1 +1 @@\n-host secret 4711\n+x\n")


def test_an_incomplete_repository_is_one_clear_error(tmp_path):
    repo = tmp_path / "repo"
    head = commit_files(repo, {"a.txt": "a\n", "b.txt": "b\n"})
    blob = git(repo, "rev-parse", "HEAD:b.txt").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(SWEError, match=rf"object {blob} \(b.txt\) is missing from"):   # was an IndexError
        materialize(RepoSource("dir", str(repo), head), tmp_path / "m")
    with pytest.raises(SWEError, match="is not a commit id"):
        materialize(RepoSource("dir", str(repo), "--output=/tmp/x"), tmp_path / "n")
