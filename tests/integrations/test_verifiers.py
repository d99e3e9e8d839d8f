"""codegym as a verifiers environment: found by its taskset id, played by ``vf-eval`` itself.

`vf-eval codegym-verifiers ...` (verifiers' own CLI and evaluation loop, in a subprocess;
the command docs/verifiers.md shows, with the test's endpoint) plays two LCB tasks with
verifiers' ``null`` chat harness against the scripted
OpenAI-compatible server of `tests/_fake_openai.py`: one task is solved at once, the other
gets a wrong program, reads the env's feedback and submits. The traces' rewards and
metrics equal the ones codegym gives the same actions in-process, and the second model
request carries the env's feedback as its user turn.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

vf = pytest.importorskip("verifiers.v1", reason="needs verifiers (pip install 'codegym[verifiers]')")

import gymnasium as gym  # noqa: E402
from _doc_commands import documented_commands  # noqa: E402
from _fake_openai import FakeOpenAIServer  # noqa: E402

import codegym  # noqa: E402,F401
from codegym.agents import OracleAgent  # noqa: E402
from codegym.integrations.verifiers import TASKSET_ID, CodegymEnv, CodegymTask, load_environment  # noqa: E402
from codegym.tasks.suite import load_suite  # noqa: E402

REPO = Path(codegym.__file__).resolve().parent.parent
ENV_ID = "codegym/LCB-v0"
SOLVED, FAILED = "lcb/best-study-rate", "lcb/balanced-ab-substring"
WRONG = ("```python\nclass Solution:\n    def longestBalanced(self, s: str) -> int:\n"
         "        return len(s) - len(s) % 2\n```\n")


def _oracle_action(task_id: str) -> str:
    env = gym.make(ENV_ID)
    obs, info = env.reset(seed=0, options={"task_id": task_id})
    agent = OracleAgent()
    agent.reset(task=env.unwrapped.task)
    env.close()
    return agent.act(obs, info)


def _in_process(task_id: str, replies: list[str]) -> dict:
    """The rewards, verdict and observations codegym gives `replies` played in order."""
    env = gym.make(ENV_ID)
    obs, _ = env.reset(seed=0, options={"task_id": task_id})
    observations, done, i = [obs], False, 0
    while not done:
        obs, reward, terminated, truncated, info = env.step(replies[i] if i < len(replies) else "submit")
        observations.append(obs)
        done, i = terminated or truncated, i + 1
    env.close()
    return {"reward": reward, "verdict": info["judge"]["verdict"], "turns": i, "observations": observations,
            "pass_fraction": info["reward_components"]["pass_fraction"]}


def test_the_taskset_id_loads_codegym():
    env = load_environment("codegym/Suite-v0", suite="examples", tasks=["examples/bracket-depth"], max_turns=2)
    assert isinstance(env, CodegymEnv) and env.config.taskset.id == TASKSET_ID
    (task,) = list(env.taskset)
    assert isinstance(task, CodegymTask) and task.data.options == {"suite": "examples", "max_turns": 2}
    want, _ = gym.make("codegym/Suite-v0", suite="examples", max_turns=2).reset(
        seed=0, options={"task_id": "examples/bracket-depth"})
    assert task.data.prompt == want
    everything = load_environment("codegym/Suite-v0", suite="examples").taskset
    assert [t.data.task_id for t in everything] == load_suite("examples").ids
    with pytest.raises(ValueError, match="unknown codegym env"):
        list(load_environment("codegym/Nope-v0").taskset)


def test_vf_eval_plays_codegym_with_the_env_feedback(tmp_path):
    if shutil.which("uv") is None:
        pytest.fail("verifiers' null harness runs its chat program with uv: pip install 'codegym[verifiers]'")
    script = {SOLVED: [_oracle_action(SOLVED)], FAILED: [WRONG, "submit"]}

    def respond(request: dict) -> str:
        messages = request["messages"]
        task_id = next(t for t in script if f"Task `{t}`" in str(messages[0]["content"]))
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return script[task_id][turn]

    want = {t: _in_process(t, replies) for t, replies in script.items()}
    # the command of docs/verifiers.md as written, with this machine's model, endpoint, key
    # variable and output folder; then the two tasks, no live display, a fixed run name
    (_, documented), = documented_commands(REPO / "docs" / "verifiers.md", "vf-eval")
    assert documented[:2] == ["vf-eval", TASKSET_ID]
    assert documented[documented.index("--env.taskset.env-id") + 1] == ENV_ID
    with FakeOpenAIServer(responder=respond) as fake:
        mine = {"MODEL": "fake-model", "http://127.0.0.1:8000/v1": fake.base_url, "MY_KEY": "FAKE_API_KEY",
                "outputs": str(tmp_path)}
        cmd = [sys.executable, "-c", "from verifiers.v1.cli.eval.main import main; main()",
               *[mine.get(a, a) for a in documented[1:]],
               "--env.taskset.tasks", json.dumps(list(script)), "--no-rich", "--run.name", "codegym"]
        proc = subprocess.run(cmd, env={**os.environ, "FAKE_API_KEY": "unused"}, capture_output=True, text=True,
                              timeout=900)
        assert proc.returncode == 0, proc.stderr[-4000:]
        requests = list(fake.requests)
    episodes = [json.loads(line) for line in (tmp_path / "codegym" / "traces.jsonl").read_text().splitlines()]
    assert len(episodes) == 2 and all(ep["ok"] for ep in episodes)
    for ep in episodes:
        (trace,) = ep["traces"]
        task_id = ep["task"]["data"]["task_id"]
        got, expected = trace["info"]["codegym"], want[task_id]
        assert trace["rewards"] == {"codegym_reward": {"score": expected["reward"], "weight": 1.0}}
        assert trace["metrics"] == {"pass_fraction": expected["pass_fraction"], "turns": float(expected["turns"]),
                                    "correct": float(expected["verdict"] == "accepted")}
        assert got["verdict"] == expected["verdict"] and got["final_observation"] == expected["observations"][-1]
    assert want[SOLVED]["verdict"] == "accepted" and want[FAILED]["verdict"] != "accepted"
    # multi-turn: the failed task's second request answers the env's feedback on the wrong program
    second = [r for r in requests if f"Task `{FAILED}`" in str(r["messages"][0]["content"])][-1]
    assert second["messages"][-1] == {"role": "user", "content": want[FAILED]["observations"][1]}
