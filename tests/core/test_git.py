"""Git on untrusted repositories (issue 28 item 1): a repository whose configuration, attributes
and hooks name programs makes codegym run none of them, and what codegym reads from it is the
repository's real content. Every program the repository names appends to a sentinel file."""

from __future__ import annotations

from pathlib import Path

import pytest
from _repo_tasks import commit_files
from _repo_tasks import git as plain_git

from codegym.core.git import GitError, git, git_text
from codegym.edits.workspace import Workspace
from codegym.importers.mine import candidate_commits
from codegym.importers.minepack import pack_suite
from codegym.importers.repodeps import repo_environment
from codegym.tasks.repo import RepoSource, base_tree, materialize

HOOKS = ["applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
         "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
         "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
         "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "post-index-change",
         "fsmonitor-watchman"]


@pytest.fixture
def evil(tmp_path):
    """(repository, sentinel, [base, fix] commits): a repository whose every git setting that can
    name a program names one that writes the sentinel (and prints garbage)."""
    sentinel = tmp_path / "SENTINEL"
    prog = tmp_path / "evil.sh"
    prog.write_text(f"#!/bin/sh\necho \"ran $0 $*\" >> {sentinel}\necho GARBAGE\nexit 0\n")
    prog.chmod(0o755)
    repo = tmp_path / "repo"
    test_one = "from pkg import add\n\n\ndef test_one():\n    assert add(1, 0) == 1\n"
    base = commit_files(repo, {"pkg/__init__.py": "def add(a, b):\n    return a - b\n", "tests/test_add.py": test_one,
                               "pyproject.toml": '[project]\nname = "pkg"\ndependencies = ["attrs"]\n',
                               ".gitattributes": "* diff=tc filter=ev merge=mg\n"}, "base")
    fix = commit_files(repo, {"pkg/__init__.py": "def add(a, b):\n    return a + b\n",
                              "tests/test_add.py": test_one + "\n\ndef test_two():\n    assert add(1, 1) == 2\n"},
                       "fix add")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for h in HOOKS:
        for d in (hooks, repo / ".git" / "hooks"):
            (d / h).write_text(prog.read_text())
            (d / h).chmod(0o755)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* diff=tc filter=ev merge=mg\n")
    for key, value in [("diff.external", prog), ("diff.tc.textconv", prog), ("diff.tc.command", prog),
                       ("filter.ev.clean", prog), ("filter.ev.smudge", prog), ("filter.ev.process", prog),
                       ("filter.ev.required", "true"), ("merge.mg.driver", prog), ("core.fsmonitor", prog),
                       ("core.hooksPath", hooks), ("core.pager", prog), ("pager.log", prog),
                       ("log.showSignature", "true"), ("gpg.program", prog), ("credential.helper", f"!{prog}"),
                       ("core.askPass", prog), ("core.sshCommand", prog), ("core.alternateRefsCommand", prog),
                       ("core.attributesFile", repo / ".git" / "info" / "attributes")]:
        plain_git(repo, "config", key, str(value))
    assert not sentinel.exists()
    return repo, sentinel, [base, fix]


def _ran(sentinel: Path) -> str:
    return sentinel.read_text() if sentinel.exists() else ""


def test_diffs_logs_and_reads_run_nothing_and_read_the_real_content(evil):
    repo, sentinel, (base, fix) = evil
    diff = git_text(["diff", base, fix], repo)
    assert "+    return a + b" in diff and "GARBAGE" not in diff
    assert git_text(["log", "-p", "-1", "--format=%s"], repo).startswith("fix add")
    assert git_text(["show", f"{fix}:pkg/__init__.py"], repo) == "def add(a, b):\n    return a + b\n"
    assert _ran(sentinel) == ""


def test_mining_reads_real_patches_and_runs_nothing(evil):
    repo, sentinel, (base, fix) = evil
    [cand] = list(candidate_commits(repo / ".git"))
    assert cand.commit == fix and cand.parent == base
    assert "+    return a + b" in cand.gold_patch and "+def test_two():" in cand.test_patch
    assert "GARBAGE" not in cand.gold_patch + cand.test_patch
    env = repo_environment(repo / ".git", fix)
    assert "attrs" in env["install"]
    assert _ran(sentinel) == ""


def test_base_trees_workspaces_and_packing_run_nothing(evil, tmp_path, monkeypatch):
    repo, sentinel, (base, fix) = evil
    monkeypatch.setenv("CODEGYM_CACHE", str(tmp_path / "cache"))
    out = materialize(RepoSource("dir", str(repo), base), tmp_path / "m")
    assert (out / "pkg" / "__init__.py").read_text() == "def add(a, b):\n    return a - b\n"
    tree = base_tree(RepoSource("dir", str(repo), fix))
    assert tree.files["pkg/__init__.py"] == "def add(a, b):\n    return a + b\n"
    # the workspace on the repository itself: `git add -A` with a clean filter selected by
    # .git/info/attributes and .gitattributes
    ws = Workspace.from_directory(repo)
    assert ws.read("pkg/__init__.py") == "def add(a, b):\n    return a + b\n"
    ws.apply({"pkg/__init__.py": "def add(a, b):\n    return b + a\n"})
    assert "-    return a + b\n+    return b + a" in ws.cumulative_diff()
    assert "pkg/__init__.py" in ws.list()
    copy = ws.copy()
    copy.close()
    ws.close()
    # packing a suite whose task points at the repository
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "t.yaml").write_text(f"id: s/t\nkind: repo\nrepo: {{url: {repo}, commit: {base}}}\n"
                                  "metadata: {extra: {swe: {repo: o/n}}}\n")
    res = pack_suite(suite)
    assert not res.dropped and (suite / "repos" / "o__n.bundle").is_file()
    assert _ran(sentinel) == ""


def test_the_users_own_git_configuration_is_not_read(evil, tmp_path, monkeypatch):
    """System and global configuration (and a stray GIT_* variable) cannot name programs either."""
    repo, sentinel, (base, fix) = evil
    glob = tmp_path / "global.cfg"
    glob.write_text(f"[diff]\n\texternal = {tmp_path / 'evil.sh'}\n[core]\n\tpager = {tmp_path / 'evil.sh'}\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(glob.read_text())
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(glob))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(tmp_path / "evil.sh"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(tmp_path / "evil.sh"))
    assert "+    return a + b" in git_text(["diff", base, fix], repo)
    assert _ran(sentinel) == ""


def test_a_pinned_worktree_and_errors(evil, tmp_path):
    repo, sentinel, _ = evil
    plain_git(repo, "config", "core.worktree", "/")   # would make `git add -A` add the whole file system
    ws = Workspace.from_directory(repo)
    assert set(ws.list()) == {".gitattributes", "pkg/__init__.py", "pyproject.toml", "tests/test_add.py"}
    ws.close()
    with pytest.raises(GitError, match=r"git rev-parse nope failed: .*unknown revision"):
        git(["rev-parse", "nope"], repo)
    with pytest.raises(ValueError, match="did not finish"):
        git(["hash-object", "--stdin"], repo, input=b"x", timeout=0)
    assert _ran(sentinel) == ""
