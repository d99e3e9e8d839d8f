"""`codegym eval` / `codegym report`: config validation, fairness of the plan, resumable runs.

The end-to-end test runs an eval of two agents (oracle and a mutant) on two suites
(`examples` and two `lcb` tasks), kills it (SIGKILL, in a subprocess) after a few
stored episodes, resumes it, and checks that the final results equal those of an
uninterrupted run episode by episode (verdicts, rewards, turns, diffs; wall times
ignored) and that the metrics are identical.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import codegym
from codegym.cli.eval import main as eval_main
from codegym.evaluation.config import ConfigError, load_config
from codegym.evaluation.report import build_results
from codegym.evaluation.runner import run_eval
from codegym.evaluation.store import EvalError, ResultStore

REPO = Path(codegym.__file__).resolve().parent.parent

CONFIG = """\
name: e2e
agents:
  - oracle
  - name: mutant
    spec: "mutant:syntax,crash,output"
suites:
  - examples
  - suite: lcb
    ids: [lcb/fenced-area, lcb/lamp-toggles]
samples: 2
seed: 5
max_turns: 2
progress: false
"""
#: 7 tasks x 2 samples x 2 agents
PLANNED = 28
#: what must not change between an interrupted+resumed run and an uninterrupted one
COMPARED = ("agent", "suite", "task_id", "task_hash", "sample", "seed", "language", "verdict", "correct",
            "passed", "total", "return", "final_reward", "turns", "submitted", "final_diff", "final_files",
            "mutation")


def _write(tmp: Path, text: str, name: str = "eval.yaml") -> Path:
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return p


def _episodes(out: Path) -> dict[str, dict]:
    recs = ResultStore(out / "results.jsonl").load(repair=False)
    keys = [r["key"] for r in recs]
    assert len(keys) == len(set(keys)), "an episode was stored twice"
    return {r["key"]: r for r in recs if r["kind"] == "episode"}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("eval_a")
    cfg = _write(tmp, CONFIG)
    out = tmp / "out"
    summary = run_eval(cfg, out, progress=False)
    assert summary.complete and summary.ran == PLANNED, summary
    return out


# --------------------------------------------------------------------------- config


def test_config_errors_name_file_line_and_field(tmp_path):
    p = _write(tmp_path, """\
name: bad
agents:
  - oracle
  - {name: oracle, spec: mutnt}
suites:
  - examples
  - {suite: lcb, since: soon}
samples: 2
ks: [3]
max_turnz: 3
""")
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    msg = str(ei.value)
    assert "eval.yaml:4: agents[1].spec: unknown agent 'mutnt' (did you mean 'mutant'?)" in msg
    assert "eval.yaml:7: suites[1].since: expected date (YYYY-MM-DD)" in msg
    assert "eval.yaml:10: max_turnz: unknown field 'max_turnz' (did you mean 'max_turns'?)" in msg

    p = _write(tmp_path, """\
agents: [oracle, oracle]
suites:
  - examples
  - {suite: lcb, ids: [lcb/no-such-task]}
  - {suite: no-such-suite}
  - {suite: lcb, since: 2026-06-01, until: 2026-01-01}
samples: 2
ks: [1, 3]
reward: [{type: staged, speed_weigth: 1}]
""")
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    msg = str(ei.value)
    assert "eval.yaml:1: agents[1].name: duplicate agent name 'oracle'" in msg
    assert "eval.yaml:4: suites[1]: no task matches this entry's filters" in msg
    assert "eval.yaml:5: suites[2].suite: no suite or task file 'no-such-suite'" in msg
    assert "eval.yaml:6: suites[3].until: until (2026-01-01) is before since (2026-06-01)" in msg
    assert "eval.yaml:8: ks: pass@3 needs 1 <= k <= n = 2" in msg
    assert "eval.yaml:9: reward[0].speed_weigth: unknown field 'speed_weigth' (did you mean 'speed_weight'?)" in msg


def test_plan_gives_every_agent_the_same_tasks_and_seeds(tmp_path):
    cfg = load_config(_write(tmp_path, CONFIG + "seeds: [11, 3]\n".replace("samples: 2\n", "")))
    plan = cfg.plan()
    assert len(plan) == PLANNED and cfg.seed_list == [11, 3] and cfg.k_list == [1, 2]
    by_agent: dict[str, list] = {}
    for s in plan:
        by_agent.setdefault(s.agent, []).append((s.suite, s.task_id, s.task_hash, s.sample, s.seed))
    assert by_agent["oracle"] == by_agent["mutant"]
    assert {x[4] for x in by_agent["oracle"]} == {11, 3}
    # agents interleaved per task and sample: an interrupted run holds paired results
    assert [s.agent for s in plan[:4]] == ["oracle", "mutant", "oracle", "mutant"]
    # filters: release-date window and difficulty select from the suite
    cfg2 = load_config(_write(tmp_path, "agents: [oracle]\nsuites:\n  - {suite: lcb, since: 2026-06-01, "
                                        "difficulty: hard}\n", "w.yaml"))
    tasks = cfg2.tasks(0)
    assert tasks and all(t.metadata.difficulty == "hard" and str(t.metadata.release_date) >= "2026-06-01"
                         for t in tasks)


# --------------------------------------------------------------------------- end to end


#: ``codegym eval`` held after its k-th stored episode (argv: k, a file to create then, the
#: command's arguments): the parent kills it there, however fast or slow the machine is
HELD_EVAL = """\
import sys, threading
from codegym.evaluation import store
from codegym.cli.eval import main

k, ready = int(sys.argv[1]), sys.argv[2]
stored = 0
append = store.ResultStore.append

def held_append(self, record):
    global stored
    append(self, record)
    if self.path.name == "results.jsonl":
        stored += 1
        if stored >= k:
            open(ready, "a").close()
            threading.Event().wait()   # until the parent kills the run

store.ResultStore.append = held_append
sys.exit(main(sys.argv[3:]))
"""


def test_interrupted_then_resumed_run_equals_an_uninterrupted_one(tmp_path, uninterrupted):
    cfg = _write(tmp_path, CONFIG)
    out = tmp_path / "out"
    results = out / "results.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    k = 6
    ready = tmp_path / "held"
    script = tmp_path / "held_eval.py"
    script.write_text(HELD_EVAL)
    proc = subprocess.Popen([sys.executable, str(script), str(k), str(ready), "eval", str(cfg), "--out", str(out),
                             "-q"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    guard = time.monotonic() + 600   # a hang guard only: the child holds itself at k episodes
    try:
        while not ready.exists() and proc.poll() is None and time.monotonic() < guard:
            time.sleep(0.02)
        if ready.exists():
            proc.send_signal(signal.SIGKILL)  # no clean-up at all: the hardest interruption
    finally:
        if proc.poll() is None:
            proc.kill()
        output = proc.communicate(timeout=60)[0].decode(errors="replace")
    assert proc.returncode == -signal.SIGKILL, f"the eval was not killed mid-run (rc {proc.returncode}):\n{output}"
    stored = _episodes(out)
    assert k <= len(stored) < PLANNED
    # a kill in the middle of a write leaves a torn last line: simulate one
    with open(results, "ab") as fh:
        fh.write(b'{"kind":"episode","key":"oracle|examples|examples/run-le')

    summary = run_eval(cfg, out, progress=False)
    assert summary.complete and summary.stored_before == len(stored)
    assert summary.ran == PLANNED - len(stored)
    a, b = _episodes(uninterrupted), _episodes(out)
    assert set(a) == set(b) and len(b) == PLANNED
    for key in a:
        assert {f: a[key].get(f) for f in COMPARED} == {f: b[key].get(f) for f in COMPARED}, key
        assert [s["action"] for s in a[key]["steps"]] == [s["action"] for s in b[key]["steps"]], key
    # stored before the kill, kept as they were (nothing recomputed)
    for key, rec in stored.items():
        assert b[key]["finished_at"] == rec["finished_at"] and b[key]["episode_s"] == rec["episode_s"]
    assert build_results(out)["metrics"] == build_results(uninterrupted)["metrics"]
    m = json.loads((out / "manifest.json").read_text())
    assert len(m["sessions"]) == 2 and all(s.get("calibration_factor", 0) > 0 for s in m["sessions"])


def test_results_and_provenance_of_a_run(uninterrupted):
    eps = _episodes(uninterrupted)
    oracle = [e for e in eps.values() if e["agent"] == "oracle"]
    mutant = [e for e in eps.values() if e["agent"] == "mutant"]
    assert all(e["correct"] and e["verdict"] == "accepted" for e in oracle)
    assert all(not e["correct"] and e["mutation"]["implied_verdict"] == e["verdict"] for e in mutant)
    res = json.loads((uninterrupted / "results.json").read_text())
    m = res["metrics"]
    assert m["per_agent"]["oracle"]["pass_at_k"]["1"]["value"] == 1.0
    assert m["per_agent"]["mutant"]["pass_at_k"]["2"]["value"] == 0.0
    assert m["head_to_head"]["matrix"]["oracle"]["mutant"] == 1.0
    assert [r["agent"] for r in m["ranking"]] == ["oracle", "mutant"]
    prov = res["provenance"]
    assert prov["codegym_version"] == codegym.__version__ and prov["stored_episodes"] == PLANNED
    hashes = prov["task_hashes"]
    assert len(hashes) == 7 and hashes["examples:examples/run-length"] == codegym.load_suite("examples").get(
        "examples/run-length").content_hash
    assert prov["sessions"][0]["calibration_factor"] > 0
    md = (uninterrupted / "summary.md").read_text()
    assert "| oracle | 14 | 100.0% |" in md and "## Head-to-head" in md


def test_a_complete_run_recomputes_nothing_and_a_changed_eval_is_refused(tmp_path, uninterrupted):
    import shutil
    out = tmp_path / "copy"
    shutil.copytree(uninterrupted, out)
    before = (out / "results.jsonl").read_bytes()
    cfg = _write(tmp_path, CONFIG)
    s = run_eval(cfg, out, progress=False, report=False)
    assert s.ran == 0 and s.stored_before == PLANNED and s.complete
    assert (out / "results.jsonl").read_bytes() == before
    with pytest.raises(EvalError, match="config fields changed: max_turns"):
        run_eval(_write(tmp_path, CONFIG.replace("max_turns: 2", "max_turns: 3"), "other.yaml"), out,
                 progress=False)
    # fields that do not change results (name, progress, workers) may differ
    s = run_eval(_write(tmp_path, CONFIG.replace("name: e2e", "name: renamed") + "workers: 2\n", "n.yaml"), out,
                 progress=False, report=False)
    assert s.ran == 0


def test_report_command_regenerates_from_stored_results(tmp_path, uninterrupted, capsys):
    import shutil
    out = tmp_path / "copy"
    shutil.copytree(uninterrupted, out)
    for f in ("report.html", "results.json", "summary.md"):
        (out / f).unlink()
    assert eval_main(["report", str(out)]) == 0
    assert (out / "report.html").stat().st_size > 10_000
    assert json.loads((out / "results.json").read_text()) == json.loads((uninterrupted / "results.json").read_text())
    assert eval_main(["report", str(tmp_path)]) == 2
    assert "holds no eval" in capsys.readouterr().err


def test_replay_agent_plays_the_recorded_episode_of_each_sample(tmp_path, uninterrupted):
    # replay the oracle's and the mutant's actions: the replayed verdicts are the recorded ones
    eps = _episodes(uninterrupted)
    rec = tmp_path / "rec.jsonl"
    order = sorted((e for e in eps.values() if e["agent"] == "mutant" and e["suite"] == "examples"),
                   key=lambda e: (e["task_id"], e["sample"]))
    rec.write_text("".join(json.dumps({"task_id": e["task_id"], "actions": [s["action"] for s in e["steps"]]})
                           + "\n" for e in order))
    cfg = _write(tmp_path, CONFIG.replace("  - oracle\n", "  - replay:rec.jsonl\n").replace(
        "  - suite: lcb\n    ids: [lcb/fenced-area, lcb/lamp-toggles]\n", "") + "workers: 2\n")
    out = tmp_path / "out"
    assert run_eval(cfg, out, progress=False, report=False).complete
    got = _episodes(out)
    for e in order:
        r = got[f"replay:rec.jsonl|examples|{e['task_id']}|{e['sample']}"]
        assert (r["verdict"], r["final_diff"]) == (e["verdict"], e["final_diff"])


def test_secrets_in_agent_options_are_not_written(tmp_path):
    text = CONFIG.replace('    spec: "mutant:syntax,crash,output"\n',
                          '    spec: "mutant:syntax"\n    options: {seed: 1}\n') + \
        "# a key that must not reach the disk\n"
    cfg = _write(tmp_path, text.replace("  - oracle\n", "  - {name: remote, spec: llm, options: "
                                                       "{model: m, base_url: 'http://127.0.0.1:9/v1', "
                                                       "api_key: sk-SECRET-123}}\n"))
    c = load_config(cfg)
    assert "sk-SECRET-123" not in json.dumps(c.result_dict())
    from codegym.evaluation.config import redact_text
    from codegym.evaluation.manifest import prepare_out_dir
    prepare_out_dir(c, tmp_path / "out", redact_text(cfg.read_text()))
    for f in (tmp_path / "out").iterdir():
        assert "sk-SECRET-123" not in f.read_text(), f


def test_llm_agent_from_options_gets_the_same_budget_and_its_turns_are_counted(tmp_path):
    from _fake_openai import FakeOpenAIServer

    from codegym.agents import OracleAgent

    def responder(req: dict) -> str:
        # first turn: prose without code (unparseable); then the reference solution, submitted
        user = [m for m in req["messages"] if m["role"] == "user"]
        if len(user) == 1:
            return "I would need to think about this."
        task = codegym.load_suite("examples").get("examples/run-length")
        oracle = OracleAgent()
        oracle.reset(task=task)
        return oracle.act("", {"language": "python", "files": task.starter_files()})

    with FakeOpenAIServer(responder=responder) as fake:
        cfg = _write(tmp_path, f"""\
name: llm
agents:
  - name: fake-llm
    spec: llm
    options: {{model: fake-model, base_url: "{fake.base_url}", temperature: 0.5, max_tokens: 4000, seed: 7}}
suites:
  - {{suite: examples, ids: [examples/run-length]}}
seeds: [1, 2]
max_turns: 3
progress: false
""")
        s = run_eval(cfg, tmp_path / "out", progress=False)
        assert s.complete, s
        reqs = fake.requests
    eps = _episodes(tmp_path / "out")
    assert len(eps) == 2 and all(e["correct"] and e["turns"] == 2 for e in eps.values())
    assert all(r.get("temperature") == 0.5 and r.get("max_tokens") == 4000 for r in reqs)
    assert len({r.get("seed") for r in reqs}) == 4  # per episode seed and turn
    m = json.loads((tmp_path / "out" / "results.json").read_text())["metrics"]["per_agent"]["fake-llm"]["turns"]
    assert m["unparseable_share"] == pytest.approx(0.5) and m["tokens"] > 0 and m["turns_mean"] == 2


@pytest.mark.slow
def test_timed_eval_records_speedup_efficiency_and_head_to_head(tmp_path):
    # instruction counts (valgrind) are exact, so the speed results are repeatable
    if shutil.which("valgrind") is None:
        print("SKIP: valgrind is not installed (timing metric `instructions`)")
        pytest.skip("valgrind is not installed (timing metric `instructions`)")
    cfg = _write(tmp_path, """\
name: timed
agents: [oracle, baseline]
suites:
  - {suite: examples, ids: [examples/residue-pairs]}
max_turns: 1
progress: false
timing: {metric: instructions, repeats: 2, max_pairs: 2, percentiles: [50]}
""")
    s = run_eval(cfg, tmp_path / "out", progress=False)
    assert s.complete and s.speed_comparisons == 1
    eps = {e["agent"]: e for e in _episodes(tmp_path / "out").values()}
    o, b = eps["oracle"]["perf"], eps["baseline"]["perf"]
    assert o["metric"] == "instructions" and o["correct_runnable"] and b["correct_runnable"]
    # the reference itself: efficiency 1 (it is the reference), fewer instructions than the baseline
    assert o["efficiency"] == pytest.approx(1.0) and o["times"]["t"] < o["times"]["t_baseline"]
    assert b["speedup"] == 1.0 and b["speedup_significant"] is False  # the baseline against itself
    assert o["speedup"] > 1.0 and o["speedup_ci"][0] == o["speedup_ci"][1]  # exact counts
    assert set(o["top"]) == {"50"}
    speed = [r for r in ResultStore(tmp_path / "out" / "results.jsonl").load() if r["kind"] == "speed"]
    assert speed[0]["a"] == "oracle" and speed[0]["speedup"] == pytest.approx(1 / o["speedup"], rel=1e-6)
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["provenance"]["timing"] and res["metrics"]["per_agent"]["oracle"]["speedup"]["n"] == 1


def test_commands_plug_into_the_codegym_cli(tmp_path, uninterrupted, monkeypatch, capsys):
    import shutil

    import codegym.cli.main as cli
    out = tmp_path / "copy"
    shutil.copytree(uninterrupted, out)
    assert cli.main(["report", str(out)]) == 0
    assert "report.html" in capsys.readouterr().out
    bad = _write(tmp_path, "agents: [oracle]\nsuites: [examples]\nsampels: 2\n")
    assert cli.main(["eval", str(bad), "--out", str(tmp_path / "x")]) == 2
    assert "eval.yaml:3: sampels: unknown field 'sampels' (did you mean 'samples'?)" in capsys.readouterr().err
