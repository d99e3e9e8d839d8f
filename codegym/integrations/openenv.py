"""codegym over OpenEnv (``openenv-core``): an `Environment` for openenv's `HTTPEnvServer`, and a client.

`CodegymEnvironment` is an openenv ``MCPEnvironment``: each WebSocket session of the
server gets one, and it holds one `codegym.integrations.sessions.Session` (any served
env id, chosen at ``reset(env_id=..., task_id=..., seed=...)``). A step is a
`CodegymAction`: free text in any edit format, or one tool call (``type="call_tool"``);
``type="list_tools"`` lists the tools. The tools are also MCP tools (FastMCP), so the
server's ``/mcp`` JSON-RPC route works too (``tools/call`` of ``start_episode`` resets). Every
`CodegymObservation` carries the text, reward, done, and the judge report.
`openenv_app(manager)` is openenv's own FastAPI app around it; `CodegymEnvClient` is an
openenv ``EnvClient`` (``.sync()`` gives its ``SyncEnvClient``). docs/serve.md.

    with CodegymEnvClient("http://127.0.0.1:8000/openenv").sync() as env:
        r = env.reset(env_id="codegym/LCB-v0", task_id="lcb/...")
        r = env.step(CodegymAction(action="submit"))
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any, Literal

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import Tool as MCPTool
from fastmcp.tools.base import ToolResult
from mcp.types import TextContent
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server import (
    Action,
    ConcurrencyConfig,
    ListToolsObservation,
    MCPEnvironment,
    Observation,
    State,
    Tool,
    create_fastapi_app,
)
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import Field, PrivateAttr, SerializerFunctionWrapHandler, model_serializer
from starlette.responses import JSONResponse
from websockets.asyncio.client import connect as ws_connect

from codegym.core.version import __version__
from codegym.integrations.sessions import (
    ENV_OPTIONS,
    TOOLS,
    CapacityError,
    OrderError,
    Session,
    SessionError,
    SessionManager,
)

__all__ = ["START_TOOL", "CodegymAction", "CodegymObservation", "CodegymState", "CodegymEnvironment",
           "CodegymEnvClient", "openenv_app"]


log = logging.getLogger("codegym.serve")

#: the MCP tool that starts an episode (``reset`` is a name openenv reserves)
START_TOOL = "start_episode"
START_SPEC = {"description": "Start an episode (MCP clients; what reset does): on env_id (default: the server's "
                             "first), task_id or seed, with env options.",
              "parameters": {"type": "object", "properties": {
                  "env_id": {"type": "string"}, "task_id": {"type": "string"}, "seed": {"type": "integer"},
                  "options": {"type": "object", "description": "env options: " + ", ".join(ENV_OPTIONS)}},
                  "required": [], "additionalProperties": False}}


class CodegymAction(Action):
    """One step: free text (``action``), or a tool call (``type="call_tool"``, ``tool_name``,
    ``arguments`` -- the shape of openenv's ``CallToolAction``), or ``type="list_tools"``."""

    type: Literal["text", "call_tool", "list_tools"] = Field("text", description="What this action is")
    action: str = Field("", description="The action text, in any edit format codegym accepts")
    tool_name: str | None = Field(None, description="Tool to call (type=call_tool)")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Tool arguments (type=call_tool)")


class CodegymObservation(Observation):
    """What a reset or a step returns (``reward`` and ``done`` are openenv's fields)."""

    text: str = Field("", description="The env's observation text (prompt or feedback)")
    env_id: str | None = None
    session_id: str | None = None
    task_id: str | None = None
    terminated: bool = False
    truncated: bool = False
    judge: dict[str, Any] | None = Field(None, description="This step's judge report (None: no test ran)")
    info: dict[str, Any] = Field(default_factory=dict, description="The env's info dict as JSON")
    tool_name: str | None = Field(None, description="The tool this step called (absent: not a tool call)")
    result: dict[str, Any] | None = Field(None, description="A tool call's whole record (MCP clients read it)")

    @model_serializer(mode="wrap")
    def _omit_tool_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # openenv's MCP client reads any observation with a `tool_name` key as a tool call's
        # (and fails on a null one): a reset or a text step carries neither key. It keeps only
        # `metadata` of other observations (which openenv's server leaves out): the text and
        # the ids go there too, so an MCP client sees the prompt.
        data = handler(self)
        if self.tool_name is None and isinstance(data, dict):
            data.pop("tool_name", None)
            data.pop("result", None)
            if "metadata" not in data:
                data["metadata"] = {**self.metadata, "text": self.text, "env_id": self.env_id,
                                    "task_id": self.task_id, "session_id": self.session_id}
        return data


class CodegymState(State):
    """The session's state (``episode_id``, ``step_count`` and codegym's fields: see `Session.state`)."""


class _SessionTool(MCPTool):
    """A codegym tool on the session's FastMCP server: the call runs as one env step."""

    _call: Any = PrivateAttr(default=None)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            record = await self._call(self.name, dict(arguments or {}))
        except SessionError as e:  # the client's error (or a refusal, logged once by _start): no traceback
            raise ToolError(str(e), log_level=logging.DEBUG) from None
        return ToolResult(content=[TextContent(type="text", text=record["observation"])], structured_content=record)


def _observation(record: dict[str, Any], session: Session) -> CodegymObservation:
    info = record["info"]
    tool = record.get("tool")
    return CodegymObservation(text=record["observation"], reward=record["reward"], done=record["done"],
                              env_id=session.env_id, session_id=session.id, task_id=info.get("task_id"),
                              terminated=record["terminated"], truncated=record["truncated"],
                              judge=info.get("judge"), info=info, tool_name=tool,
                              result=record if tool is not None else None)


class CodegymEnvironment(MCPEnvironment):
    """One openenv session: codegym episodes on any served env id (see the module docstring).

    Args:
        manager: the server's `SessionManager` (limits, reaper, the served ids).
        default_env_id: the env of a ``reset()`` that names none.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, manager: SessionManager, default_env_id: str | None = None):
        super().__init__(FastMCP("codegym"))
        self.manager = manager
        self.default_env_id = default_env_id or manager.env_ids[0]
        self.session: Session | None = None
        for name, spec in {START_TOOL: START_SPEC, **TOOLS}.items():
            tool = _SessionTool(name=name, description=spec["description"], parameters=spec["parameters"])
            tool._call = self._call_async
            self.mcp_server.add_tool(tool)

    # ------------------------------------------------------------------ openenv API

    def reset(self, seed: int | None = None, episode_id: str | None = None, env_id: str | None = None,
              task_id: str | None = None, **options: Any) -> CodegymObservation:
        """Start an episode; `options` are env options (`ENV_OPTIONS`): another env or other
        options make a new env (the old one is closed)."""
        record = self._start(seed, episode_id, env_id, task_id, options)
        return _observation(record, self.session)

    def _start(self, seed: int | None, episode_id: str | None, env_id: str | None, task_id: str | None,
               options: dict[str, Any]) -> dict[str, Any]:
        env_id = env_id or self.default_env_id
        unknown = sorted(set(options) - set(ENV_OPTIONS))
        if unknown:
            raise SessionError(f"unknown reset argument(s) {unknown}; reset takes seed, episode_id, env_id, "
                               f"task_id and env options {list(ENV_OPTIONS)}")
        wanted = {k: v for k, v in options.items() if v is not None}
        s = self.session
        if s is None or s.closed or s.env_id != env_id or s.options != wanted:
            if s is not None:
                self.manager.close(s)
            self.session = None
            try:
                self.session = s = self.manager.open(env_id, wanted)
            except CapacityError as e:
                log.warning("refused an OpenEnv session: %s", e)
                raise
        return s.reset(seed=seed, task_id=task_id, episode_id=episode_id)

    def _live(self) -> Session:
        if self.session is None:
            raise OrderError("reset first: call reset(env_id=..., task_id=... or seed=...) before step (the "
                             "stateless HTTP /step makes a fresh env per request: play episodes over the "
                             "WebSocket /ws or an MCP session)")
        return self.session

    def _step_impl(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        if not isinstance(action, CodegymAction):
            raise SessionError(f"expected a CodegymAction, got {type(action).__name__}")
        if action.type == "list_tools":
            return ListToolsObservation(tools=[Tool(name=n, description=s["description"],
                                                    input_schema=s["parameters"]) for n, s in TOOLS.items()])
        session = self._live()
        if action.type == "call_tool":
            if not action.tool_name:
                raise SessionError("a call_tool action needs tool_name")
            return _observation(session.call(action.tool_name, action.arguments), session)
        return _observation(session.step(action.action), session)

    async def step_async(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        # the server's executor, sized for every session (the loop's default one has a few threads)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.manager.executor, functools.partial(self.step, action, timeout_s))

    def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == START_TOOL:
            args = dict(arguments)
            return self._start(args.pop("seed", None), None, args.pop("env_id", None), args.pop("task_id", None),
                               args.pop("options", None) or {})
        return self._live().call(name, arguments)

    async def _call_async(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.manager.executor, self._call, name, arguments)

    @property
    def state(self) -> CodegymState:
        if self.session is None:
            return CodegymState()
        return CodegymState(**self.session.state())

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name="codegym", version=__version__,
                                   description="codegym coding environments: " + ", ".join(self.manager.env_ids))

    def close(self) -> None:
        if self.session is not None:
            self.manager.close(self.session)
            self.session = None
        super().close()


def openenv_app(manager: SessionManager, default_env_id: str | None = None):
    """openenv's FastAPI app (``/ws`` sessions, ``/mcp``, ``/schema``, ``/health``...) serving codegym."""
    limits = manager.limits
    factory = functools.partial(CodegymEnvironment, manager, default_env_id)
    # the manager caps the envs (a reset past the limit is refused with its message, on a
    # connection that stays open); openenv's own cap only bounds the connections themselves
    app = create_fastapi_app(factory, CodegymAction, CodegymObservation, concurrency_config=ConcurrencyConfig(
        max_concurrent_envs=2 * limits.max_sessions, session_timeout=limits.idle_timeout_s))
    app.add_exception_handler(SessionError, _session_error_response)
    return app


async def _session_error_response(request, exc: SessionError) -> JSONResponse:
    """A `SessionError` out of openenv's HTTP routes (``/reset``, ``/step``...): its status and
    message (a step before reset is 409, a full server 503), not a 500 with a traceback."""
    headers = {"Retry-After": "5"} if isinstance(exc, CapacityError) else None
    return JSONResponse({"detail": str(exc)}, status_code=exc.status, headers=headers)


class CodegymEnvClient(EnvClient[CodegymAction, CodegymObservation, CodegymState]):
    """An openenv ``EnvClient`` of `codegym serve` (``base_url``: ``http://HOST:PORT/openenv``).

    Args:
        token: the server's bearer token, if it has one.
        (the rest: ``EnvClient``'s)
    """

    def __init__(self, base_url: str, token: str | None = None, **kwargs: Any):
        kwargs.setdefault("message_timeout_s", 600.0)  # a submit judges the hidden tests
        super().__init__(base_url, **kwargs)
        self._token = token

    async def connect(self) -> CodegymEnvClient:
        if self._ws is not None or not self._token:
            await super().connect()
            return self
        try:
            self._ws = await ws_connect(self._ws_url, open_timeout=self._connect_timeout,
                                        max_size=self._max_message_size, proxy=None,
                                        additional_headers={"Authorization": f"Bearer {self._token}"})
        except Exception as e:
            raise ConnectionError(f"Failed to connect to {self._ws_url}: {e}") from e
        return self

    def _step_payload(self, action: CodegymAction | str) -> dict[str, Any]:
        if isinstance(action, str):
            action = CodegymAction(action=action)
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CodegymObservation]:
        obs = dict(payload.get("observation") or {})
        obs = CodegymObservation(**{k: v for k, v in obs.items() if k in CodegymObservation.model_fields},
                                 reward=payload.get("reward"), done=payload.get("done", False))
        return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done", False)))

    def _parse_state(self, payload: dict[str, Any]) -> CodegymState:
        return CodegymState(**payload)

    async def call_tool(self, name: str, **arguments: Any) -> StepResult[CodegymObservation]:
        """One tool call (one step)."""
        return await self.step(CodegymAction(type="call_tool", tool_name=name, arguments=arguments))

    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools (name, description, input_schema)."""
        response = await self._send_and_receive({"type": "step", "data": {"type": "list_tools"}})
        return list(response.get("data", {}).get("observation", {}).get("tools", []))
