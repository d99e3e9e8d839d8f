"""Repository sources and patches of repo tasks (codegym.tasks.repo): the bundled suite,
directories, git URLs, bundles and tarballs as sources, `apply_patch`."""

from __future__ import annotations

import pytest
from _repo_tasks import CENTS, SUITE, TASKS, make_mini_repo, repo_task

from codegym.tasks.repo import SWEError, apply_patch, base_tree, patch_paths, repo_source, swe_data


def test_bundled_suite_has_original_repositories_with_patches():
    assert len(TASKS) >= 5
    for t in TASKS:
        d = swe_data(t)
        assert t.kind == "repo" and t.metadata.source == "original"
        assert repo_source(t).kind == "dir"
        assert d.patch and d.test_patch and d.fail_to_pass and d.pass_to_pass
        assert not set(d.fail_to_pass) & set(d.pass_to_pass)
        modified, added, _ = patch_paths(d.patch)
        assert not any(p.startswith("tests/") for p in modified | added), "gold patches fix code, not tests"
        assert all(p.startswith("tests/") for p in set().union(*patch_paths(d.test_patch)[:2]))
        base = base_tree(t).files
        assert not any(p.endswith((".yaml", ".yml")) for p in base), "a .yaml in a repo would be read as a task"


@pytest.fixture(scope="module")
def mini_repo(tmp_path_factory):
    """A two-commit git repository (the base is the first commit) plus its bundle and tarball;
    clones are cached in a temporary CODEGYM_CACHE while the module's tests use it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CODEGYM_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield make_mini_repo(tmp_path_factory.mktemp("src"))


def test_repository_sources_give_the_same_base(mini_repo):
    root, base = mini_repo
    plain = base_tree(SUITE.get(CENTS))
    for url, commit, kind in [(f"file://{root}/repo", base, "git"), (str(root / "repo.bundle"), base, "bundle"),
                              (str(root / "repo"), base, "dir")]:
        t = repo_task(url, commit)
        assert repo_source(t).kind == kind
        assert base_tree(t).digest == plain.digest, url
    tree = base_tree(repo_task(str(root / "repo.tar.gz")))
    assert repo_source(repo_task(str(root / "repo.tar.gz"))).kind == "tarball"
    assert set(tree.files) == set(plain.files) | {"LATER.md"}      # the tarball is the later state
    head = base_tree(repo_task(str(root / "repo.bundle")))  # no commit: HEAD
    assert "LATER.md" in head.files
    with pytest.raises(SWEError):
        repo_source(repo_task(str(root / "nowhere")))


def test_apply_patch_modifies_adds_and_deletes():
    files = {"a.txt": "one\ntwo\n", "gone.txt": "x\n"}
    patch = ("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
             "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"
             "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"
             "@@ -1 +0,0 @@\n-x\n")
    assert apply_patch(files, patch) == {"a.txt": "one\nTWO\n", "new.txt": "hi\n", "gone.txt": None}
    with pytest.raises(SWEError, match="does not apply"):
        apply_patch({"a.txt": "other\n"}, patch)
