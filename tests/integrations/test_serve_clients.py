"""Every client class of openenv-core and ors-sdk against `codegym serve`, with and without a token.

One server without a token and one with (`ServerThread`); each plays one episode of
``lcb/best-study-rate`` (the reference solution written, then submitted: reward 1) through
openenv's ``GenericEnvClient`` (async and ``.sync()``), the typed ``EnvClient`` /
``SyncEnvClient`` (`CodegymEnvClient`), ``MCPToolClient`` in simulation mode (WebSocket)
and in production mode (HTTP ``/mcp``), and ``ors.client.ORS`` / ``AsyncORS``. On the
token server the token goes the way docs/serve.md says for each client (the URL's
password for openenv's classes, ``token=`` for `CodegymEnvClient`, ``api_key=`` for ORS),
and each client without it is refused. Stateless calls out of order and refused sessions
get a 4xx / 503 with a message, never a 500.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

os.environ.setdefault("ORS_LOG_LEVEL", "WARNING")  # ors' loggers read it when ors is first imported
pytest.importorskip("openenv.core", reason="needs openenv-core (pip install 'codegym[openenv]')")
pytest.importorskip("ors", reason="needs ors-sdk (pip install 'codegym[ors]')")

import httpx  # noqa: E402
from _serve_play import task_of  # noqa: E402
from openenv.core import GenericEnvClient, MCPToolClient  # noqa: E402
from openenv.core.env_server import Observation  # noqa: E402
from ors.client import ORS, AsyncORS, AuthenticationError  # noqa: E402

from codegym.integrations.openenv import CodegymAction, CodegymEnvClient  # noqa: E402
from codegym.integrations.serve import ServerThread  # noqa: E402
from codegym.integrations.sessions import ServeLimits, SessionManager  # noqa: E402

TOKEN = "client-token"
ENV_ID, TASK_ID, ORS_ENV = "codegym/LCB-v0", "lcb/best-study-rate", "codegym-lcb-v0"
TASK = task_of(TASK_ID)
REFERENCE = TASK.solution("reference").files[TASK.main_file]


@pytest.fixture(scope="module", params=[None, TOKEN], ids=["no-token", "token"])
def server(request):
    manager = SessionManager(ServeLimits(max_sessions=6, token=request.param), env_ids=[ENV_ID])
    with ServerThread(manager) as srv:
        srv.token = request.param
        yield srv
    assert not manager.sessions


def url_with_token(srv, token: str | None) -> str:
    """The OpenEnv URL with the token as its password (what openenv's own classes send as Basic auth)."""
    return srv.openenv_url.replace("http://", f"http://codegym:{token}@") if token else srv.openenv_url


def http(srv, path: str, body: dict | None = None, token: str | None = None) -> tuple[int, dict, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(srv.url + path, data=None if body is None else json.dumps(body).encode(),
                                 headers=headers, method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, json.loads(r.read() or b"{}"), r.headers
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}"), e.headers


def test_generic_env_client(server):
    url = url_with_token(server, server.token)
    with GenericEnvClient(base_url=url).sync() as env:  # SyncEnvClient around the async client
        r = env.reset(env_id=ENV_ID, task_id=TASK_ID)
        assert not r.done and r.observation["task_id"] == TASK_ID and "tool_name" not in r.observation
        r = env.step({"type": "call_tool", "tool_name": "write_file",
                      "arguments": {"path": TASK.main_file, "content": REFERENCE}})
        assert r.observation["tool_name"] == "write_file" and not r.done
        r = env.step({"action": "submit"})
        assert r.done and r.reward == 1.0 and r.observation["judge"]["verdict"] == "accepted"
        assert env.state()["task_id"] == TASK_ID

    async def play() -> float:
        async with GenericEnvClient(base_url=url) as env:
            await env.reset(env_id=ENV_ID, task_id=TASK_ID)
            return (await env.step({"action": f"```python\n{REFERENCE}```\nsubmit"})).reward

    assert asyncio.run(play()) == 1.0


def test_typed_env_client(server):
    with CodegymEnvClient(server.openenv_url, token=server.token).sync() as env:  # SyncEnvClient
        assert env.reset(env_id=ENV_ID, task_id=TASK_ID).observation.tool_name is None
        env.call_tool("write_file", path=TASK.main_file, content=REFERENCE)
        r = env.step(CodegymAction(action="submit"))
        assert r.done and r.reward == 1.0 and r.observation.judge["verdict"] == "accepted"

    async def play() -> float:  # the async EnvClient, the token in the URL instead
        async with CodegymEnvClient(url_with_token(server, server.token)) as env:
            r = await env.reset(env_id=ENV_ID, task_id=TASK_ID)
            assert r.observation.text.startswith("# Best Study Rate")
            return (await env.step(CodegymAction(action=f"```python\n{REFERENCE}```\nsubmit"))).reward

    assert asyncio.run(play()) == 1.0


def test_mcp_tool_client_simulation_mode(server):
    with MCPToolClient(base_url=url_with_token(server, server.token)).sync() as env:
        r = env.reset(env_id=ENV_ID, task_id=TASK_ID)  # a ValidationError before (a null tool_name)
        assert type(r.observation) is Observation and not r.done
        assert r.observation.metadata["text"].startswith("# Best Study Rate")
        assert r.observation.metadata["task_id"] == TASK_ID
        assert {"view_file", "write_file", "submit"} <= {t.name for t in env.list_tools()}
        out = env.call_tool("write_file", path=TASK.main_file, content=REFERENCE)
        assert out["tool"] == "write_file" and not out["done"]
        out = env.call_tool("submit")
        assert out["done"] and out["reward"] == 1.0 and out["info"]["judge"]["verdict"] == "accepted"
        with pytest.raises(RuntimeError, match="episode is over"):
            env.call_tool("view_file", path=TASK.main_file)


def test_mcp_tool_client_production_mode(server):
    async def play() -> dict:
        env = MCPToolClient(base_url=url_with_token(server, server.token))
        env.use_production_mode = True  # HTTP /mcp (openenv/session/create, tools/call)
        try:
            assert "start_episode" in {t.name for t in await env.list_tools()}
            first = await env.call_tool("start_episode", env_id=ENV_ID, task_id=TASK_ID)
            assert first["info"]["task_id"] == TASK_ID
            await env.call_tool("write_file", path=TASK.main_file, content=REFERENCE)
            return await env.call_tool("submit")
        finally:
            await env.close()

    out = asyncio.run(play())
    assert out["done"] and out["reward"] == 1.0
    assert server.manager.wait_for(lambda m: not m.sessions, timeout=120)


def test_ors_clients(server):
    with ORS(server.url, api_key=server.token) as client:
        env = client.environment(ORS_ENV)
        task = next(t for t in env.list_tasks("test") if t.task_spec["task_id"] == TASK_ID)
        with env.session(task=task) as s:
            assert s.get_prompt()[0].text.startswith("# Best Study Rate")
            s.call_tool("write_file", {"path": TASK.main_file, "content": REFERENCE})
            out = s.call_tool("submit")
            assert out.finished and out.reward == 1.0

    async def play() -> float:
        client = AsyncORS(server.url, api_key=server.token)  # kept: its sessions close when it goes
        env = client.environment(ORS_ENV)
        task = (await env.list_tasks("test"))[0]
        async with env.session(task=type(task)(ORS_ENV, {"task_id": TASK_ID})) as s:
            await s.get_prompt()
            return (await s.call_tool("act", {"text": f"```python\n{REFERENCE}```\nsubmit"})).reward

    assert asyncio.run(play()) == 1.0


def test_each_client_without_the_token_is_refused(server):
    if server.token is None:
        pytest.skip("the server has no token")
    for url in (server.openenv_url, url_with_token(server, "wrong")):
        for cls in (GenericEnvClient, MCPToolClient, CodegymEnvClient):
            with pytest.raises(ConnectionError, match="403"):
                cls(base_url=url).sync().connect()

    async def production() -> None:
        env = MCPToolClient(base_url=server.openenv_url)
        env.use_production_mode = True
        try:
            await env.call_tool("start_episode", env_id=ENV_ID)
        finally:
            await env.close()

    with pytest.raises(httpx.HTTPStatusError, match="401"):
        asyncio.run(production())
    with ORS(server.url) as client, pytest.raises(AuthenticationError):
        client.environment(ORS_ENV).list_tasks("test")
    assert http(server, "/codegym/sessions")[0] == 401
    assert http(server, "/codegym/sessions", token=TOKEN)[0] == 200


def test_stateless_calls_out_of_order_are_client_errors(server):
    token = server.token
    status, body, _ = http(server, "/openenv/step", {"action": {"action": "submit"}}, token)
    assert status == 409 and "reset first" in body["detail"] and "/ws" in body["detail"]
    status, body, _ = http(server, "/openenv/step", {"action": {"type": "call_tool", "tool_name": "submit"}}, token)
    assert status == 409 and "reset first" in body["detail"]
    status, body, _ = http(server, "/openenv/reset", {"env_id": "codegym/Nope-v0"}, token)
    assert status == 400 and "not served" in body["detail"]
    status, body, _ = http(server, "/openenv/reset", {"env_id": ENV_ID, "task_id": "lcb/nope"}, token)
    assert status == 400 and "lcb/nope" in body["detail"]
    status, body, _ = http(server, "/openenv/reset", {"env_id": ENV_ID, "task_id": TASK_ID}, token)
    assert status == 200 and body["observation"]["task_id"] == TASK_ID  # a stateless reset works
    assert http(server, "/openenv/state", token=token)[0] == 200
    # ORS: a session whose setup was refused answers with that status, not a 500
    headers = {"X-Session-ID": "bad-task", "Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    for spec, want in (({"task_id": "lcb/nope"}, 400), ({"task_id": TASK_ID, "colour": "red"}, 400)):
        headers["X-Session-ID"] = f"s-{want}-{len(spec)}"
        req = urllib.request.Request(server.url + "/create", method="POST", headers=headers,
                                     data=json.dumps({"env_name": ORS_ENV, "task_spec": spec}).encode())
        urllib.request.urlopen(req, timeout=60).read()
        req = urllib.request.Request(f"{server.url}/{ORS_ENV}/prompt", headers=headers)
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=300)
        assert e.value.code == want
        urllib.request.urlopen(urllib.request.Request(server.url + "/delete", method="POST", headers=headers,
                                                      data=b"{}"), timeout=60).read()
    assert server.manager.wait_for(lambda m: not m.sessions, timeout=120)


def test_a_full_server_answers_503():
    manager = SessionManager(ServeLimits(max_sessions=1), env_ids=[ENV_ID])
    with ServerThread(manager) as srv, CodegymEnvClient(srv.openenv_url).sync() as held:
        held.reset(env_id=ENV_ID, task_id=TASK_ID)
        status, body, headers = http(srv, "/openenv/reset", {"env_id": ENV_ID, "task_id": TASK_ID})
        assert status == 503 and "capacity" in body["detail"] and headers.get("Retry-After")
        headers = {"X-Session-ID": "full", "Content-Type": "application/json"}
        req = urllib.request.Request(srv.url + "/create", method="POST", headers=headers,
                                     data=json.dumps({"env_name": ORS_ENV, "task_spec": {"task_id": TASK_ID}}).encode())
        urllib.request.urlopen(req, timeout=60).read()
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(urllib.request.Request(f"{srv.url}/{ORS_ENV}/prompt", headers=headers), timeout=300)
        assert e.value.code == 503 and "capacity" in json.loads(e.value.read())["detail"]
        with GenericEnvClient(base_url=srv.openenv_url).sync() as other, pytest.raises(RuntimeError, match="capacity"):
            other.reset(env_id=ENV_ID, task_id=TASK_ID)
        assert manager.counts["refused"] == 3 and len(manager.sessions) == 1


def test_refusals_log_one_line_and_shutdown_closes_live_sessions(tmp_path):
    """`codegym serve` as a process: a refused session is one log line (no traceback; it was
    10 kB and 3 tracebacks per ORS refusal), and Ctrl-C with live OpenEnv and ORS sessions
    closes them without a traceback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path / "serve.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "codegym", "serve", "--port", str(port), "--max-sessions",
                                 "2", "--env", ENV_ID], stdout=fh, stderr=fh,
                                env={**os.environ, "CODEGYM_SERVE_TOKEN": TOKEN})
    base = f"http://127.0.0.1:{port}"
    srv = type("Srv", (), {"url": base, "openenv_url": base + "/openenv"})()
    loop = asyncio.new_event_loop()
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if http(srv, "/health")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        held = CodegymEnvClient(srv.openenv_url, token=TOKEN)
        loop.run_until_complete(held.reset(env_id=ENV_ID, task_id=TASK_ID))

        def ors_prompt(sid: str) -> int:
            headers = {"X-Session-ID": sid, "Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}
            urllib.request.urlopen(urllib.request.Request(
                base + "/create", method="POST", headers=headers,
                data=json.dumps({"env_name": ORS_ENV, "task_spec": {"task_id": TASK_ID}}).encode()), timeout=60).read()
            try:
                urllib.request.urlopen(urllib.request.Request(f"{base}/{ORS_ENV}/prompt", headers=headers),
                                       timeout=300).read()
                return 200
            except urllib.error.HTTPError as e:
                return e.code

        assert ors_prompt("held") == 200  # the second slot: the server is full
        before = log.stat().st_size
        refusals = [ors_prompt(f"refused-{i}") for i in range(5)]
        refusals += [http(srv, "/openenv/reset", {"env_id": ENV_ID, "task_id": TASK_ID}, TOKEN)[0] for _ in range(5)]
        with CodegymEnvClient(srv.openenv_url, token=TOKEN).sync() as other:
            for _ in range(5):
                with pytest.raises(RuntimeError, match="capacity"):
                    other.reset(env_id=ENV_ID, task_id=TASK_ID)
        assert refusals == [503] * 10
        time.sleep(0.5)
        text = log.read_bytes()[before:].decode("utf-8", "replace")
        assert "Traceback" not in text and len(text.splitlines()) <= 15, text
        assert text.count("capacity") == 15, text
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
        text = log.read_text("utf-8", "replace")
        assert "Traceback" not in text and "2 session(s) closed" in text, text
        loop.run_until_complete(held.close())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        loop.close()
