"""SWE-bench import that never half-fails (issue 27 item 5, issue 28 items 2-3): a bad record
is one skip line and the rest imports; the suite appears whole or not at all; packing keeps the
base trees only; shallow mirrors work; records cannot lead out of the mirror template; the
command line's --install adds to a record's list."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from _repo_tasks import CENTS, SUITE, git

from codegym import load_suite
from codegym.importers.minepack import pack_suite
from codegym.importers.swebench import import_swebench, install_for, swebench_task
from codegym.tasks.repo import base_tree, swe_data


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """/mirrors/acme+centsplit: base (the centsplit task's tree), a 400 KB blob added then
    removed, a later base, and a commit whose new file's object is missing."""
    monkeypatch.setenv("CODEGYM_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "mirrors" / "acme+centsplit"
    src = Path(SUITE.get(CENTS).source_path).parent / "centsplit-lost-cent" / "repo"
    shutil.copytree(src, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    commits = {"base": git(repo, "rev-parse", "HEAD").strip()}
    (repo / "big.bin").write_bytes(os.urandom(400_000))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "big")
    (repo / "big.bin").unlink()
    (repo / "LATER.md").write_text("later\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "later")
    commits["later"] = git(repo, "rev-parse", "HEAD").strip()
    (repo / "gone.txt").write_text("this object goes missing\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "broken")
    commits["broken"] = git(repo, "rev-parse", "HEAD").strip()
    blob = git(repo, "rev-parse", "HEAD:gone.txt").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    return tmp_path / "mirrors", commits


def _record(iid: str, base: str, **kw) -> dict:
    d = swe_data(SUITE.get(CENTS))
    rec = {"instance_id": iid, "repo": "acme/centsplit", "base_commit": base, "patch": d.patch,
           "test_patch": d.test_patch, "problem_statement": "fix it", "FAIL_TO_PASS": list(d.fail_to_pass),
           "PASS_TO_PASS": list(d.pass_to_pass), "version": "1.0"}
    rec.update(kw)
    return rec


def test_bad_records_are_one_line_each_and_the_rest_imports(mirror, tmp_path):
    root, c = mirror
    sentinel = tmp_path / "SENTINEL"
    deep = "[" * 100_000 + "]" * 100_000
    link = ("diff --git a/leak.txt b/leak.txt\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n"
            "+++ b/leak.txt\n@@ -0,0 +1 @@\n+/etc/shadow\n")
    records = [
        _record("acme__centsplit-1", c["base"]),
        _record("acme__centsplit-2", c["later"]),
        _record("acme__centsplit-3", c["broken"]),                            # a blob of its tree is missing
        _record("acme__centsplit-4", c["base"], environment_setup_commit="d" * 40),
        _record("acme__centsplit-5", c["base"], repo="acme/../../etc"),
        _record("acme__centsplit-6", c["base"], repo="/etc/passwd"),
        _record("acme__centsplit-7", f"--upload-pack=touch {sentinel}"),
        _record("acme__centsplit-8", c["base"], FAIL_TO_PASS=deep),
        _record("acme__centsplit-9", c["base"], patch=link),
        _record("acme__centsplit-1", c["later"]),                             # the same task name again
        _record("acme__centsplit-10", "e" * 40),
    ]
    src = tmp_path / "records.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in records) + "\n" + deep + "\n")
    out = tmp_path / "suite"
    rep = import_swebench(src, out, repo_url=f"{root}/{{repo_plus}}")
    assert rep.written == ["suite/acme__centsplit-1", "suite/acme__centsplit-2"]
    why = dict(rep.skipped)
    assert len(rep.skipped) == 10 and all("\n" not in w and "Traceback" not in w for w in why.values())
    assert why["acme__centsplit-3"].startswith(f"the files of base commit {c['broken']} cannot be read from")
    assert why["line 4 (acme__centsplit-4)"] == \
        f"acme__centsplit-4: environment commit {'d' * 40} is not in the repository {root}/acme+centsplit"
    assert "is not owner/name" in why["line 5 (acme__centsplit-5)"]
    assert "is not owner/name" in why["line 6 (acme__centsplit-6)"]
    assert "is not a commit id" in why["line 7 (acme__centsplit-7)"]
    assert "nested too deeply" in why["line 8 (acme__centsplit-8)"]
    assert "symbolic link" in why["line 9 (acme__centsplit-9)"]
    assert "a second record of the task name acme__centsplit-1 (first: line 1)" in why["line 10 (acme__centsplit-1)"]
    assert why["line 11 (acme__centsplit-10)"].endswith(f"base commit {'e' * 40} is not in the repository "
                                                       f"{root}/acme+centsplit")
    assert why["line 12"] == "JSON nested too deeply (more than 100 levels)"
    assert not sentinel.exists()
    suite = load_suite(out)
    assert sorted(t.id for t in suite) == rep.written
    assert sorted(p.name for p in out.iterdir()) == ["acme__centsplit-1", "acme__centsplit-1.yaml",
                                                     "acme__centsplit-2", "acme__centsplit-2.yaml", "repos",
                                                     "suite.yaml"]
    # packing kept the two base trees, not the history (the 400 KB blob between them)
    bundle = out / "repos" / "acme__centsplit.bundle"
    assert bundle.stat().st_size < 20_000
    assert [t.metadata.extra["swe"]["upstream"]["base"] for t in suite] == [c["base"], c["later"]]
    # packing a packed suite again (as mining does after each run) makes the same commits: whole
    before = {t.id: base_tree(t).digest for t in suite}
    assert not pack_suite(out).dropped
    assert {t.id: base_tree(t).digest for t in load_suite(out)} == before


def test_a_failed_import_leaves_the_old_suite(mirror, tmp_path, monkeypatch):
    root, c = mirror
    out = tmp_path / "suite"
    out.mkdir()
    (out / "suite.yaml").write_text("suite: {name: old}\n")
    (out / "keep.txt").write_text("old\n")
    src = tmp_path / "records.json"
    src.write_text(json.dumps([_record("acme__centsplit-1", c["base"])]))

    def boom(_stage):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr("codegym.importers.swebench.pack_suite", boom)
    with pytest.raises(RuntimeError, match="disk is full"):
        import_swebench(src, out, repo_url=f"{root}/{{repo_plus}}")
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt", "suite.yaml"]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]   # no staging folder left
    monkeypatch.undo()
    rep = import_swebench(src, out, repo_url=f"{root}/{{repo_plus}}")   # a new import replaces the old suite
    assert rep.written == ["suite/acme__centsplit-1"] and not (out / "keep.txt").exists()


@pytest.mark.parametrize("bare", [False, True])
def test_a_shallow_mirror(mirror, tmp_path, bare):
    root, c = mirror
    shallow = tmp_path / "shallow" / "acme+centsplit"
    shallow.parent.mkdir()
    git(root / "acme+centsplit", "update-ref", "refs/heads/main", c["later"])
    git(tmp_path, "clone", "-q", "--depth=1", *(["--bare"] if bare else []), "--branch", "main",
           f"file://{root}/acme+centsplit", str(shallow))
    assert (shallow / ("shallow" if bare else ".git/shallow")).is_file()
    src = tmp_path / "records.json"
    src.write_text(json.dumps([_record("acme__centsplit-1", c["later"]), _record("acme__centsplit-2", c["base"])]))
    rep = import_swebench(src, tmp_path / "suite", repo_url=f"{tmp_path}/shallow/{{repo_plus}}")
    assert rep.written == ["suite/acme__centsplit-1"]
    assert rep.skipped == [("record 2 (acme__centsplit-2)",
                            f"acme__centsplit-2: base commit {c['base']} is not in the repository {shallow}")]
    t = load_suite(tmp_path / "suite").get("suite/acme__centsplit-1")
    assert "LATER.md" in base_tree(t).files


def test_install_adds_to_the_records_list_per_repository_too(mirror):
    root, c = mirror
    rec = _record("acme__centsplit-1", c["base"], install_config={"pip_packages": ["pytest", "freezegun"]})
    assert install_for(["hypothesis", "other/repo=nope", "acme/centsplit=attrs>=22"], "acme/centsplit") == \
        ["hypothesis", "attrs>=22"]
    task, _ = swebench_task(rec, repo_url=f"{root}/{{repo_plus}}",
                            install=["pytest<9", "hypothesis", "other/repo=nope", "acme/centsplit=attrs>=22"])
    # (SWE-rebench's pip_packages are the recipe's last pip call: --install joins it)
    assert task["metadata"]["extra"]["swe"]["pip_packages"] == ["pytest<9", "freezegun", "hypothesis", "attrs>=22"]
    rec.pop("install_config")   # the repository's own declaration (pytest only here), added to
    task, _ = swebench_task(rec, repo_url=f"{root}/{{repo_plus}}", install=["acme/centsplit=attrs"])
    assert task["metadata"]["extra"]["swe"]["install"] == ["pytest", "attrs"]
