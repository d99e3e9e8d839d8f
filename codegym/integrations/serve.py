"""`codegym serve`: one ASGI app serving every codegym env over OpenEnv and the Open Reward Standard.

`build_app(manager)` mounts openenv's app (`codegym.integrations.openenv`) at ``/openenv``
and ``ors.Server``'s app (`codegym.integrations.ors`) at the root (ORS clients address
the server root), adds ``GET /codegym/sessions`` (live sessions, limits, counters) and
``GET /codegym/envs``, and wraps all of it in `LimitsMiddleware` (bearer token, request
size). Both protocols draw on the one `SessionManager` (max sessions, idle reaper).
`run` serves it with uvicorn; `ServerThread` runs it in a background thread on a port
the OS picks (tests, notebooks). docs/serve.md.
"""

from __future__ import annotations

import base64
import hmac
import importlib
import json
import socket
import threading
from collections.abc import Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from starlette.websockets import WebSocketDisconnect

from codegym.integrations.sessions import TOOLS, SessionManager

PROTOCOLS = ("openenv", "ors")
OPENENV_PREFIX = "/openenv"
#: paths answered without a token (liveness probes)
OPEN_PATHS = frozenset({"/health", OPENENV_PREFIX + "/health"})


class LimitsMiddleware:
    """ASGI middleware: the token (``Authorization: Bearer T``, ``X-API-Key: T``, or as the
    password of HTTP Basic auth, what clients send for a URL ``http://user:T@host/...``)
    on every HTTP request and WebSocket handshake, and the request body size: a body over
    the limit (by its ``Content-Length``, or counted while it is read) gets 413 before the
    app sees it. WebSocket messages are capped by uvicorn's ``ws_max_size`` (`run` sets it)."""

    def __init__(self, app, token: str | None, max_request_bytes: int):
        self.app, self.token, self.max_bytes = app, token, max_request_bytes

    def _authorized(self, scope) -> bool:
        if self.token is None or scope.get("path") in OPEN_PATHS:
            return True
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        auth = headers.get("authorization", "")
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer":
            given = value.strip()
        elif scheme.lower() == "basic":  # a token in the URL (http://user:TOKEN@host/...): the password
            try:
                given = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")[2]
            except (ValueError, UnicodeDecodeError):
                given = ""
        else:
            given = headers.get("x-api-key", "")
        return hmac.compare_digest(given.encode(), self.token.encode())

    async def __call__(self, scope, receive, send):
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        if not self._authorized(scope):
            if kind == "websocket":
                return await send({"type": "websocket.close", "code": 1008, "reason": "bearer token required"})
            return await _json(send, 401, {"detail": "missing or wrong bearer token"},
                               {"www-authenticate": "Bearer"})
        if kind == "websocket":
            return await self.app(scope, receive, send)
        too_large = {"detail": f"request body over {self.max_bytes} bytes"}
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            return await _json(send, 413, too_large)
        # read the body here (it is at most max_bytes), then hand it to the app in one message
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                return await _json(send, 413, too_large)
            more = message.get("more_body", False)
        body = {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        async def replay():
            nonlocal body
            if body is not None:
                message, body = body, None
                return message
            return await receive()

        await self.app(scope, replay, send)


class _QuietDisconnect:
    """openenv's WebSocket handler closes a socket the client already closed, which raises
    `WebSocketDisconnect` out of the app once the session is over: not an error to log."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope["type"] != "websocket":
                raise


async def _json(send, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
    body = json.dumps(payload).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _protocol_module(name: str, package: str):
    """`codegym.integrations.<name>`, imported when its protocol is served (its package is optional)."""
    try:
        return importlib.import_module(f"codegym.integrations.{name}")
    except ImportError as e:
        raise RuntimeError(f"serving {name} needs {package}: pip install 'codegym[{name}]' ({e})") from e


def build_app(manager: SessionManager, protocols: Sequence[str] = PROTOCOLS,
              default_env_id: str | None = None) -> LimitsMiddleware:
    """The server's ASGI app (see the module docstring)."""
    unknown = set(protocols) - set(PROTOCOLS)
    if unknown or not protocols:
        raise ValueError(f"protocols must be some of {PROTOCOLS}, not {sorted(unknown) or list(protocols)}")
    subapps: list[Any] = []
    routes: list[Any] = []
    names: dict[str, list[str]] = {}
    if "openenv" in protocols:
        app = _protocol_module("openenv", "openenv-core").openenv_app(manager, default_env_id)
        subapps.append(app)
        routes.append(Mount(OPENENV_PREFIX, app=_QuietDisconnect(app)))
        names["openenv"] = list(manager.env_ids)
    ors_sub = None
    if "ors" in protocols:
        ors_mod = _protocol_module("ors", "ors-sdk")
        classes = ors_mod.ors_environments(manager)
        ors_sub = ors_mod.Server(classes).app
        subapps.append(ors_sub)
        names["ors"] = {c.ors_name: {"env_id": c.env_id, **c.env_options} for c in classes}

    async def sessions(request: Request) -> JSONResponse:
        return JSONResponse(manager.stats())

    async def envs(request: Request) -> JSONResponse:
        return JSONResponse({"protocols": names, "openenv_prefix": OPENENV_PREFIX, "tools": TOOLS})

    routes[:0] = [Mount("/codegym", routes=[Route("/sessions", sessions), Route("/envs", envs)])]
    if ors_sub is not None:
        routes.append(Mount("/", app=ors_sub))  # last: ORS owns the rest of the root

    @asynccontextmanager
    async def lifespan(app):
        manager.start_reaper()
        try:
            async with AsyncExitStack() as stack:
                for sub in subapps:
                    await stack.enter_async_context(sub.router.lifespan_context(sub))
                yield
        finally:
            # after the protocols' own shutdown (ors tears its live sessions down on the
            # manager's executor): then whatever is left, and the executor
            manager.shutdown()

    limits = manager.limits
    return LimitsMiddleware(Starlette(routes=routes, lifespan=lifespan), limits.token, limits.max_request_bytes)


def _config(app, manager: SessionManager, host: str, port: int, log_level: str) -> uvicorn.Config:
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False,
                          ws_max_size=manager.limits.max_request_bytes, timeout_keep_alive=60)


def run(manager: SessionManager, host: str = "127.0.0.1", port: int = 8000, protocols: Sequence[str] = PROTOCOLS,
        default_env_id: str | None = None, log_level: str = "info") -> None:
    """Serve until interrupted (blocking)."""
    uvicorn.Server(_config(build_app(manager, protocols, default_env_id), manager, host, port, log_level)).run()


class ServerThread:
    """`build_app` served by uvicorn in a daemon thread on 127.0.0.1 (a context manager).

    The listening socket is bound before the thread starts, so clients may connect at
    once (the kernel queues them until uvicorn accepts); ``url`` is the ORS base URL and
    ``openenv_url`` the OpenEnv one."""

    def __init__(self, manager: SessionManager, protocols: Sequence[str] = PROTOCOLS,
                 default_env_id: str | None = None, log_level: str = "warning"):
        self.manager = manager
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1024)
        self.port = self.sock.getsockname()[1]
        app = build_app(manager, protocols, default_env_id)
        self.server = uvicorn.Server(_config(app, manager, "127.0.0.1", self.port, log_level))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       name="codegym-serve", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openenv_url(self) -> str:
        return self.url + OPENENV_PREFIX

    def start(self) -> ServerThread:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join()
        self.sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
