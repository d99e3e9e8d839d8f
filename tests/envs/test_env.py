"""CodeEnv: the Gymnasium contract, episodes, edit feedback, fork, vector envs, agents."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import codegym  # noqa: F401  (registers the ids)
from codegym.agents import BaselineAgent, MutantAgent, OracleAgent, ReplayAgent
from codegym.edits.render import render_action
from codegym.envs import ENV_IDS
from codegym.rollout.runner import run_episode
from codegym.tasks.suite import list_suites

EXAMPLES = "examples"


def _env(**kw):
    kw.setdefault("suite", EXAMPLES)
    return gym.make("codegym/Suite-v0", **kw)


def _available(env_id: str) -> bool:
    suite = ENV_IDS[env_id].get("suite", EXAMPLES)
    return suite in list_suites()


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_check_env_passes_for_every_registered_id(env_id):
    kwargs = {} if "suite" in ENV_IDS[env_id] else {"suite": EXAMPLES}
    if not _available(env_id):
        pytest.skip(f"suite of {env_id} ({ENV_IDS[env_id].get('suite')}) is not bundled yet")
    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)
        check_env(env.unwrapped, skip_render_check=False)
    env.close()


def test_make_with_module_prefix_in_fresh_interpreter():
    import subprocess
    import sys
    code = ("import gymnasium as gym; env = gym.make('codegym:codegym/Suite-v0', suite='examples'); "
            "obs, info = env.reset(seed=1); print(info['task_id'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith("examples/")


def test_reset_prompt_and_seeded_sampling():
    env = _env()
    obs1, info1 = env.reset(seed=3)
    obs2, info2 = env.reset(seed=3)
    assert obs1 == obs2 and info1["task_id"] == info2["task_id"]
    assert "## Files" in obs1 and "How to answer" in obs1
    ids = {env.reset(seed=s)[1]["task_id"] for s in range(30)}
    assert len(ids) > 1
    obs, info = env.reset(options={"task_id": "examples/digit-sum-queries"})
    assert info["task_id"] == "examples/digit-sum-queries"
    assert info["turn"] == 0 and info["files"]
    env.close()
    env.close()  # idempotent


def test_garbage_actions_never_raise_and_spend_a_turn():
    env = _env(max_turns=8)
    env.reset(options={"task_id": "examples/digit-sum-queries"})
    before = env.unwrapped.workspace.files
    for action in ["", "   ", "\x00\xff binary \udcff", "```python\nprint(1)\n", "x" * (10 << 20),
                   "<<<<<<< SEARCH\nnot there\n=======\nfoo\n>>>>>>> REPLACE\n"]:
        obs, reward, term, trunc, info = env.step(action)
        assert not term and not trunc
        assert reward == 0.0
        assert env.unwrapped.workspace.files == before
        if action.strip():
            assert info["error"], action[:40]
            assert "could not be used" in obs
    assert info["turn"] == 6
    env.close()


def test_oracle_episode_accepted_with_diff_units_and_spans():
    env = _env()
    agent = OracleAgent(format="search_replace")
    rec = run_episode(env, agent, options={"task_id": "examples/digit-sum-queries"})
    assert rec["verdict"] == "accepted"
    assert rec["final_reward"] == 1.0
    step = rec["steps"][0]
    assert step["diff"].startswith("diff --git") or step["diff"].startswith("---")
    units = step["diff_units"]
    assert units, "an edit must produce diff units"
    spans = [u["span"] for u in units if u.get("span")]
    assert spans, "diff units carry spans of the action text"
    for u in units:
        if u.get("span") and u["post_image"]:
            a, b = u["span"]
            assert u["post_image"][0].strip() in step["action"][a:b]
    env.close()


def test_baseline_submits_starter_and_mutants_get_implied_verdicts():
    env = _env(suite="perfcode", early_exit=True, reward="pass_fraction")  # verdicts, untimed
    tid = "perfcode/c-seen-before"
    rec = run_episode(env, BaselineAgent(), options={"task_id": tid})
    assert rec["verdict"] == "accepted"
    for kind, verdict in [("syntax", "compile_error"), ("crash", "runtime_error"),
                          ("output", "wrong_answer"), ("loop", "timeout")]:
        rec = run_episode(env, MutantAgent(kinds=[kind], seed=1), options={"task_id": tid})
        assert rec["verdict"] == verdict, (kind, rec["verdict"])
    env.close()


def test_intermediate_step_runs_public_tests_and_submit_ends():
    env = _env(max_turns=3)
    obs, info = env.reset(options={"task_id": "examples/digit-sum-queries"})
    task = env.unwrapped.task
    wrong = "import sys\nprint(0)\n"
    obs, r, term, trunc, info = env.step(render_action({task.main_file: wrong}, "code_block",
                                                       info["files"], task.main_file))
    assert not term and info["judge"]["verdict"] == "wrong_answer"
    assert "Public tests" in obs and "Case" in obs
    assert info["cumulative_diff"]
    # undo-free: submit ends the episode with the hidden tests
    obs, r, term, trunc, info = env.step("submit")
    assert term and info["submitted"] and info["judge"]["split"] == "hidden"
    with pytest.raises(gym.error.ResetNeeded):
        env.step("submit")
    env.close()


def test_last_turn_auto_submits_and_no_auto_submit_truncates():
    env = _env(max_turns=1)
    env.reset(options={"task_id": "examples/digit-sum-queries"})
    _, _, term, trunc, info = env.step("hello")
    assert term and not trunc and info["submitted"]
    env.close()
    env = _env(max_turns=1, auto_submit=False)
    env.reset(options={"task_id": "examples/digit-sum-queries"})
    _, r, term, trunc, info = env.step("hello")
    assert trunc and not term and not info["submitted"] and r == 0.0
    env.close()


def test_fork_is_independent():
    env = _env(max_turns=4).unwrapped
    env.reset(options={"task_id": "examples/digit-sum-queries"})
    main = env.main_file
    env.step(render_action({main: "print(1)\n"}, "code_block", env.workspace.files, main))
    child = env.fork()
    child.step(render_action({main: "print(2)\n"}, "code_block", child.workspace.files, main))
    assert env.workspace.read(main) == "print(1)\n"
    assert child.workspace.read(main) == "print(2)\n"
    assert child.turn == env.turn + 1
    env.close()


def test_same_change_four_formats_same_workspace_and_diff():
    results = []
    for fmt in ["code_block", "unified_diff", "search_replace", "tool_call"]:
        env = _env().unwrapped
        _, info = env.reset(options={"task_id": "examples/digit-sum-queries"})
        main = env.main_file
        new = info["files"][main].replace("\n", "\n# note\n", 1)
        _, _, _, _, info = env.step(render_action({main: new}, fmt, info["files"], main))
        assert info["error"] is None, (fmt, info["error"])
        results.append((env.workspace.files, info["diff"]))
        env.close()
    assert all(r == results[0] for r in results)


def test_replay_agent_replays(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"task_id": "perfcode/py-range-count", "actions": ["nothing", "submit"]}) + "\n")
    env = _env(suite="perfcode", reward="pass_fraction")  # verdicts, untimed
    rec = run_episode(env, ReplayAgent(path), options={"task_id": "perfcode/py-range-count"})
    assert [s["action"] for s in rec["steps"]] == ["nothing", "submit"]
    assert rec["verdict"] == "accepted"  # the starter is correct
    env.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_both_modes(mode):
    venv = gym.make_vec("codegym/Suite-v0", num_envs=2, vectorization_mode=mode, suite=EXAMPLES)
    obs, info = venv.reset(seed=[0, 1])
    assert len(obs) == 2 and all(isinstance(o, str) and o for o in obs)
    obs, rew, term, trunc, info = venv.step(["submit", "garbage"])
    assert bool(term[0]) and not bool(term[1])
    venv.close()


def test_cli_run_writes_records(tmp_path):
    from codegym.cli.main import main
    out = tmp_path / "r.jsonl"
    rc = main(["run", "codegym/Suite-v0", "--suite", EXAMPLES, "--agent", "oracle", "--agent", "baseline",
               "--episodes", "2", "--out", str(out), "-q"])
    assert rc == 0
    recs = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(recs) == 4 and {r["agent"] for r in recs} == {"oracle", "baseline"}


def test_protected_paths_are_refused_with_feedback():
    env = _env(protected=["tests/*"]).unwrapped
    _, info = env.reset(options={"task_id": "examples/digit-sum-queries"})
    action = render_action({"tests/test_x.py": "assert True\n"}, "code_block", info["files"], env.main_file)
    obs, r, term, trunc, info = env.step(action)
    assert info["error"] and "tests/test_x.py" in info["error"] and not term
    assert "tests/test_x.py" not in env.workspace.files
    env.close()


def test_baseline_and_oracle_use_named_solutions_on_dmcoptim():
    env = gym.make("codegym/DMCOptim-v0", early_exit=True, reward="pass_fraction")  # verdicts, untimed
    tid = "dmcoptim/ledger-target"
    task = env.unwrapped._by_id[tid]
    base = run_episode(env, BaselineAgent(), options={"task_id": tid})
    orac = run_episode(env, OracleAgent(), options={"task_id": tid})
    assert base["verdict"] == orac["verdict"] == "accepted"
    main = task.main_file
    assert task.solution(task.baseline_name).files[main].strip() in base["steps"][0]["action"]
    assert task.solution(task.reference_name).files[main].strip() in orac["steps"][0]["action"]
    env.close()
