"""Repository sources and patches of repo tasks (codegym.tasks.repo): the bundled suite,
directories, git URLs, bundles and tarballs as sources, `apply_patch`."""

from __future__ import annotations

import pytest
from _repo_tasks import CENTS, SUITE, TASKS, make_mini_repo, repo_task

from codegym.tasks.patches import SWEError, apply_patch, patch_paths
from codegym.tasks.repo import base_tree, repo_source, source_of, swe_data


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


def test_one_reading_of_a_repository_location(mini_repo):
    """Tasks, mined suites and ``tasks mine`` read a location by one rule (issue 31: they had
    three, and only the tasks' knew ``user@host:`` URLs and tarballs)."""
    root, base = mini_repo
    assert source_of("git@example.org:o/r.git", base, root).kind == "git"
    assert source_of("https://example.org/o/r", None, root).kind == "git"
    assert source_of("repo.bundle", base, root) == source_of(str(root / "repo.bundle"), base, root)
    assert source_of("repo.tar.gz", None, root).kind == "tarball"
    assert source_of("repo", base, root).kind == "dir"
    with pytest.raises(SWEError, match="mined 'nowhere' is neither"):
        source_of("nowhere", None, root, "mined")


def test_apply_patch_modifies_adds_and_deletes():
    files = {"a.txt": "one\ntwo\n", "gone.txt": "x\n"}
    patch = ("diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
             "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"
             "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"
             "@@ -1 +0,0 @@\n-x\n")
    assert apply_patch(files, patch) == {"a.txt": "one\nTWO\n", "new.txt": "hi\n", "gone.txt": None}
    with pytest.raises(SWEError, match="does not apply"):
        apply_patch({"a.txt": "other\n"}, patch)


def test_tarballs_extract_on_every_311_and_refuse_escapes(mini_repo, tmp_path, monkeypatch):
    """Python < 3.11.4 (Debian 12's 3.11.2) has no tarfile filter=: the same rule by hand."""
    import io
    import tarfile

    from codegym.tasks.repo import RepoSource, materialize
    root, _ = mini_repo
    want = base_tree(SUITE.get(CENTS)).files
    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    got = materialize(RepoSource("tarball", str(root / "repo.tar.gz")), tmp_path / "a")
    assert (got / "centsplit" / "money.py").read_text() == want["centsplit/money.py"]
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as tf:
        data = b"x"
        ti = tarfile.TarInfo("top/../../escaped.txt")
        ti.size = 1
        tf.addfile(ti, io.BytesIO(data))
    with pytest.raises(SWEError, match="unsafe member"):
        materialize(RepoSource("tarball", str(evil)), tmp_path / "b")
    assert not (tmp_path / "escaped.txt").exists()


def test_git_sources_give_files_as_stored_and_bare_mirrors_work(tmp_path):
    """export-subst / export-ignore (git archive's rewrites) do not apply: a patch made against
    the repository applies to the base tree; a bare mirror is a source as it is."""
    from _repo_tasks import git

    from codegym.tasks.repo import RepoSource, git_dir
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / ".gitattributes").write_text("_version.py export-subst\nhidden.txt export-ignore\n")
    (repo / "_version.py").write_text('version = "$Format:%H$"\n')
    (repo / "hidden.txt").write_text("kept\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c")
    sha = git(repo, "rev-parse", "HEAD").strip()
    git(tmp_path, "clone", "-q", "--bare", str(repo), "mirror.git")
    for src in (RepoSource("dir", str(repo), sha), RepoSource("dir", str(tmp_path / "mirror.git"), sha),
                RepoSource("dir", str(tmp_path / "mirror.git"))):
        files = base_tree(src).files
        assert files["_version.py"] == 'version = "$Format:%H$"\n' and files["hidden.txt"] == "kept\n"
    assert git_dir(RepoSource("dir", str(tmp_path / "mirror.git"))) == tmp_path / "mirror.git"


def test_env_spec_names_repository_version_and_packages():
    from codegym.tasks.repo import env_spec
    t = SUITE.get(CENTS)
    assert env_spec(t) is None                                   # stdlib unittest: the sandbox's Python
    data = t.to_yaml_dict()
    data["metadata"]["extra"]["swe"].update({"install": ["pytest>=8"], "repo": "acme/centsplit", "version": "1.0",
                                             "env": {"PYTHONPATH": "src"}, "patch": swe_data(t).patch,
                                             "test_patch": swe_data(t).test_patch})
    from codegym.tasks.schema import Task
    t2 = Task.model_validate(data)
    spec = env_spec(t2)
    assert (spec.repo, spec.version, spec.packages) == ("acme/centsplit", "1.0", ("pytest>=8",))
    assert swe_data(t2).env == {"PYTHONPATH": "src"}
    other = Task.model_validate({**data, "metadata": {**data["metadata"], "extra": {"swe": {
        **data["metadata"]["extra"]["swe"], "version": "2.0"}}}})
    assert env_spec(other).key != spec.key                       # the version is part of the key
