"""``codegym import FILE``: the schema of a file is detected and its importer run; a file
no importer reads is named with what it is; unreadable records are skipped with their line
and reason, counted by reason. Every file of /work/shared/benchmarks is tried (skipped when
that folder is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegym.cli import main as cli
from codegym.importers.auto import import_file
from codegym.importers.common import ImportError_, reason_kind
from codegym.importers.detect import detect_file, detect_records

BENCH = Path("/work/shared/benchmarks")

#: every shared file -> the schema found (None: no importer, with the reason's words)
SHARED = {
    "humaneval/HumanEval.jsonl.gz": "humaneval",
    "humaneval_plus/HumanEvalPlus-v0.1.10.jsonl.gz": "evalplus",
    "mbpp_plus/MbppPlus-v0.2.0.jsonl.gz": "evalplus",
    "leetcode_contest/leetcode-contest-20240121-Jul.jsonl.gz": "leetcode-contest",
    "livecodebench/fewshot_func.json": "lcb-fewshot",
    "livecodebench/fewshot_stdin.json": "lcb-fewshot",
    "multipl_e_julia/humaneval-jl.jsonl": "multipl-e",
    "pie/py_reference.jsonl.gz": "pie",
    "pie/problem_list.csv": None,
}


def test_every_shared_file_is_detected_or_named():
    if not BENCH.is_dir():
        pytest.skip(f"{BENCH} is absent (the shared benchmark files are not on this machine)")
    seen = set()
    for path in sorted(p for p in BENCH.rglob("*") if p.is_file()):
        rel = str(path.relative_to(BENCH))
        det = detect_file(path)
        seen.add(rel)
        if rel.endswith("README.md"):
            assert det.schema is None and "Markdown" in det.message, det.message
            continue
        assert det.name == SHARED[rel], (rel, det.message)
        if det.name == "pie":
            assert det.command is None and "no test inputs" in det.message
        elif det.name is None:
            assert "CSV" in det.message
        else:
            assert f"codegym import {det.command} FILE" in det.message
    assert set(SHARED) <= seen


def test_each_schema_is_told_from_its_neighbours():
    he = {"task_id": "HumanEval/0", "prompt": "def f():\n", "entry_point": "f", "canonical_solution": "  pass\n",
          "test": "def check(c): pass\n"}
    swe = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "a" * 40, "patch": "diff", "test_patch": "diff",
           "problem_statement": "bug", "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]"}
    cases = {
        "humaneval": he, "evalplus": dict(he, base_input=[[1]], plus_input=[], atol=0),
        "leetcode-contest": {"task_id": "weekly-1-x", "prompt": "p", "test": "t", "meta": {}, "start_time": 1},
        "lcb": {"question_id": "1", "question_content": "q", "public_test_cases": "[]"},
        "lcb-fewshot": {"question": "q", "answer": "a"},
        "multipl-e": {"name": "HumanEval_0_x", "language": "jl", "prompt": "p", "tests": "t", "stop_tokens": []},
        "swe-bench": swe, "swe-smith": dict(swe, image_name="img"),
        "swe-rebench": dict(swe, install_config={"python": "3.11"}),
    }
    for name, rec in cases.items():
        det = detect_records([rec, rec])
        assert det.name == name and det.fit == 2, (name, det.message)
    unknown = detect_records([{"task_id": "x", "prompt": "y"}])
    assert unknown.schema is None and "nearest" in unknown.message and "needs" in unknown.message


def test_import_file_runs_the_detected_importer_and_counts_skips(tmp_path, capsys):
    good = {"question": "Print the sum.\n\nExamples\n\nInput\n\n1 2\n\nOutput\n\n3\n",
            "answer": "a, b = map(int, input().split())\nprint(a + b)\n"}
    noexample = {"question": "No examples here.", "answer": "print(1)\n"}
    src = tmp_path / "few.jsonl"
    src.write_text("\n".join([json.dumps(good), json.dumps({"question": "q"}), "[1]", json.dumps(noexample),
                              json.dumps({"question": "x"})]) + "\n")
    rep = import_file(src, tmp_path / "out", suite_name="mine")
    assert rep.written == ["mine/fewshot-stdin-1"] and rep.counts["schema:lcb-fewshot"] == 1
    assert ("line 2", "missing field 'answer'") in rep.skipped and ("line 5", "missing field 'answer'") in rep.skipped
    assert ("line 3", "not a JSON object (list)") in rep.skipped
    assert rep.reasons["missing field 'answer'"] == 2 and rep.reasons["the statement has no examples to test with"] == 1
    assert rep.counts["references_accepted"] == 1
    # the CLI: `codegym import FILE --out DIR` is the auto command
    assert cli.main(["import", str(src), "--out", str(tmp_path / "cli"), "--no-verify"]) == 0
    out = capsys.readouterr()
    assert "skipped by reason: missing field 'answer': 2" in out.out and "detected:" in out.err
    assert cli.main(["import", "auto", str(src), "--detect-only"]) == 0
    csv = tmp_path / "t.csv"
    csv.write_text("a,b\n1,2\n")
    assert cli.main(["import", str(csv), "--out", str(tmp_path / "x")]) == 1
    assert "CSV table" in capsys.readouterr().err
    with pytest.raises(ImportError_, match="CSV table"):
        import_file(csv, tmp_path / "y")


def test_explicit_subcommands_still_work_and_name_the_right_one(tmp_path, capsys):
    src = tmp_path / "lc.jsonl"
    src.write_text(json.dumps({"task_id": "weekly-1-x", "prompt": '"""Say 1."""\nclass Solution:\n    def one(self):\n',
                               "test": "my_solution = Solution()\nassert my_solution.one(**{}) == 1\n",
                               "meta": {}, "start_time": 1}) + "\n")
    assert cli.main(["import", "lcb", str(src), "--out", str(tmp_path / "o")]) == 1
    assert "codegym import leetcode-contest FILE" in capsys.readouterr().err
    assert cli.main(["import", "leetcode-contest", str(src), "--out", str(tmp_path / "lc")]) == 0
    assert cli.main(["import", "auto", str(src), "--out", str(tmp_path / "auto")]) == 0


def test_reason_kinds_group_records_by_cause():
    assert reason_kind("missing field 'question_id'") == "missing field 'question_id'"
    assert reason_kind("not valid JSON: Expecting value: line 1 column 2 (char 1)") == "not valid JSON"
    assert reason_kind("line 12: test_input is not a mapping") == "test_input is not a mapping"
