"""``codegym replay``: stored episodes judged again against the current tasks and sandbox.

A fresh ``collect`` output (oracle and mutant episodes: accepted, wrong answers, compile
errors) and a fresh eval's results.jsonl replay with no drift; a deliberately changed
task (one expected value) is caught: the verdicts that depend on it change, its hash
mismatch is reported, the exit status is 1; an episode whose start files changed cannot
be rebuilt and says so.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import codegym
from codegym.agents import MutantAgent, OracleAgent
from codegym.cli import main as cli
from codegym.cli.replay import replay
from codegym.evaluation.runner import run_eval
from codegym.rollout import collect

EXAMPLES = Path(codegym.__file__).resolve().parent.parent / "tasks" / "examples"
KW = {"suite": "examples", "max_turns": 2}


def _collected(tmp_path: Path) -> Path:
    """A collect output of oracle and mutant episodes on the examples suite."""
    good, bad = tmp_path / "oracle.jsonl", tmp_path / "mutant.jsonl"
    collect("codegym/Suite-v0", OracleAgent(), group_size=1, num_envs=2, seed=3, out=good, env_kwargs=KW,
            progress=False)
    collect("codegym/Suite-v0", MutantAgent(kinds=["syntax", "output"]), group_size=2, num_envs=2, seed=4,
            out=bad, env_kwargs=KW, progress=False)
    both = tmp_path / "episodes.jsonl"
    both.write_text(good.read_text() + bad.read_text())
    return both


def test_fresh_collect_output_has_no_drift_and_a_changed_task_is_caught(tmp_path, capsys):
    episodes = _collected(tmp_path)
    verdicts = {json.loads(ln)["verdict"] for ln in episodes.read_text().splitlines()}
    assert {"accepted", "wrong_answer"} <= verdicts
    assert cli.main(["replay", str(episodes)]) == 0
    out = capsys.readouterr().out
    assert "0 changed, 0 not replayable" in out and "0 task hash mismatch(es)" in out, out

    # the same tasks, one expected value changed: the oracle's bracket-depth episode now fails
    changed = tmp_path / "suites" / "examples"
    shutil.copytree(EXAMPLES, changed)
    task = changed / "bracket-depth.yaml"
    text = task.read_text()
    assert text.count("expected: 3\n") == 1
    task.write_text(text.replace("expected: 3\n", "expected: 4\n"))
    rep = replay(episodes, suites=[str(changed)])
    moved = [e for e in rep.episodes if e.status == "changed"]
    assert moved and all(e.task_id == "examples/bracket-depth" and e.hash_changed for e in moved)
    assert any(e.stored == "accepted" and e.now == "wrong_answer" for e in moved)
    assert rep.hash_mismatches == sum(1 for e in rep.episodes if e.task_id == "examples/bracket-depth")
    assert all(e.status == "same" for e in rep.episodes if e.task_id != "examples/bracket-depth")
    assert cli.main(["replay", str(episodes), "--suite", str(changed), "-q"]) == 1
    out = capsys.readouterr().out
    assert "CHANGED  accepted -> wrong_answer" in out and "task changed:" in out

    # a changed starter: the recorded diffs no longer rebuild the workspace
    starter = changed / "run-length.yaml"
    text = starter.read_text().replace("starter:\n  main.py: |\n", "starter:\n  main.py: |\n    # new\n", 1)
    starter.write_text(text)
    rep = replay(episodes, suites=[str(changed)])
    broken = [e for e in rep.episodes if e.task_id == "examples/run-length"]
    assert broken and all(e.status == "error" and "start files differ" in e.message for e in broken)
    assert rep.drift


def test_eval_results_replay(tmp_path, capsys):
    cfg = tmp_path / "eval.yaml"
    cfg.write_text("name: replayed\nagents:\n  - oracle\n  - name: mutant\n    spec: \"mutant:syntax,output\"\n"
                   "suites:\n  - suite: examples\n    ids: [examples/bracket-depth, examples/residue-pairs]\n"
                   "samples: 1\nmax_turns: 2\nprogress: false\n")
    out = tmp_path / "out"
    assert run_eval(cfg, out, progress=False, report=False).complete
    assert cli.main(["replay", str(out / "results.jsonl"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["counts"] == {"same": 4} and rep["hash_mismatches"] == 0 and not rep["drift"], rep
    assert {e["stored"] for e in rep["episodes"]} >= {"accepted"}


def test_malformed_records_are_one_line_each_and_the_rest_goes_on(tmp_path, capsys):
    """Records whose steps / final_files / metadata (and other fields) have the wrong type,
    a line that is not JSON and one nested 100,000 deep: one ERROR line each naming the
    field, the good episode is still replayed (it was an AttributeError / TypeError /
    RecursionError ending the whole run)."""
    cfg = tmp_path / "eval.yaml"
    cfg.write_text("agents: [oracle]\nsuites:\n  - {suite: examples, ids: [examples/bracket-depth]}\n"
                   "max_turns: 2\nprogress: false\n")
    assert run_eval(cfg, tmp_path / "out", progress=False, report=False).complete
    results = tmp_path / "out" / "results.jsonl"
    good = json.loads(results.read_text().splitlines()[0])
    collect_like = {k: v for k, v in good.items() if k not in ("final_files", "key")} | {"group_id": "g"}
    bad = [(collect_like | {"steps": "not a list"}, "steps: expected a list, not str"),
           (collect_like | {"steps": [1, 2]}, "steps[0]: expected an object, not int"),
           (good | {"steps": [{"diff": 5}]}, "steps[0].diff: expected a string, not int"),
           (good | {"final_files": "main.py"}, "final_files: expected an object, not str"),
           (good | {"final_files": {"main.py": 5}}, "final_files['main.py']: expected a file's text, not int"),
           (good | {"metadata": "meta"}, "metadata: expected an object, not str"),
           (collect_like | {"metadata": {"language": ["python"]}}, "metadata.language: expected a string"),
           (good | {"suite": ["examples"]}, "suite: expected a string, not list"),
           (good | {"task_id": 7}, "task_id: expected a string, not int")]
    lines = [json.dumps(good)] + [json.dumps(rec) for rec, _ in bad] + ["{not json", "[" * 100_000 + "]" * 100_000,
                                                                         json.dumps(good)]
    mixed = tmp_path / "out" / "mixed.jsonl"
    mixed.write_text("\n".join(lines) + "\n")
    assert cli.main(["replay", str(mixed), "-q"]) == 1
    out = capsys.readouterr().out
    errors = [ln for ln in out.splitlines() if "ERROR" in ln]
    assert len(errors) == len(bad) + 2 and "Traceback" not in out, out
    for n, (_, why) in enumerate(bad, 2):
        assert any(f"line {n}: malformed record: {why}" in ln for ln in errors), (why, errors)
    assert any("line 11: malformed record: not JSON" in ln for ln in errors)
    assert any("line 12: malformed record: not JSON" in ln for ln in errors)
    rep = replay(mixed)
    assert [e.status for e in rep.episodes] == ["same"] + ["error"] * (len(bad) + 2) + ["same"]
