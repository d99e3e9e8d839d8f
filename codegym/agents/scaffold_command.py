"""`CommandAgent`: any scaffold started by a shell command, and the proxy that counts its tokens.

The command runs once per episode in the `ScaffoldBox` (cwd: the workspace) with the
task written to ``{prompt_file}`` in a read-only meta directory. Placeholders in the
command: ``{prompt_file}``, ``{workdir}``, ``{model}``, ``{base_url}`` (shell-quoted).
Its environment names the endpoint the usual ways (``OPENAI_BASE_URL``,
``OPENAI_API_BASE``, ``OPENAI_API_KEY``, ``CODEGYM_LLM_MODEL``), pointing at a loopback
`UsageProxy` that forwards to the configured endpoint and adds up the ``usage`` of every
answer (JSON or server-sent events), so tokens are recorded whatever the scaffold is.
A command reports no turns: its whole run is one step.
"""

from __future__ import annotations

import json
import shlex
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from codegym.agents.scaffold_box import ScaffoldBox
from codegym.agents.scaffold_mini import resolve_endpoint
from codegym.agents.scaffold_run import ScaffoldAgent, ScaffoldRun, ScaffoldTurn, usage_sum

_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization",
        "proxy-authenticate", "host", "content-length", "accept-encoding"}


class UsageProxy:
    """A loopback HTTP proxy to an OpenAI-compatible endpoint that records token usage.

    ``base_url`` is the proxy's own root (``http://127.0.0.1:PORT/v1``); requests to
    ``<base_url>/X`` go to ``<upstream>/X`` with the configured API key."""

    def __init__(self, upstream: str, api_key: str | None = None, timeout_s: float = 600.0):
        self.upstream, self.api_key, self.timeout_s = upstream.rstrip("/"), api_key, timeout_s
        self.usages: list[dict[str, int]] = []
        self.calls = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                proxy._forward(self, None)

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                proxy._forward(self, self.rfile.read(n) if n else b"")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="codegym-usage-proxy", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def usage(self) -> dict[str, int]:
        with self._lock:
            return usage_sum(*self.usages)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _forward(self, h: BaseHTTPRequestHandler, body: bytes | None) -> None:
        path = h.path[3:] if h.path.startswith("/v1") else h.path
        headers = {k: v for k, v in h.headers.items() if k.lower() not in _HOP}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(self.upstream + path, data=body, headers=headers, method=h.command)
        if body is not None and path.rstrip("/").endswith("completions"):
            with self._lock:
                self.calls += 1
        try:
            resp = urllib.request.urlopen(req, timeout=self.timeout_s)  # the configured endpoint
        except urllib.error.HTTPError as e:
            resp = e
        except OSError as e:
            data = json.dumps({"error": {"message": f"codegym usage proxy: upstream failed: {e}"}}).encode()
            self._reply(h, 502, {"Content-Type": "application/json"}, [data])
            return
        with resp:
            ctype = resp.headers.get("Content-Type", "")
            if "event-stream" in ctype:
                self._stream(h, resp)
                return
            data = resp.read()
            if resp.status == 200:
                self._count(data)
            self._reply(h, resp.status, {"Content-Type": ctype or "application/json"}, [data])

    def _stream(self, h: BaseHTTPRequestHandler, resp) -> None:
        h.send_response(resp.status)
        h.send_header("Content-Type", resp.headers.get("Content-Type"))
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        last_usage = None
        for line in resp:
            if line.startswith(b"data:") and b'"usage"' in line:
                try:
                    u = json.loads(line[5:].strip()).get("usage")
                except ValueError:
                    u = None
                if isinstance(u, dict):
                    last_usage = u
            h.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
        h.wfile.write(b"0\r\n\r\n")
        if last_usage:
            self._add(last_usage)

    def _count(self, data: bytes) -> None:
        try:
            u = json.loads(data).get("usage")
        except (ValueError, AttributeError):
            return
        if isinstance(u, dict):
            self._add(u)

    def _add(self, u: dict) -> None:
        with self._lock:
            self.usages.append({k: int(v) for k, v in u.items()
                                if k in ("prompt_tokens", "completion_tokens", "total_tokens")
                                and isinstance(v, (int, float))})

    @staticmethod
    def _reply(h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], chunks: list[bytes]) -> None:
        data = b"".join(chunks)
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)


class CommandAgent(ScaffoldAgent):
    """A shell-command scaffold (config kind ``command``; see the module docstring)."""

    def _run(self, box: ScaffoldBox, prompt: str, deadline: float) -> ScaffoldRun:
        cfg = self.config
        (box.meta / cfg.prompt_file).write_text(prompt, encoding="utf-8")
        model, upstream, key = resolve_endpoint(cfg.model, cfg.base_url, cfg.api_key_env)
        proxy = UsageProxy(upstream, key)
        try:
            subs = {"prompt_file": f"{box.metadir}/{cfg.prompt_file}", "workdir": box.workdir,
                    "model": model, "base_url": proxy.base_url}
            command = cfg.command or ""
            for k, v in subs.items():
                command = command.replace("{" + k + "}", shlex.quote(v))
            env = {"OPENAI_BASE_URL": proxy.base_url, "OPENAI_API_BASE": proxy.base_url,
                   "OPENAI_API_KEY": "codegym-proxy", "CODEGYM_LLM_BASE_URL": proxy.base_url,
                   "CODEGYM_LLM_MODEL": model, "CODEGYM_TASK_FILE": subs["prompt_file"]}
            t0 = time.monotonic()
            r = box.run(command, max(1.0, deadline - t0), network=cfg.network, env=env)
            files, skipped = box.snapshot()
            status = "timeout" if r.timed_out else ("ok" if r.returncode == 0 else f"exit {r.returncode}")
            return ScaffoldRun([ScaffoldTurn(0, files, proxy.usage, [command], time.monotonic() - t0)],
                               exit_status=status, model_calls=proxy.calls, usage=proxy.usage,
                               skipped_files=skipped, log=r.output[-4000:])
        finally:
            proxy.close()
