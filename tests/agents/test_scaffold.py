"""Scaffold agents: mini-swe-agent (the real PyPI package) and a shell-command scaffold on codegym episodes.

The model is a scripted local OpenAI-compatible server (tests/_fake_openai.py,
tests/_scaffold_model.py) that solves one task and fails another; the scaffolds run
for real (mini-swe-agent's own loop and prompts, its bash commands in bubblewrap or a
container; the shell scaffold as a process whose model calls go through codegym's
token-counting proxy). Checked: verdicts, one diff per scaffold turn that changed
files, tokens and turns recorded, the box's isolation, config errors.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from _fake_openai import FakeOpenAIServer, Reply
from _scaffold_model import FAIL_ID, SHELL_SCAFFOLD, SOLVE_ID, programs, scripted_model

from codegym.agents import make_agent
from codegym.agents.scaffold import make_scaffold_agent
from codegym.agents.scaffold_box import BoxError, ScaffoldBox
from codegym.agents.scaffold_run import ScaffoldTurn, load_scaffold_config, plan_actions
from codegym.core.yamldoc import DocValidationError
from codegym.edits.parse import parse_action
from codegym.rollout.runner import run_episode

CI = bool(os.environ.get("CI"))
needs_mini = pytest.mark.skipif(
    not CI and __import__("importlib").util.find_spec("minisweagent") is None,
    reason="mini-swe-agent is not installed (pip install 'codegym[scaffolds]')")
needs_bwrap = pytest.mark.skipif(not CI and shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def _docker_ok() -> bool:
    try:
        return subprocess.run(["docker", "image", "inspect", "codegym/python:3.11"], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


# --------------------------------------------------------------------------- turns -> steps


def _turn(i: int, files: dict[str, str], tokens: int = 10) -> ScaffoldTurn:
    return ScaffoldTurn(i, files, {"total_tokens": tokens})


def _apply(files: dict[str, str], action: str) -> dict[str, str]:
    parsed = parse_action(action, files, "main.py")
    assert parsed.error is None, parsed.error
    out = dict(files)
    for p, c in parsed.changes.items():
        if c is None:
            out.pop(p, None)
        else:
            out[p] = c
    return out


def test_one_step_per_changed_turn_usage_follows_and_the_last_step_submits():
    base = {"main.py": "a\n", "old.py": "x\n"}
    turns = [_turn(0, dict(base)), _turn(1, {"main.py": "b\n", "old.py": "x\n"}),
             _turn(2, {"main.py": "b\n", "old.py": "x\n"}), _turn(3, {"main.py": "c\n", "new.py": "n\n"})]
    actions = plan_actions(base, turns, budget=5, main_file="main.py")
    assert [a[2] for a in actions] == [[0, 1], [2, 3]]          # no-change turns ride with the next change
    assert [a[1]["total_tokens"] for a in actions] == [20, 20]
    files = _apply(base, actions[0][0])
    assert files == {"main.py": "b\n", "old.py": "x\n"} and not parse_action(actions[0][0], base, "main.py").submit
    files = _apply(files, actions[1][0])
    assert files == {"main.py": "c\n", "new.py": "n\n"}          # a deleted file is deleted
    assert parse_action(actions[1][0], {"main.py": "b\n", "old.py": "x\n"}, "main.py").submit


def test_a_short_turn_budget_merges_the_last_turns_and_no_change_submits():
    base = {"main.py": "0\n"}
    turns = [_turn(i, {"main.py": f"{i + 1}\n"}) for i in range(5)]
    actions = plan_actions(base, turns, budget=2, main_file="main.py")
    assert [a[2] for a in actions] == [[0], [1, 2, 3, 4]]
    assert _apply(_apply(base, actions[0][0]), actions[1][0]) == {"main.py": "5\n"}
    assert plan_actions(base, [_turn(0, dict(base))], budget=3, main_file="main.py")[0][0] == "submit"


def test_scaffold_configs_are_checked_with_file_line_and_field(tmp_path):
    with pytest.raises(DocValidationError, match="shell.yaml:1: .*needs `command`"):
        load_scaffold_config("shell")
    with pytest.raises(DocValidationError, match="scaffold options.*step_limt: unknown field"):
        make_agent("scaffold:mini-swe-agent,step_limt=3")
    bad = tmp_path / "s.yaml"
    bad.write_text("kind: mini-swe-agent\nisolation: jail\nstep_limit: -1\n")
    with pytest.raises(DocValidationError) as e:
        load_scaffold_config(str(bad))
    assert "s.yaml:3: step_limit: must be >= 0" in str(e.value)
    with pytest.raises(ValueError, match="unknown scaffold"):
        make_agent("scaffold:no-such-scaffold")
    cfg = make_scaffold_agent("shell,command='run {prompt_file}',isolation=none").config
    assert (cfg.kind, cfg.command, cfg.isolation) == ("command", "run {prompt_file}", "none")


# --------------------------------------------------------------------------- the box


@needs_bwrap
def test_bwrap_box_confines_writes_to_the_workspace(tmp_path):
    marker = tmp_path / "outside"
    with ScaffoldBox({"main.py": "x = 1\n"}, isolation="bwrap") as box:
        r = box.run(f"echo hi > {marker}; echo pwn > /usr/pwned; cat main.py; echo made > new.txt; "
                    "curl -s http://127.0.0.1:1 || echo no-net; pwd", timeout_s=30)
        files, _ = box.snapshot()
        root = box.root
    assert not marker.exists() and not Path("/usr/pwned").exists()
    assert "x = 1" in r.output and r.output.strip().endswith("/app")
    assert files == {"main.py": "x = 1\n", "new.txt": "made\n"}
    assert not root.exists()                                          # removed on close


def test_isolation_none_needs_the_users_unsafe_opt_in(monkeypatch, tmp_path):
    monkeypatch.delenv("CODEGYM_UNSAFE_NO_ISOLATION", raising=False)
    with pytest.raises(BoxError, match="CODEGYM_UNSAFE_NO_ISOLATION=1"):
        ScaffoldBox({}, isolation="none")
    # a scaffold config (an eval config's, possibly a stranger's) asking for it is refused the same way
    agent = make_scaffold_agent("shell,isolation=none,model=m,base_url=http://127.0.0.1:9/v1",
                                command=f"touch {tmp_path}/ran")
    with pytest.raises(BoxError):
        _play(agent, FAIL_ID)
    assert not (tmp_path / "ran").exists()


def test_a_command_that_hangs_is_stopped_at_its_timeout(monkeypatch):
    monkeypatch.setenv("CODEGYM_UNSAFE_NO_ISOLATION", "1")
    with ScaffoldBox({}, isolation="none") as box:
        r = box.run("sleep 30 & wait", timeout_s=0.5)
    assert r.timed_out and r.returncode == -1


# --------------------------------------------------------------------------- mini-swe-agent


def _play(agent, task_id: str, max_turns: int = 5, **env_kw):
    env = gym.make("codegym/Suite-v0", suite="examples", max_turns=max_turns, **env_kw)
    try:
        return run_episode(env, agent, seed=0, options={"task_id": task_id})
    finally:
        env.close()


def _diff(a: str, b: str) -> list[str]:
    return [ln for ln in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="")
            if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))]


@needs_mini
@needs_bwrap
def test_mini_swe_agent_solves_one_task_and_fails_the_other_with_one_diff_per_turn():
    progs = programs()
    with FakeOpenAIServer(responder=scripted_model(progs)) as fake:
        agent = make_agent(f"scaffold:mini-swe-agent,model=fake,base_url={fake.base_url}")
        solved = _play(agent, SOLVE_ID)
        s_sum = agent.scaffold_summary()
        failed = _play(agent, FAIL_ID)
        f_sum = agent.scaffold_summary()
        requests = list(fake.requests)
    right, wrong = progs[SOLVE_ID]
    starter = "def squeeze(s: str) -> str:\n    raise NotImplementedError\n"
    assert solved["verdict"] == "accepted" and solved["final_reward"] == 1.0
    # turns: ls (no change), wrong main.py, right main.py, submit -> two steps, two diffs
    assert solved["turns"] == 2 and s_sum["turns"] == 4 and s_sum["changed_turns"] == 2
    d1, d2 = solved["steps"][0]["diff"], solved["steps"][1]["diff"]
    assert "+    return s" in d1 and "-    raise NotImplementedError" in d1
    assert "-    return s" in d2 and "+    return s" not in d2
    assert _diff(wrong, right) == [ln for ln in d2.splitlines()
                                   if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))]
    assert starter.splitlines()[0] in right
    assert failed["verdict"] == "wrong_answer" and failed["turns"] == 1
    assert "+    return 0" in failed["steps"][0]["diff"]
    assert f_sum["turns"] == 2 and f_sum["exit_status"] == "Submitted"
    # tokens: what the server reported, call by call; mini-swe-agent's own prompts and tool
    assert s_sum["model_calls"] == 4 and f_sum["model_calls"] == 2 and len(requests) == 6
    assert s_sum["usage"]["total_tokens"] > 0 and s_sum["wall_s"] > 0
    assert requests[0]["tools"][0]["function"]["name"] == "bash"
    assert "squeeze(" in requests[0]["messages"][1]["content"]
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in requests[0]["messages"][1]["content"]


@needs_mini
@pytest.mark.docker
def test_mini_swe_agent_commands_run_in_a_container():
    if not _docker_ok():
        if CI:
            pytest.fail("docker image codegym/python:3.11 is missing in CI")
        pytest.skip("no docker engine with codegym/python:3.11 (shared/scripts/docker-up.sh builds it)")
    replies = [Reply(content="where", tool_calls=[{"name": "bash", "arguments": {
        "command": "cat /etc/os-release | head -1 > where.txt; python3 -c 'print(6*7)' >> where.txt"}}]),
               Reply(content="done", tool_calls=[{"name": "bash", "arguments": {
                   "command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}])]
    with FakeOpenAIServer(replies) as fake:
        agent = make_agent(f"scaffold:mini-swe-agent,model=fake,base_url={fake.base_url},isolation=docker")
        rec = _play(agent, FAIL_ID)
    assert "+++ b/where.txt" in rec["steps"][0]["diff"]
    assert "Debian" in rec["steps"][0]["diff"] and "+42" in rec["steps"][0]["diff"]
    assert rec["verdict"] == "runtime_error"   # the starter raises NotImplementedError


# --------------------------------------------------------------------------- shell command scaffold


@needs_bwrap
def test_shell_scaffold_in_bwrap_gets_the_task_file_and_its_tokens_are_counted(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(SHELL_SCAFFOLD)
    progs = programs()
    with FakeOpenAIServer(responder=scripted_model(progs)) as fake:
        agent = make_scaffold_agent(f"shell,model=fake,base_url={fake.base_url}",
                                    command=f"/usr/bin/python3 {script} {{prompt_file}}",
                                    ro_binds=[str(tmp_path)])
        solved = _play(agent, SOLVE_ID)
        s_sum = agent.scaffold_summary()
        failed = _play(agent, FAIL_ID)
        served = [r for r in fake.requests]
    assert solved["verdict"] == "accepted" and solved["turns"] == 1
    assert failed["verdict"] == "wrong_answer"
    assert s_sum["exit_status"] == "ok" and s_sum["model_calls"] == 1 and s_sum["turns"] == 1
    # the task reached the scaffold as a file, statement and workspace listing included
    assert "squeeze(" in served[0]["messages"][0]["content"] and "- main.py" in served[0]["messages"][0]["content"]
    # tokens: the proxy's count is the server's own usage
    assert s_sum["usage"]["total_tokens"] > 0
    assert solved["steps"][0]["diff"].count("+++ b/main.py") == 1


def test_a_failing_scaffold_is_its_episode_result_not_a_crash(monkeypatch):
    monkeypatch.setenv("CODEGYM_UNSAFE_NO_ISOLATION", "1")
    agent = make_scaffold_agent("shell,isolation=none,model=m,base_url=http://127.0.0.1:9/v1",
                                command="echo broken >&2; exit 3")
    rec = _play(agent, FAIL_ID)
    assert rec["turns"] == 1 and rec["verdict"] == "runtime_error"   # the starter, submitted unchanged
    assert agent.scaffold_summary()["exit_status"] == "exit 3"
    assert "broken" in agent.last_run.log


@pytest.mark.skipif(sys.platform != "linux", reason="linux only")
def test_usage_proxy_forwards_and_counts_answers():
    import json
    import urllib.request

    from codegym.agents.scaffold_command import UsageProxy
    with FakeOpenAIServer(["hello"]) as fake:
        proxy = UsageProxy(fake.base_url, "k")
        try:
            body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
            req = urllib.request.Request(proxy.base_url + "/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
            data = json.load(urllib.request.urlopen(req, timeout=30))
        finally:
            proxy.close()
    assert data["choices"][0]["message"]["content"] == "hello"
    assert proxy.calls == 1 and proxy.usage == {k: data["usage"][k] for k in proxy.usage}
