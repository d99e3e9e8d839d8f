"""Tests of codegym.rollout records and collection: JSONL round trip, groups, tokens, resume."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import gymnasium as gym
import pytest

import codegym
from codegym.agents import MutantAgent, OracleAgent
from codegym.rollout import Step, Trajectory, collect, read_jsonl, write_jsonl
from codegym.rollout.episode import play_episode
from codegym.rollout.jobs import EpisodeJob, make_jobs
from codegym.rollout.records import append_jsonl, repair_jsonl, state_hash

ENV = "codegym/Suite-v0"
KW = {"suite": "examples"}
#: mutations that finish fast (no `loop`: a timeout costs seconds)
FAST_KINDS = ["syntax", "crash", "output", "operator"]
#: measurements that differ between two runs of the same episode
VOLATILE = {"elapsed_s", "wall_s", "time_s", "cpu_s", "memory_mb", "max_rss_mb", "episode_s", "timing"}


def essence(obj):
    """A record without its timings and memory readings (what two runs must agree on)."""
    if isinstance(obj, Trajectory):
        obj = obj.to_dict()
    if isinstance(obj, dict):
        return {k: essence(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [essence(v) for v in obj]
    return obj


def repo_env() -> dict[str, str]:
    """Environment for a child interpreter that imports this checkout of codegym."""
    root = str(Path(codegym.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


# --------------------------------------------------------------------------- records


def test_records_round_trip_exact_floats_and_unknown_keys(tmp_path):
    floats = [0.1 + 0.2, 1e-300, 5e-324, -0.0, 1 / 3, 12345678.901234567]
    step = Step(index=0, observation="obs π\n", action="```py\nx\n```", reward=floats[0],
                prompt_ids=[1, 2], response_ids=[3], logprobs=floats[1:4], messages=[{"role": "user", "content": "hi"}],
                diff_units=[{"path": "main.py", "span": [0, 3]}], pre_state=state_hash({"main.py": "x"}),
                info={"turn": 1})
    traj = Trajectory(task_id="t/a", task_hash="h" * 64, group_id="g", sample_index=1, env_id=None,
                      agent="oracle", seed=3, steps=[step], final_reward=floats[4], total_reward=floats[5],
                      reward_components={"x": floats[2]}, verdict="accepted", metadata={"k": [1, "two"]})
    back = Trajectory.from_json(traj.to_json())
    assert back == traj
    assert math.copysign(1.0, back.steps[0].logprobs[2]) == -1.0  # -0.0 keeps its sign
    assert back.steps[0].logprobs[1] == 5e-324
    # keys written by a newer writer survive a read/write cycle
    d = traj.to_dict()
    d["advantages"] = [0.5]
    d["steps"][0]["token_advantages"] = [0.25]
    again = Trajectory.from_dict(json.loads(json.dumps(d)))
    assert again.to_dict() == d
    assert again.extra == {"advantages": [0.5]}
    # JSONL files
    path = tmp_path / "t.jsonl"
    assert write_jsonl(path, [traj, again]) == 2
    assert read_jsonl(path) == [traj, again]
    assert traj.episode_key == "g/1"


def test_truncated_last_line_is_dropped_and_repaired(tmp_path):
    t = Trajectory(task_id="a", task_hash="h", group_id="g", sample_index=0, env_id=None, agent="x", seed=0)
    path = tmp_path / "r.jsonl"
    append_jsonl(path, t)
    whole = path.read_bytes()
    path.write_bytes(whole + whole[: len(whole) // 2])  # an interrupted second write
    with pytest.warns(UserWarning, match="truncated"):
        assert read_jsonl(path) == [t]
    with pytest.raises(ValueError, match=":2:"):
        read_jsonl(path, strict=True)
    assert repair_jsonl(path) == len(whole) // 2
    assert path.read_bytes() == whole
    # a whole record that only lacks its newline is kept (and gets one)
    path.write_bytes(whole + whole[:-1])
    assert repair_jsonl(path) == 0
    assert read_jsonl(path) == [t, t]
    # a bad line in the middle is an error, with its line number
    path.write_bytes(whole + b"{oops\n" + whole)
    with pytest.raises(ValueError, match="r.jsonl:2:"):
        read_jsonl(path)


# --------------------------------------------------------------------------- collection


def test_collect_jsonl_round_trip_and_groups(tmp_path):
    out = tmp_path / "c.jsonl"
    trajs = collect(ENV, OracleAgent(), group_size=2, num_envs=2, seed=7, out=out, env_kwargs=KW,
                    progress=False)
    suite_ids = [t.id for t in gym.make(ENV, **KW).unwrapped.tasks]
    assert len(trajs) == 2 * len(suite_ids)
    # ordered by (group, sample index) whatever the completion order
    assert [t.task_id for t in trajs] == [tid for tid in suite_ids for _ in range(2)]
    assert [t.sample_index for t in trajs] == [0, 1] * len(suite_ids)
    for a, b in zip(trajs[::2], trajs[1::2]):
        assert a.group_id == b.group_id and a.task_id == b.task_id and a.seed != b.seed
    assert len({t.group_id for t in trajs}) == len(suite_ids)
    assert len({t.episode_key for t in trajs}) == len(trajs)
    assert all(t.verdict == "accepted" and t.final_reward == 1.0 for t in trajs)
    assert all(t.env_id == ENV and t.agent == "oracle" for t in trajs)
    # reload: the file holds exactly the returned records (in completion order)
    back = read_jsonl(out)
    assert sorted(back, key=lambda t: t.episode_key) == sorted(trajs, key=lambda t: t.episode_key)
    # ids and seeds are a function of (task, hash, seed): a second run agrees, another seed does not
    jobs = make_jobs(gym.make(ENV, **KW).unwrapped.tasks, 2, 7)
    assert [(j.group_id, j.sample_index, j.seed) for j in jobs] == \
        [(t.group_id, t.sample_index, t.seed) for t in trajs]
    other = make_jobs(gym.make(ENV, **KW).unwrapped.tasks, 2, 8)
    assert not {j.group_id for j in jobs} & {j.group_id for j in other}
    # a task listed twice forms two groups
    twice = collect(ENV, OracleAgent(), tasks=[suite_ids[0], suite_ids[0]], group_size=1, seed=7,
                    env_kwargs=KW, progress=False)
    assert twice[0].group_id == trajs[0].group_id and twice[1].group_id != twice[0].group_id


def test_pre_state_and_steps():
    env = gym.make(ENV, **KW)
    task = env.unwrapped.tasks[0]
    job = make_jobs([task], 1, 0)[0]
    traj = play_episode(env, OracleAgent(submit_turn=2), job)
    obs0, info0 = env.reset(options={"task_id": task.id})
    assert [s.index for s in traj.steps] == [0, 1]
    assert traj.steps[0].observation == obs0
    assert traj.steps[0].pre_state == state_hash(info0["files"])
    # step 1 starts from what step 0 wrote: the reference solution
    ref = dict(task.solution(task.reference_name or "reference").files)
    assert traj.steps[1].pre_state == state_hash({**info0["files"], **ref}) != traj.steps[0].pre_state
    assert traj.steps[0].diff and traj.steps[0].diff_units and not traj.steps[1].diff
    assert traj.steps[1].action == "submit" and traj.steps[1].terminated
    assert traj.total_reward == traj.final_reward == 1.0 and traj.verdict == "accepted"
    assert traj.steps[0].judge["split"] == "public" and traj.steps[1].judge["split"] == "hidden"
    assert traj.reward_components["correct"] == 1.0
    assert traj.metadata["final_state"] == traj.steps[1].pre_state
    env.close()


class TokenAgent:
    """Oracle that reports fake token ids on its first turn only (like a model agent would)."""

    name = "tokens"

    def __init__(self) -> None:
        self.inner = OracleAgent(submit_turn=2)
        self.last_turn = None
        self.turn = 0

    def reset(self, task=None, seed=None) -> None:
        self.inner.reset(task, seed)
        self.turn = 0

    def act(self, observation, info):
        self.turn += 1
        text = self.inner.act(observation, info)
        if self.turn == 1:  # only the first turn sets it: a stale value must not leak to turn 2
            self.last_turn = {"prompt_ids": [5, 6, 7], "response_ids": [ord(c) for c in text[:4]],
                              "logprobs": [-0.5, -0.25, -0.125, -1e-9],
                              "messages": [{"role": "user", "content": observation[:10]}],
                              "finish_reason": "stop", "usage": {"completion_tokens": 4}}
        return text


def test_token_ids_from_last_turn(tmp_path):
    out = tmp_path / "tok.jsonl"
    trajs = collect(ENV, TokenAgent(), tasks=1, group_size=1, env_kwargs=KW, out=out, progress=False)
    s0, s1 = trajs[0].steps
    assert s0.prompt_ids == [5, 6, 7] and s0.response_ids == [ord(c) for c in s0.action[:4]]
    assert s0.logprobs == [-0.5, -0.25, -0.125, -1e-9]
    assert s0.messages == [{"role": "user", "content": s0.observation[:10]}]
    assert s0.info["finish_reason"] == "stop" and s0.info["usage"] == {"completion_tokens": 4}
    assert s1.prompt_ids is s1.response_ids is s1.logprobs is s1.messages is None
    assert read_jsonl(out) == trajs
    # reference agents have no last_turn: no ids
    plain = collect(ENV, OracleAgent(), tasks=1, env_kwargs=KW, progress=False)
    assert plain[0].steps[0].response_ids is None


def test_collect_from_env_instance_and_processes():
    agent = MutantAgent(kinds=FAST_KINDS, seed=3)
    ref = collect(ENV, agent, group_size=2, max_episodes=4, env_kwargs=KW, progress=False)
    env = gym.make(ENV, **KW)
    from_env = collect(env, agent, group_size=2, num_envs=2, max_episodes=4, progress=False)
    procs = collect(ENV, agent, group_size=2, num_envs=2, max_episodes=4, env_kwargs=KW,
                    progress=False, workers="process")
    assert len(ref) == 4
    assert [essence(t) for t in from_env] == [essence(t) for t in ref]
    assert [essence(t) for t in procs] == [essence(t) for t in ref]
    env.close()
    # a list of pre-built envs (here made with a sandbox object, whose spec Gymnasium
    # cannot copy): one thread per env
    from codegym.sandbox import make_sandbox
    envs = [gym.make(ENV, sandbox=make_sandbox("local"), **KW) for _ in range(2)]
    listed = collect(envs, agent, group_size=2, max_episodes=4, progress=False)
    assert [essence(t) for t in listed] == [essence(t) for t in ref]
    for e in envs:
        e.close()


# --------------------------------------------------------------------------- resume

CHILD = textwrap.dedent("""
    import os, signal, sys, threading
    from codegym.agents import MutantAgent
    from codegym.rollout import collect

    out, ready = sys.argv[1], sys.argv[2]
    release = threading.Event()   # set when the parent interrupts the run (SIGINT)
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum, frame):
        release.set()
        return previous(signum, frame)   # the default handler: KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)

    class Held(MutantAgent):
        # same actions as MutantAgent (and the same name); once 3 episodes are on disk,
        # every worker waits here until the parent interrupts the run, and the parent is
        # told so (no deadline: the run is stopped part-way whatever the machine's load)
        def act(self, observation, info):
            if os.path.exists(out) and open(out, "rb").read().count(b"\\n") >= 3:
                open(ready, "a").close()
                release.wait()
            return super().act(observation, info)

    collect("codegym/Suite-v0", Held(kinds={kinds!r}, seed=5), group_size=3, num_envs=2, seed=11,
            out=out, env_kwargs={{"suite": "examples"}}, progress=False)
""")


def _wait_for(path: Path, proc: subprocess.Popen, guard_s: float = 600.0) -> None:
    """Wait until `path` exists (the child is held part-way) or the child ends; `guard_s`
    only turns a hang into a failure, it does not decide how far the child got."""
    end = time.monotonic() + guard_s
    while not path.exists():
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"the child ended before it was held part-way (rc {proc.returncode}): {err[-2000:]!r}")
        if time.monotonic() > end:
            proc.kill()
            pytest.fail(f"the child was not held part-way within {guard_s:.0f} s")
        time.sleep(0.02)


class CountingMutant(MutantAgent):
    """MutantAgent that records the episodes it starts (shared by its worker copies)."""

    played: list = []

    def reset(self, task=None, seed=None) -> None:
        CountingMutant.played.append(seed)
        super().reset(task, seed)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_resume_after_interruption(tmp_path, sig):
    out = tmp_path / "resume.jsonl"
    ready = tmp_path / "held"
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(kinds=FAST_KINDS))
    proc = subprocess.Popen([sys.executable, str(script), str(out), str(ready)], env=repo_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for(ready, proc)
    proc.send_signal(sig)
    proc.communicate(timeout=120)
    done_before = out.read_bytes().count(b"\n")
    assert 3 <= done_before < 15
    # what an interrupted write leaves: half a line
    with out.open("ab") as fh:
        fh.write(b'{"task_id": "examples/bracket-depth", "steps": [{"ind')

    agent = CountingMutant(kinds=FAST_KINDS, seed=5)
    CountingMutant.played.clear()
    resumed = collect(ENV, agent, group_size=3, num_envs=2, seed=11, out=out, env_kwargs=KW, progress=False)
    assert len(CountingMutant.played) == 15 - done_before  # finished episodes are not replayed
    on_disk = read_jsonl(out, strict=True)  # repaired: no truncated line left
    keys = [t.episode_key for t in on_disk]
    assert len(keys) == len(set(keys)) == 15  # every episode exactly once
    assert sorted(keys) == sorted(t.episode_key for t in resumed)
    fresh = collect(ENV, agent, group_size=3, num_envs=1, seed=11, env_kwargs=KW, progress=False)
    assert [essence(t) for t in resumed] == [essence(t) for t in fresh]
    by_key = {t.episode_key: t for t in on_disk}
    assert [essence(by_key[t.episode_key]) for t in fresh] == [essence(t) for t in fresh]
    # the verdicts are varied (the mutants fail in different ways), not all one value
    assert len({t.verdict for t in fresh}) >= 2
    # a rerun finds everything done and plays nothing
    again = collect(ENV, agent, group_size=3, seed=11, out=out, env_kwargs=KW, progress=False)
    assert again == resumed
    assert out.read_bytes().count(b"\n") == 15


def test_resume_refuses_another_agents_file(tmp_path):
    out = tmp_path / "a.jsonl"
    collect(ENV, OracleAgent(), tasks=1, env_kwargs=KW, out=out, progress=False)
    with pytest.raises(ValueError, match="agent 'oracle'"):
        collect(ENV, MutantAgent(kinds=FAST_KINDS), tasks=1, env_kwargs=KW, out=out, progress=False)


def test_job_checks_task_hash():
    env = gym.make(ENV, **KW)
    task = env.unwrapped.tasks[0]
    job = EpisodeJob(task_id=task.id, seed=0, group_id="g", sample_index=0, task_hash="0" * 64)
    with pytest.raises(RuntimeError, match="changed"):
        play_episode(env, OracleAgent(), job)
    env.close()


def test_ray_backend_without_ray_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(RuntimeError, match=r"pip install 'codegym\[ray\]'"):
        collect(ENV, OracleAgent(), tasks=1, env_kwargs=KW, progress=False, backend="ray")


def test_replay_agent_replays_each_recording_once_across_workers(tmp_path):
    """`ReplayAgent.fork` shares the recordings: with two env workers every recorded
    episode is played exactly once (no worker replays another's)."""
    from codegym.agents import ReplayAgent
    task_id = gym.make(ENV, **KW).unwrapped.tasks[0].id
    rec = tmp_path / "rec.jsonl"
    # four recordings of one task, told apart by a first action that fails to parse
    rec.write_text("".join(json.dumps({"task_id": task_id, "actions": [f"not an edit #{k}", "submit"]}) + "\n"
                           for k in range(4)))
    trajs = collect(ENV, ReplayAgent(rec), tasks=[task_id], group_size=4, num_envs=2, env_kwargs=KW,
                    progress=False)
    firsts = sorted(t.steps[0].action for t in trajs)
    assert firsts == [f"not an edit #{k}" for k in range(4)]
