"""What `codegym serve` answers and logs when it refuses a request, and when it shuts down with live sessions.

Starts ``codegym serve --max-sessions 2`` with a token in a subprocess (its stdout and
stderr go to one log file), fills both session slots (one OpenEnv WebSocket session, one
ORS session), then sends N requests of each refused kind and reports, per kind, the HTTP
status codes it got and the log bytes (and tracebacks) the server wrote per request:

    ors-capacity       ORS /create + /prompt while the server is full
    openenv-reset-full POST /openenv/reset (stateless) while full
    openenv-ws-full    an OpenEnv WebSocket reset while full (the error message, no status)
    mcp-full           /openenv/mcp tools/call start_episode while full
    step-before-reset  POST /openenv/step (stateless: no episode)
    too-large          a body over --max-request-bytes
    bad-token          a wrong bearer token (HTTP, and a WebSocket handshake)

Last, the server is interrupted (SIGINT) with both sessions live: the log bytes and
tracebacks written while it shuts down.

    python benchmarks/serve_refusals.py [--n 100]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

os.environ.setdefault("ORS_LOG_LEVEL", "WARNING")

from codegym.integrations.openenv import CodegymEnvClient  # noqa: E402

TOKEN = "refusal-token"
ENV_ID, TASK = "codegym/LCB-v0", "lcb/best-study-rate"
ORS_ENV = "codegym-lcb-v0"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url: str, data: dict | bytes | None = None, token: str | None = TOKEN, method: str | None = None,
            headers: dict | None = None) -> tuple[int, str]:
    body = json.dumps(data).encode() if isinstance(data, dict) else data
    h = {"Content-Type": "application/json", **(headers or {})}
    if token:
        h["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=body, headers=h, method=method or ("POST" if body is not None else "GET"))
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def ors_open(base: str) -> tuple[int, str, str]:
    sid = uuid.uuid4().hex
    h = {"X-Session-ID": sid}
    request(base + "/create", {"env_name": ORS_ENV, "task_spec": {"task_id": TASK}}, headers=h)
    status, text = request(f"{base}/{ORS_ENV}/prompt", headers=h)
    return status, text, sid


def start(port: int, log) -> subprocess.Popen:
    env = {**os.environ, "CODEGYM_SERVE_TOKEN": TOKEN}
    proc = subprocess.Popen([sys.executable, "-m", "codegym", "serve", "--port", str(port), "--max-sessions", "2",
                             "--max-request-bytes", "65536", "--env", ENV_ID], env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if request(f"http://127.0.0.1:{port}/health", token=None)[0] == 200:
                return proc
        except OSError:
            pass
        if proc.poll() is not None:
            raise RuntimeError("codegym serve exited")
        time.sleep(0.2)
    raise RuntimeError("codegym serve did not start")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100, help="requests per refused kind")
    ap.add_argument("--show-log", action="store_true",
                    help="print the first log line of each kind and what the server logged at shutdown")
    args = ap.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.NamedTemporaryFile("w+b", suffix=".log") as log:
        proc = start(port, log)

        def size() -> int:
            log.flush()
            return os.path.getsize(log.name)

        def tracebacks_since(offset: int) -> int:
            with open(log.name, "rb") as fh:
                fh.seek(offset)
                return fh.read().count(b"Traceback")

        loop = asyncio.new_event_loop()
        ws = CodegymEnvClient(base + "/openenv", token=TOKEN)
        loop.run_until_complete(ws.connect())
        loop.run_until_complete(ws.reset(env_id=ENV_ID, task_id=TASK))
        status, _, held_sid = ors_open(base)
        assert status == 200, status
        full = json.loads(request(base + "/codegym/sessions")[1])
        assert full["active"] == 2, full

        async def ws_full() -> str:
            c = CodegymEnvClient(base + "/openenv", token=TOKEN)
            try:
                await c.reset(env_id=ENV_ID, task_id=TASK)
                return "ok"
            except RuntimeError:
                return "error message"
            finally:
                await c.close()

        def ws_bad_token() -> str:
            c = CodegymEnvClient(base + "/openenv", token="wrong")
            try:
                loop.run_until_complete(c.connect())
                return "connected"
            except ConnectionError as e:
                return str(e).rsplit(" ", 1)[-1]

        mcp_sid = json.loads(request(base + "/openenv/mcp", {"jsonrpc": "2.0", "id": 1,
                                                              "method": "openenv/session/create"})[1])
        mcp_sid = mcp_sid.get("result", {}).get("session_id")
        kinds = {
            "ors-capacity": lambda: str(ors_open(base)[0]),
            "openenv-reset-full": lambda: str(request(base + "/openenv/reset", {"env_id": ENV_ID,
                                                                              "task_id": TASK})[0]),
            "openenv-ws-full": lambda: loop.run_until_complete(ws_full()),
            "mcp-full": lambda: json.loads(request(base + "/openenv/mcp", {
                "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                    "session_id": mcp_sid, "name": "start_episode", "arguments": {"env_id": ENV_ID}}})[1])
            .get("error", {}).get("code", "ok"),
            "step-before-reset": lambda: str(request(base + "/openenv/step", {"action": {"action": "submit"}})[0]),
            "too-large": lambda: str(request(base + "/openenv/step", b"x" * 70000)[0]),
            "bad-token": lambda: f"{request(base + '/codegym/sessions', token='wrong')[0]} / ws {ws_bad_token()}",
        }
        rows = []
        for name, fn in kinds.items():
            before = size()
            statuses = collections.Counter(fn() for _ in range(args.n))
            time.sleep(0.5)
            grew = size() - before
            rows.append((name, dict(statuses), grew / args.n, tracebacks_since(before)))
            if args.show_log:
                with open(log.name, "rb") as fh:
                    fh.seek(before)
                    print(name, fh.read().decode("utf-8", "replace").splitlines()[:1])
        if mcp_sid:
            request(base + "/openenv/mcp", {"jsonrpc": "2.0", "id": 3, "method": "openenv/session/close",
                                            "params": {"session_id": mcp_sid}})
        before = size()
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = "killed after 120 s"
        loop.run_until_complete(ws.close())
        loop.close()
        shutdown = (size() - before, tracebacks_since(before), code)
        if args.show_log:
            with open(log.name, "rb") as fh:
                fh.seek(before)
                print(fh.read().decode("utf-8", "replace"))
        print(f"load average: {os.getloadavg()[0]:.1f}; {args.n} requests per kind\n")
        print("| refused request | answers | log bytes / request | tracebacks |")
        print("|---|---|---:|---:|")
        for name, statuses, per, tbs in rows:
            print(f"| {name} | {', '.join(f'{k} x{v}' for k, v in statuses.items())} | {per:.0f} | {tbs} |")
        print(f"\nshutdown with 2 live sessions (OpenEnv, ORS): {shutdown[0]} log bytes, {shutdown[1]} "
              f"tracebacks, exit {shutdown[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
