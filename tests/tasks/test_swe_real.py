"""The bundled ``swe_real`` suite: SWE tasks mined from real repositories (codegym tasks mine),
stored as one git bundle per repository. Every task was verified when mined (gold resolves,
no-op and test-only patches do not); here the suite's shape is checked, one task is graded,
and ``CODEGYM_SLOW=1`` grades them all again."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from codegym import load_suite
from codegym.importers.mine import verify
from codegym.importers.repodeps import PERMISSIVE
from codegym.sandbox import make_sandbox
from codegym.tasks.patches import patch_paths
from codegym.tasks.repo import base_tree, repo_source, swe_data

SUITE = load_suite("swe_real")
TASKS = list(SUITE)


@pytest.fixture(scope="module")
def sb():
    return make_sandbox("local")


def test_at_least_20_mined_tasks_from_3_repositories_stored_as_bundles():
    assert len(TASKS) >= 20
    repos = Counter(swe_data(t).extra["repo"] for t in TASKS)
    assert len(repos) >= 3, repos
    folder = Path(TASKS[0].source_path).parent
    bundles = sorted((folder / "repos").glob("*.bundle"))
    assert len(bundles) == len(repos)
    assert sum(b.stat().st_size for b in bundles) < 8 << 20          # compact: the needed trees only
    for t in TASKS:
        d = swe_data(t)
        assert t.metadata.source == "mined" and t.metadata.licence in PERMISSIVE
        assert repo_source(t).kind == "bundle" and Path(repo_source(t).location).parent.name == "repos"
        assert d.fail_to_pass and not set(d.fail_to_pass) & set(d.pass_to_pass)
        assert d.extra["upstream"]["commit"] and d.install and d.install[0].startswith("pytest")
        verified = d.extra["mined"]["verified"]
        assert verified["gold"] == "FULL" and all(v != "FULL" for k, v in verified.items() if k != "gold")
        assert not any(p.startswith(("tests/", "test/")) for p in set().union(*patch_paths(d.patch)[:2]))


def test_base_trees_come_out_of_the_bundles():
    """One base per repository here (every base was checked when packed; CODEGYM_SLOW=1 reads all)."""
    firsts = {swe_data(t).extra["repo"]: t for t in reversed(TASKS)}
    for t in (TASKS if os.environ.get("CODEGYM_SLOW") == "1" else firsts.values()):
        tree = base_tree(t)
        assert tree.files and "LICENSE" in " ".join(tree.files)      # the licence travels with the code
        assert any(p.endswith(".py") for p in tree.files)


@pytest.mark.parametrize("repo", sorted({swe_data(t).extra["repo"] for t in TASKS})[:1])
def test_one_task_grades_gold_resolved_noop_not(repo, sb):
    task = next(t for t in TASKS if swe_data(t).extra["repo"] == repo)
    v = verify(task, sb)
    assert v["gold"] == "FULL" and v["noop"] != "FULL" and v["tests_only"] != "FULL" and v["tests_gutted"] != "FULL"


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("CODEGYM_SLOW") != "1", reason="4 grades per task: set CODEGYM_SLOW=1")
@pytest.mark.parametrize("task_id", [t.id for t in TASKS])
def test_every_task_verifies_again(task_id, sb):
    v = verify(SUITE.get(task_id), sb)
    assert v["gold"] == "FULL", v
    assert all(s != "FULL" for k, s in v.items() if k != "gold"), v


@pytest.mark.docker
def test_the_docker_backend_runs_the_tests_in_codegyms_own_per_repository_image():
    """The same environment key builds codegym/env:<key> locally (FROM codegym/python:3.11, no
    pull, no network); SWE-bench's published images are never named."""
    pytest.importorskip("docker")
    from codegym.importers.swebench import grade
    from codegym.tasks.repo import reference_files
    try:
        sb = make_sandbox("docker")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no Docker engine: {e}")
    try:
        task = TASKS[0]
        g = grade(task, reference_files(task), sb)
        assert g.resolution.status == "FULL", g.report.message
    finally:
        sb.close()
