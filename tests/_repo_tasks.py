"""Shared by the repository-task tests (tests/tasks/test_repo.py, tests/judge/test_repo_grading.py,
tests/importers/test_swebench.py, tests/envs/test_swe_env.py): the bundled ``swe`` suite and a
two-commit git repository made from one of its tasks."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from codegym import load_suite
from codegym.tasks.repo import reference_files, swe_data
from codegym.tasks.schema import Task

SUITE = load_suite("swe")
TASKS = list(SUITE)
IDS = [t.id for t in TASKS]
CENTS = "swe/centsplit-lost-cent"


#: the tests' own git: no system or global configuration, a fixed identity
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def git(cwd, *args):
    """Run git in `cwd` to build a test repository (stdout; raises on failure)."""
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True,
                          capture_output=True, text=True).stdout


def commit_files(repo: Path, files: dict, message: str = "c") -> str:
    """Write `files` ({path: text}) into `repo` (a git repository made when missing), commit
    everything and return the commit's id."""
    repo.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    if not (repo / ".git").exists():
        git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD").strip()


def overlay(task, changes: dict) -> dict:
    """Gold files (or the base's) with `changes` over them."""
    return {**{p: c for p, c in reference_files(task).items()}, **changes}


def make_mini_repo(root: Path):
    """A two-commit git repository (the base is the first commit) plus its bundle and tarball."""
    repo = root / "repo"
    shutil.copytree(Path(SUITE.get(CENTS).source_path).parent / "centsplit-lost-cent" / "repo", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "LATER.md").write_text("a later commit\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "later")
    git(repo, "bundle", "create", str(root / "repo.bundle"), "--all")
    with tarfile.open(root / "repo.tar.gz", "w:gz") as tf:
        tf.add(repo, arcname="centsplit-1.0", filter=lambda ti: None if "/.git" in ti.name else ti)
    return root, base


def repo_task(url: str, commit: str | None = None) -> Task:
    """The centsplit task on another repository source."""
    t = SUITE.get(CENTS)
    data = t.to_yaml_dict()
    data["repo"] = {"url": url, "commit": commit}
    data["metadata"]["extra"]["swe"] = {"patch": swe_data(t).patch, "test_patch": swe_data(t).test_patch}
    return Task.model_validate(data)
