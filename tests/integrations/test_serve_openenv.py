"""`codegym serve` over OpenEnv: openenv-core's own server and clients (``EnvClient`` / ``SyncEnvClient``).

A real server (`ServerThread`: uvicorn on a loopback port) plays codegym's reference agents
(oracle, baseline) through openenv's client and gets the rewards and verdicts of the same
episodes played in-process with ``gym.make``; the tools, the MCP JSON-RPC route, the
limits (token, request size, max sessions, idle reaper), freeing a closed session, and a
small concurrent run (16 sessions x 5 steps, none lost or crossed) are checked too. The
64 x 20 load test is `benchmarks/serve_load.py`.
"""

from __future__ import annotations

import concurrent.futures
import gc
import http.client
import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

os.environ.setdefault("ORS_LOG_LEVEL", "WARNING")  # ors' loggers read it when ors is first imported
pytest.importorskip("openenv.core", reason="needs openenv-core (pip install 'codegym[openenv]')")
pytest.importorskip("ors", reason="needs ors-sdk (pip install 'codegym[ors]')")

from _serve_play import in_process, play_openenv, task_of, tool_calls_of  # noqa: E402
from openenv.core import GenericEnvClient  # noqa: E402

from codegym.agents import BaselineAgent, OracleAgent  # noqa: E402
from codegym.integrations.openenv import CodegymAction, CodegymEnvClient  # noqa: E402
from codegym.integrations.serve import ServerThread  # noqa: E402
from codegym.integrations.sessions import ServeLimits, SessionManager  # noqa: E402

TOKEN = "s3cret-token"

ORACLE, ORACLE_2, BASELINE = (OracleAgent, lambda: OracleAgent(format="unified_diff", submit_turn=2),
                              BaselineAgent)
#: (env id, task, env options, agents): rewards that do not depend on measured times
EPISODES = [
    ("codegym/LCB-v0", "lcb/best-study-rate", {}, (ORACLE, ORACLE_2, BASELINE)),
    ("codegym/LCB-v0", "lcb/balanced-ab-substring", {}, (ORACLE, BASELINE)),
    ("codegym/Suite-v0", "examples/bracket-depth", {"suite": "examples", "max_turns": 3}, (ORACLE_2, BASELINE)),
    ("codegym/PerfCode-v0", "perfcode/c-column-stats", {"reward": "pass_fraction"}, (ORACLE, BASELINE)),
    ("codegym/SWE-v0", "swe/inikit-value-delimiters", {}, (ORACLE, BASELINE)),
]


@pytest.fixture(scope="module")
def server():
    manager = SessionManager(ServeLimits(max_sessions=24, idle_timeout_s=600, max_request_bytes=256 * 1024,
                                         token=TOKEN))
    with ServerThread(manager) as srv:
        yield srv


def client(srv, token=TOKEN):
    return CodegymEnvClient(srv.openenv_url, token=token).sync()


def _get(url: str, token: str | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


@pytest.mark.parametrize("env_id,task_id,options,agents", EPISODES, ids=[e[1] for e in EPISODES])
def test_reference_agents_get_the_in_process_rewards(server, env_id, task_id, options, agents):
    for make in agents:
        want = in_process(env_id, task_id, make(), options)
        with client(server) as env:
            got = play_openenv(env, make(), env_id, task_id, options)
        assert (got["reward"], got["verdict"], got["turns"]) == (want["reward"], want["verdict"], want["turns"])
        assert got["first_observation"] == want["first_observation"]
        info = got["last"].observation.info
        assert got["last"].observation.judge == info["judge"] and info["submitted"]


def test_oracle_through_the_tools(server):
    env_id, task_id = "codegym/LCB-v0", "lcb/best-study-rate"
    want = in_process(env_id, task_id, OracleAgent(), {"max_turns": 5})
    with client(server) as env:
        tools = {t["name"] for t in env.list_tools()}
        assert {"view_file", "write_file", "str_replace", "run_tests", "submit", "act"} <= tools
        r = env.reset(env_id=env_id, task_id=task_id, max_turns=5)
        oracle = OracleAgent(format="tool_call")
        oracle.reset(task=task_of(task_id))
        calls = tool_calls_of(oracle.act(r.observation.text, r.observation.info))
        r = env.call_tool("view_file", path="main.py")
        assert r.reward == 0.0 and not r.done and "main.py" in r.observation.text and r.observation.judge is None
        r = env.call_tool("run_tests")  # the starter fails its public tests: the report comes back
        assert r.observation.judge["verdict"] != "accepted" and not r.done
        for name, args in calls:
            r = env.call_tool(name, **args)
            assert r.observation.tool_name == name and r.observation.result["reward"] == r.reward
        assert r.done and r.reward == want["reward"] and r.observation.judge["verdict"] == "accepted"
        state = env.state()
        assert state.step_count == 2 + len(calls) and state.done and state.task_id == task_id


def test_bad_input_is_an_error_or_feedback_and_loses_nothing(server):
    with client(server) as env:
        with pytest.raises(RuntimeError, match="reset"):
            env.step(CodegymAction(action="submit"))
        r = env.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate")
        files = r.observation.info["files"]
        with pytest.raises(RuntimeError, match="unknown tool"):
            env.call_tool("rm_rf", path="/")
        with pytest.raises(RuntimeError, match="missing"):
            env.call_tool("write_file", path="main.py")
        r = env.step(CodegymAction(action="<<<<<<< SEARCH\nnot in the file\n=======\nx\n>>>>>>> REPLACE\n"))
        assert r.observation.info["error"] and not r.done and r.observation.info["files"] == files
        r = env.call_tool("str_replace", path="main.py", old_str="no such text", new_str="x")
        assert r.observation.info["error"] and not r.done
        with pytest.raises(RuntimeError, match="unknown reset argument"):
            env.reset(env_id="codegym/LCB-v0", sandbox="docker")
        with pytest.raises(RuntimeError, match="not served"):
            env.reset(env_id="codegym/Nope-v0")
        r = env.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate")  # the session still works
        assert r.observation.info["files"] == files


def test_token_is_required(server):
    status, _ = _get(server.url + "/codegym/sessions")
    assert status == 401
    assert _get(server.url + "/codegym/sessions", "wrong")[0] == 401
    status, stats = _get(server.url + "/codegym/sessions", TOKEN)
    assert status == 200 and stats["max_sessions"] == 24
    assert _get(server.url + "/health")[0] == 200  # liveness probes need no token
    for token in (None, "wrong"):
        with pytest.raises(ConnectionError):
            client(server, token).connect()


def test_request_size_is_capped(server):
    big = json.dumps({"jsonrpc": "2.0", "method": "tools/list", "params": {"pad": "x" * 300_000}}).encode()
    req = urllib.request.Request(server.openenv_url + "/mcp", data=big, method="POST",
                                 headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req)
    assert e.value.code == 413
    conn = http.client.HTTPConnection("127.0.0.1", server.port)  # no Content-Length: counted while read
    conn.request("POST", "/openenv/mcp", body=(b"x" * 8192 for _ in range(40)), encode_chunked=True,
                 headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    assert conn.getresponse().status == 413
    conn.close()
    with client(server) as env:
        env.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate")
        with pytest.raises(Exception):  # noqa: B017 (the server closes the socket: 1009, message too big)
            env.step(CodegymAction(action="x" * 300_000))
    with client(server) as env:  # the server is fine
        assert not env.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate").done


def test_mcp_json_rpc_route(server):
    def rpc(method, **params):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        req = urllib.request.Request(server.openenv_url + "/mcp", data=body, method="POST", headers={
            "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())

    sid = rpc("openenv/session/create")["result"]["session_id"]
    try:
        tools = {t["name"] for t in rpc("tools/list", session_id=sid)["result"]["tools"]}
        assert {"start_episode", "write_file", "submit"} <= tools
        task = task_of("lcb/best-study-rate")
        res = rpc("tools/call", session_id=sid, name="start_episode",
                  arguments={"env_id": "codegym/LCB-v0", "task_id": task.id})["result"]
        assert res["structured_content"]["info"]["task_id"] == task.id
        src = task.solution("reference").files[task.main_file]
        rpc("tools/call", session_id=sid, name="write_file", arguments={"path": task.main_file, "content": src})
        res = rpc("tools/call", session_id=sid, name="submit", arguments={})["result"]["structured_content"]
        assert res["done"] and res["reward"] == 1.0 and res["info"]["judge"]["verdict"] == "accepted"
    finally:
        assert rpc("openenv/session/close", session_id=sid)["result"]["closed"]


def test_closed_session_frees_its_env_and_working_tree(server):
    manager = server.manager
    with client(server) as env:
        r = env.reset(env_id="codegym/SWE-v0", task_id="swe/inikit-value-delimiters")
        sid = r.observation.session_id
        session = manager.get(sid)
        root = Path(session.env.unwrapped.workspace.root)
        assert root.is_dir()
    # the client's close ends the server's session (the WebSocket handler closes the env)
    assert manager.wait_for(lambda m: sid not in m.sessions, timeout=120)
    assert session.closed and session.env is None
    assert not root.exists()
    gc.collect()
    assert all(getattr(e, "workspace", None) is None or e.workspace.root != root for e in manager._envs)


def test_idle_session_expires_and_frees(server):
    manager = server.manager
    with client(server) as env:
        sid = env.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate").observation.session_id
        session = manager.get(sid)
        assert manager.reap(now=time.monotonic() + 1) == []  # not idle yet
        assert sid in manager.reap(now=time.monotonic() + 601)
        assert session.expired and session.env is None and sid not in manager.sessions
        with pytest.raises(RuntimeError, match="without a request"):
            env.call_tool("view_file", path="main.py")
        r = env.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate")  # a new session
        assert r.observation.session_id != sid and not r.done


def test_max_sessions():
    manager = SessionManager(ServeLimits(max_sessions=2))
    with ServerThread(manager) as srv:
        a, b, c = (CodegymEnvClient(srv.openenv_url).sync() for _ in range(3))
        try:
            for e in (a, b):
                e.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate")
            with pytest.raises(RuntimeError, match="capacity"):
                c.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate")
            a.close()
            assert manager.wait_for(lambda m: len(m.sessions) < 2, timeout=120)
            c = GenericEnvClient(base_url=srv.openenv_url).sync()  # openenv's own dict client works too
            r = c.reset(env_id="codegym/LCB-v0", task_id="lcb/best-study-rate")
            assert not r.done and r.observation["task_id"] == "lcb/best-study-rate"
            r = c.step({"action": "submit"})
            assert r.done and r.reward == 0.0 and r.observation["judge"]["verdict"] == "wrong_answer"
        finally:
            for e in (b, c):
                e.close()


def test_concurrent_sessions_are_not_lost_or_crossed(server):
    """16 sessions x 5 steps at once: every step sees its own session's file, all end, none leak."""
    before = server.manager.counts["opened"]

    def one(i: int) -> list[str]:
        marker = f"session-{i}-marker"
        seen = []
        with client(server) as env:
            r = env.reset(env_id="codegym/Suite-v0", suite="examples", max_turns=6, task_id="examples/bracket-depth")
            sid = r.observation.session_id
            for step in range(4):
                content = f"# {marker} step {step}\n"
                r = env.call_tool("write_file", path="notes.py", content=content) if step % 2 == 0 else \
                    env.call_tool("view_file", path="notes.py")
                assert r.observation.session_id == sid
                seen.append(r.observation.info["files"].get("notes.py", ""))
            r = env.call_tool("submit")
            assert r.done and r.observation.judge is not None
        return seen

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(one, range(16)))
    for i, seen in enumerate(results):
        assert seen == [f"# session-{i}-marker step {s - s % 2}\n" for s in range(4)]
    assert server.manager.counts["opened"] - before == 16


def test_cli_wires_the_server(monkeypatch, capsys):
    from codegym.cli.main import main
    from codegym.integrations import serve

    seen = {}
    monkeypatch.setattr(serve, "run", lambda manager, **kw: seen.update(manager=manager, **kw))
    monkeypatch.setenv("CODEGYM_SERVE_TOKEN", "from-env")
    assert main(["serve", "--port", "8123", "--env", "codegym/LCB-v0", "--env", "codegym/Suite-v0", "--suite",
                 "examples", "--max-sessions", "5", "--idle-timeout", "0", "--reward", "binary",
                 "--protocol", "ors"]) == 0
    m = seen["manager"]
    assert m.env_ids == ["codegym/LCB-v0", "codegym/Suite-v0"] and m.env_kwargs == {"reward": "binary"}
    assert (m.limits.max_sessions, m.limits.idle_timeout_s, m.limits.token) == (5, None, "from-env")
    assert seen["port"] == 8123 and seen["protocols"] == ("ors",)
    assert "ORS at http://127.0.0.1:8123" in capsys.readouterr().out
    assert main(["serve", "--env", "codegym/Nope-v0"]) == 2
    assert "unknown env ids" in capsys.readouterr().err
