"""`codegym serve` over the Open Reward Standard: ``ors.Server`` and the ``ors.client.ORS`` client.

A real server (`ServerThread`) plays codegym's reference agents through ORS sessions (the
``act`` tool, and the edit tools one by one) and gets the rewards, verdicts and first
observation of the same episodes played in-process with ``gym.make``; task listing, the
token (ORS clients send ``X-API-Key``), a deleted or idle-expired session freeing its env,
and the protocols sharing one session limit are checked too.
"""

from __future__ import annotations

import os
import time

import pytest

os.environ.setdefault("ORS_LOG_LEVEL", "WARNING")  # ors' loggers read it when ors is first imported
pytest.importorskip("ors", reason="needs ors-sdk (pip install 'codegym[ors]')")
pytest.importorskip("openenv.core", reason="needs openenv-core (pip install 'codegym[openenv]')")

from _serve_play import in_process, play_ors, task_of, tool_calls_of  # noqa: E402
from ors.client import ORS, AuthenticationError  # noqa: E402

from codegym.agents import BaselineAgent, OracleAgent  # noqa: E402
from codegym.integrations.openenv import CodegymEnvClient  # noqa: E402
from codegym.integrations.ors import ors_name  # noqa: E402
from codegym.integrations.serve import ServerThread  # noqa: E402
from codegym.integrations.sessions import ServeLimits, SessionManager  # noqa: E402
from codegym.tasks.suite import load_suite  # noqa: E402

TOKEN = "ors-token"
EPISODES = [
    ("codegym/LCB-v0", "lcb/best-connected-district", (OracleAgent, BaselineAgent)),
    ("codegym/SWE-v0", "swe/centsplit-lost-cent", (OracleAgent, BaselineAgent)),
]


@pytest.fixture(scope="module")
def server():
    manager = SessionManager(ServeLimits(max_sessions=8, token=TOKEN))
    with ServerThread(manager) as srv:
        yield srv


@pytest.fixture
def ors_client(server):
    with ORS(server.url, api_key=TOKEN) as c:
        yield c


def test_environments_and_tasks(ors_client):
    env = ors_client.environment(ors_name("codegym/LCB-v0"))
    assert env.list_splits() == ["test"]
    tasks = env.list_tasks("test")
    assert [t.task_spec["task_id"] for t in tasks] == load_suite("lcb").ids
    names = {t.name for t in env.list_tools()}
    assert {"view_file", "write_file", "str_replace", "insert", "run_tests", "submit", "act", "state"} <= names
    examples = ors_client.environment("codegym-suite-examples")
    assert len(examples.list_tasks("test")) == len(load_suite("examples"))


@pytest.mark.parametrize("env_id,task_id,agents", EPISODES, ids=[e[1] for e in EPISODES])
def test_reference_agents_get_the_in_process_rewards(server, ors_client, env_id, task_id, agents):
    env = ors_client.environment(ors_name(env_id))
    for make in agents:
        want = in_process(env_id, task_id, make())
        with env.session(task=next(t for t in env.list_tasks("test") if t.task_spec["task_id"] == task_id)) as s:
            got = play_ors(s, make(), task_id)
        assert (got["reward"], got["verdict"], got["turns"]) == (want["reward"], want["verdict"], want["turns"])
        assert got["first_observation"] == want["first_observation"]
    assert server.manager.wait_for(lambda m: not m.sessions, timeout=120)


def test_tools_one_by_one(ors_client):
    env_id, task_id = "codegym/LCB-v0", "lcb/best-study-rate"
    want = in_process(env_id, task_id, OracleAgent(), {"max_turns": 6})
    env = ors_client.environment(ors_name(env_id))
    with env.session(task=type(env.list_tasks("test")[0])(env.name, {"task_id": task_id, "options": {
            "max_turns": 6}})) as s:
        prompt = s.get_prompt()[0]
        st = s.call_tool("state")
        assert st.reward is None and st.metadata["turns_left"] == 6 and st.metadata["task_id"] == task_id
        out = s.call_tool("view_file", {"path": "main.py"})
        assert out.reward == 0.0 and not out.finished and out.metadata["judge"] is None
        out = s.call_tool("run_tests")
        assert out.metadata["judge"]["verdict"] != "accepted" and not out.finished
        oracle = OracleAgent(format="tool_call")
        oracle.reset(task=task_of(task_id))
        for name, args in tool_calls_of(oracle.act(prompt.text, prompt.detail["info"])):
            out = s.call_tool(name, args)
        assert out.finished and out.reward == want["reward"] and out.metadata["judge"]["verdict"] == "accepted"
        with pytest.raises(Exception, match="over"):
            s.call_tool("view_file", {"path": "main.py"})


def test_token(server):
    with ORS(server.url, api_key="wrong") as c, pytest.raises(AuthenticationError):
        c.environment(ors_name("codegym/LCB-v0")).list_tasks("test")


def test_deleted_and_expired_sessions_free_their_envs(server, ors_client):
    manager = server.manager
    env = ors_client.environment(ors_name("codegym/SWE-v0"))
    task = env.list_tasks("test")[0]
    with env.session(task=task) as s:
        s.get_prompt()  # the session is set up
        (session,) = manager.sessions.values()
        root = session.env.unwrapped.workspace.root
        assert root.is_dir()
    assert manager.wait_for(lambda m: not m.sessions, timeout=120)
    assert session.closed and not root.exists()
    with env.session(task=task) as s:
        s.get_prompt()
        (session,) = manager.sessions.values()
        root = session.env.unwrapped.workspace.root
        assert manager.reap(now=time.monotonic() + 10_000) == [session.id]
        assert session.expired and not root.exists()
        with pytest.raises(Exception, match="without a request"):
            s.call_tool("view_file", {"path": "README.md"})


def test_one_session_limit_for_both_protocols():
    manager = SessionManager(ServeLimits(max_sessions=1))
    with ServerThread(manager) as srv, CodegymEnvClient(srv.openenv_url).sync() as oe:
        oe.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate")
        with ORS(srv.url) as c:
            env = c.environment(ors_name("codegym/LCB-v0"))
            with pytest.raises(Exception, match="capacity"), env.session(task=env.list_tasks("test")[0]) as s:
                s.get_prompt()
        assert manager.counts["refused"] == 1
