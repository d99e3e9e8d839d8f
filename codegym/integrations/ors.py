"""codegym over the Open Reward Standard (``ors-sdk``): one ``ors.Environment`` per served env id.

`ors_environments(manager)` makes an ``ors.Environment`` subclass for each id the
`SessionManager` serves, named like the id (``codegym/LCB-v0`` -> ``codegym-lcb-v0``;
``codegym/Suite-v0`` once per suite without an id, ``codegym-suite-<name>``); `ors_app`
is ``ors.Server``'s app around them. One ORS session is one episode: ``/create`` with a
task spec (``{"task_id": ..., "seed": ..., "options": {...}}``, or split ``"test"`` and an
index) opens a `Session` and resets it, the prompt is the first observation, every tool
(`codegym.integrations.sessions.TOOLS`; ``state`` reads without a turn) is one step whose
``ToolOutput`` carries the reward, ``finished`` and the judge report in its metadata, and
``/delete`` frees the env. docs/serve.md.

    from ors.client import ORS
    env = ORS("http://127.0.0.1:8000").environment("codegym-lcb-v0")
    with env.session(task=env.list_tasks("test")[0]) as s:
        out = s.call_tool("submit")      # out.reward, out.finished, out.metadata["judge"]
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from typing import Any

from fastapi import HTTPException
from ors import Environment, Server, Split, TextBlock, ToolOutput, tool
from pydantic import BaseModel, ConfigDict, create_model

from codegym.envs.registration import ENV_IDS
from codegym.integrations.sessions import (
    TOOLS,
    CapacityError,
    OrderError,
    Session,
    SessionClosed,
    SessionError,
    SessionManager,
)
from codegym.tasks.suite import load_suite

__all__ = ["ors_environments", "ors_app", "ors_name", "SPLIT"]

#: the one split of every codegym env (codegym suites have no train/test partition)
SPLIT = "test"
_TASK_SPEC_KEYS = {"task_id", "seed", "options"}
_TYPES = {"string": str, "integer": int}


def ors_name(env_id: str, suite: str | None = None) -> str:
    """The ORS environment name of an env id (and suite, for ``codegym/Suite-v0``)."""
    if suite is not None:
        return "codegym-suite-" + re.sub(r"[^a-z0-9]+", "-", str(suite).lower()).strip("-")
    return env_id.replace("/", "-").lower()


def _input_model(name: str, parameters: Mapping[str, Any]) -> type[BaseModel] | None:
    """The pydantic input model of a tool (None: the tool takes no arguments)."""
    props = parameters.get("properties", {})
    if not props:
        return None
    required = set(parameters.get("required", []))
    fields = {k: ((_TYPES[p["type"]], ...) if k in required else (_TYPES[p["type"]] | None, None))
              for k, p in props.items()}
    camel = "".join(part.title() for part in name.split("_"))
    return create_model(f"{camel}Input", __config__=ConfigDict(extra="forbid"), **fields)


def _make_tool(name: str):
    model = _input_model(name, TOOLS[name]["parameters"])
    if model is None:
        async def fn(self) -> ToolOutput:
            return await self._step(name, {})
    else:
        async def fn(self, params):
            return await self._step(name, params.model_dump(exclude_none=True))
        fn.__annotations__ = {"params": model, "return": ToolOutput}
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = TOOLS[name]["description"]
    return tool(fn)


def _output(record: dict[str, Any]) -> ToolOutput:
    info = record["info"]
    meta = {"judge": info.get("judge"), "terminated": record["terminated"], "truncated": record["truncated"],
            "info": info}
    return ToolOutput(blocks=[TextBlock(text=record["observation"])], reward=record["reward"],
                      finished=bool(record["done"]), metadata=meta)


def _http_error(e: SessionError) -> HTTPException:
    """A session error as the HTTP error ors answers with (503 with Retry-After when full)."""
    return HTTPException(e.status, str(e), headers={"Retry-After": "5"} if isinstance(e, CapacityError) else None)


class CodegymORSEnvironment(Environment):
    """Base of the per-id classes `ors_environments` makes (class attributes set there)."""

    manager: SessionManager
    env_id: str
    env_options: dict[str, Any] = {}
    ors_name: str = "codegym"

    def __init__(self, task_spec: Mapping[str, Any] = {}, secrets: Mapping[str, str] = {}):  # noqa: B006 (ors' signature)
        super().__init__(dict(task_spec), dict(secrets))
        self.session: Session | None = None
        self.first: dict[str, Any] | None = None
        self.refusal: HTTPException | None = None  # why setup could not open the session
        bad = sorted(set(self.task_spec) - _TASK_SPEC_KEYS)
        if bad:
            self.refusal = _http_error(SessionError(f"unknown task spec key(s) {bad}; a task spec has "
                                                    f"{sorted(_TASK_SPEC_KEYS)}"))

    @classmethod
    def name(cls) -> str:
        return cls.ors_name

    @classmethod
    def list_splits(cls):
        return [Split(name=SPLIT, type="test")]

    @classmethod
    def _suite(cls):
        return load_suite(cls.env_options.get("suite") or ENV_IDS[cls.env_id]["suite"])

    @classmethod
    def list_tasks(cls, split: str):
        if split != SPLIT:
            raise ValueError(f"unknown split {split!r}; codegym envs have one split, {SPLIT!r}")
        return [{"task_id": t.id} for t in cls._suite()]

    @classmethod
    async def num_tasks(cls, split: str) -> int:
        return len(cls.list_tasks(split))

    async def _run(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.manager.executor, fn, *args)

    async def setup(self) -> None:
        if self.refusal is not None:
            return
        spec = self.task_spec
        options = {**self.env_options, **dict(spec.get("options") or {})}

        def start() -> dict[str, Any]:
            self.session = self.manager.open(self.env_id, options)
            return self.session.reset(seed=spec.get("seed"), task_id=spec.get("task_id"))

        try:
            self.first = await self._run(start)
        except SessionError as e:
            # a refusal (full server, unknown task...) is the answer to the session's next request
            # (its status, one log line by ors), not an exception out of setup (a traceback per refusal)
            self.refusal = _http_error(e)
            if self.session is not None:
                await self.teardown()

    async def teardown(self) -> None:
        if self.session is not None:
            session, self.session = self.session, None
            try:
                await self._run(self.manager.close, session)
            except RuntimeError:  # the executor is gone (the server is stopping): close here
                self.manager.close(session)

    def _live(self) -> Session:
        if self.refusal is not None:
            raise self.refusal
        if self.session is None:
            raise SessionClosed("the session is closed")
        return self.session

    def get_prompt(self):
        session = self._live()
        if self.first is None:
            raise OrderError("the session has no episode")
        session.touch()
        return [TextBlock(text=self.first["observation"], detail={"info": self.first["info"]})]

    async def _step(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        session = self._live()
        return _output(await self._run(session.call, name, arguments))

    @tool
    async def state(self) -> ToolOutput:
        """The session's state (task, turn, turns left, files, total reward) without spending a turn."""
        st = self._live().state()
        return ToolOutput(blocks=[TextBlock(text=f"task {st['task_id']}, turn {st['turn']}, "
                                                 f"{st['turns_left']} turn(s) left")], metadata=st)


for _name in TOOLS:
    setattr(CodegymORSEnvironment, _name, _make_tool(_name))


def ors_environments(manager: SessionManager) -> list[type[CodegymORSEnvironment]]:
    """One ``ors.Environment`` class per served id (and per served suite for ``codegym/Suite-v0``)."""
    out = []
    # suites that have an id of their own are served under it, not again as Suite-v0
    own = {kw.get("suite") for kw in ENV_IDS.values()}
    for env_id in manager.env_ids:
        variants = ([(ors_name(env_id, s), {"suite": s}) for s in manager.suites if s not in own]
                    if env_id == "codegym/Suite-v0" else [(ors_name(env_id), {})])
        for name, options in variants:
            cls_name = "".join(p.title() for p in re.split(r"[^A-Za-z0-9]+", name) if p) + "ORS"
            out.append(type(cls_name, (CodegymORSEnvironment,), {
                "manager": manager, "env_id": env_id, "env_options": options, "ors_name": name,
                "__doc__": f"{env_id} over ORS" + (f" (suite {options['suite']})" if options else "")}))
    return out


def ors_app(manager: SessionManager):
    """``ors.Server``'s FastAPI app serving every id of `manager`."""
    return Server(ors_environments(manager)).app
