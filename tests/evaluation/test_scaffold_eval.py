"""`codegym eval` with two agent scaffolds (mini-swe-agent and a shell-command scaffold) and
the report's scaffold comparison, against a scripted local model that solves one task and
fails the other (tests/_scaffold_model.py)."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from _fake_openai import FakeOpenAIServer
from _scaffold_model import FAIL_ID, SHELL_SCAFFOLD, SOLVE_ID, scripted_model

from codegym.evaluation.config import ConfigError, load_config
from codegym.evaluation.runner import run_eval

CI = bool(os.environ.get("CI"))


@pytest.mark.skipif(not CI and (shutil.which("bwrap") is None
                                or __import__("importlib").util.find_spec("minisweagent") is None),
                    reason="needs bubblewrap and mini-swe-agent (pip install 'codegym[scaffolds]')")
def test_two_scaffolds_head_to_head_in_codegym_eval(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(SHELL_SCAFFOLD)
    with FakeOpenAIServer(responder=scripted_model()) as fake:
        cfg = tmp_path / "eval.yaml"
        cfg.write_text(f"""\
name: scaffolds
agents:
  - name: mini
    spec: "scaffold:mini-swe-agent"
    options: {{model: fake, base_url: "{fake.base_url}", step_limit: 10}}
  - name: shell
    spec: "scaffold:shell"
    options:
      model: fake
      base_url: "{fake.base_url}"
      command: "/usr/bin/python3 {script} {{prompt_file}}"
      ro_binds: ["{tmp_path}"]
suites:
  - {{suite: examples, ids: [{SOLVE_ID}, {FAIL_ID}]}}
max_turns: 4
progress: false
""")
        summary = run_eval(cfg, tmp_path / "out", progress=False)
    assert summary.complete
    eps = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    by = {(e["agent"], e["task_id"]): e for e in eps if e["kind"] == "episode"}
    assert {k: v["verdict"] for k, v in by.items()} == {
        ("mini", SOLVE_ID): "accepted", ("mini", FAIL_ID): "wrong_answer",
        ("shell", SOLVE_ID): "accepted", ("shell", FAIL_ID): "wrong_answer"}
    mini = by[("mini", SOLVE_ID)]
    assert mini["turns"] == 2 and mini["scaffold"]["turns"] == 4 and mini["scaffold"]["model_calls"] == 4
    assert mini["usage"]["total_tokens"] == mini["scaffold"]["usage"]["total_tokens"] > 0
    assert by[("shell", SOLVE_ID)]["turns"] == 1 and by[("shell", SOLVE_ID)]["scaffold"]["model_calls"] == 1
    assert "+++ b/main.py" in by[("shell", SOLVE_ID)]["final_diff"]

    res = json.loads((tmp_path / "out" / "results.json").read_text())
    sc = res["metrics"]["scaffolds"]
    assert sc["scaffolds"] == ["mini", "shell"]
    rows = sc["rows"]
    assert rows["mini"]["pass1"] == rows["shell"]["pass1"] == 0.5
    assert rows["mini"]["scaffold_turns_mean"] == 3.0 and rows["shell"]["scaffold_turns_mean"] == 1.0
    assert rows["mini"]["model_calls_mean"] == 3.0 and rows["mini"]["steps_mean"] == 1.5
    assert rows["mini"]["total_tokens_mean"] > rows["shell"]["total_tokens_mean"] > 0
    assert rows["mini"]["wall_s_median"] > 0 and rows["mini"]["exit_statuses"] == {"Submitted": 2}
    (pair,) = sc["pairs"]
    assert (pair["a"], pair["b"], pair["tasks"], pair["ties"], pair["both_solved"]) == ("mini", "shell", 2, 2, 1)
    assert pair["token_ratio"] > 1.0      # mini-swe-agent's prompts are longer than the one-shot script's
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "## Scaffolds head to head" in md and "| mini | scaffold |" in md
    html = (tmp_path / "out" / "report.html").read_text()
    assert "id='scaffold-table'" in html or 'id="scaffold-table"' in html


def test_a_scaffold_config_error_names_the_eval_file_and_line(tmp_path):
    cfg = tmp_path / "eval.yaml"
    cfg.write_text("agents:\n  - oracle\n  - {spec: 'scaffold:mini-swe-agent', options: {isolation: jail}}\n"
                   "suites: [examples]\n")
    with pytest.raises(ConfigError, match=r"eval.yaml:3: agents\[1\].*isolation must be one of"):
        load_config(cfg)
