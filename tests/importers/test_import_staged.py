"""Imports write a whole suite or nothing (issue 28 item 3: no half-written output).

Every importer writes its suite folder in a temporary folder that replaces ``--out`` at
the end: an import that fails on the way leaves the old suite as it was and no temporary
folder; a folder that is not a suite folder is refused, never replaced; a task whose
written file does not load back, or whose file name another task took, is one skip line.
"""

from __future__ import annotations

import json

import pytest

import codegym.importers.common as common
from codegym.importers.common import ImportError_, ImportReport
from codegym.importers.lcb import import_lcb
from codegym.tasks.suite import load_suite


def _lcb(qid: str, **kw) -> dict:
    rec = {"question_id": qid, "question_title": qid, "question_content": "Print 1.", "platform": "atcoder",
           "contest_date": "2024-01-01T00:00:00", "difficulty": "easy", "starter_code": "",
           "public_test_cases": json.dumps([{"input": "1\n", "output": "1\n", "testtype": "stdin"}]),
           "private_test_cases": "[]", "metadata": "{}"}
    rec.update(kw)
    return rec


def _file(tmp_path, *records) -> str:
    p = tmp_path / "lcb.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(p)


def test_a_failed_import_leaves_the_old_suite_and_no_temporary_folder(tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert import_lcb(_file(tmp_path, _lcb("old")), out).written == ["lcb/old"]

    def boom(*a, **kw):
        raise OSError("disk full")
    monkeypatch.setattr(common, "verify_references", boom)
    monkeypatch.setattr(common, "write_suite", lambda stage, tasks, **kw: ((stage / "half.yaml").write_text("x"),
                                                                           boom()))
    with pytest.raises(OSError, match="disk full"):
        import_lcb(_file(tmp_path, _lcb("new")), out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lcb.jsonl", "out"]
    assert [t.id for t in load_suite(out)] == ["lcb/old"]


def test_a_folder_that_is_not_a_suite_is_never_replaced(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(ImportError_, match="not a suite folder"):
        import_lcb(_file(tmp_path, _lcb("a")), mine)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert import_lcb(_file(tmp_path, _lcb("a")), empty).written == ["lcb/a"]


def test_bad_tasks_are_skip_lines_and_the_rest_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # (errors name files relative to the working directory)
    rep = import_lcb(_file(tmp_path, _lcb("a/b"), _lcb("a_b"), _lcb("huge", question_content="x" * (5 << 20)),
                           _lcb("fine")), tmp_path / "out")
    assert rep.written == ["lcb/a_b", "lcb/fine"]
    why = dict(rep.skipped)
    assert why["lcb/a_b"] == "a second task of the file name a_b.yaml (first: lcb/a_b)"
    assert why["lcb/huge"].startswith("the written task does not load: ") and "over the cap" in why["lcb/huge"]
    assert why["lcb/huge"].startswith("the written task does not load: out/huge.yaml:1:"), why["lcb/huge"]
    assert ".tmp" not in why["lcb/huge"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a_b.yaml", "fine.yaml", "suite.yaml"]


def test_a_task_that_cannot_be_written_is_a_skip_line(tmp_path, monkeypatch):
    real = common.write_suite_file

    def write(out, task):
        if task["id"] == "lcb/bad":
            raise TypeError("cannot write a set value as YAML flow text")
        return real(out, task)
    monkeypatch.setattr(common, "write_suite_file", write)
    rep = import_lcb(_file(tmp_path, _lcb("bad"), _lcb("good")), tmp_path / "out")
    assert rep.written == ["lcb/good"]
    assert dict(rep.skipped)["lcb/bad"] == "cannot be written: TypeError: cannot write a set value as YAML flow text"


def test_a_report_keeps_the_first_skips_and_counts_all():
    rep = ImportReport("src")
    for i in range(ImportReport.KEEP_SKIPPED + 5):
        rep.skip(f"line {i}", "not valid JSON: x")
    assert len(rep.skipped) == ImportReport.KEEP_SKIPPED and rep.skipped_total == ImportReport.KEEP_SKIPPED + 5
    assert f"{ImportReport.KEEP_SKIPPED + 5} skipped" in rep.summary()
    assert f"--json lists the first {ImportReport.KEEP_SKIPPED}" in rep.summary()
