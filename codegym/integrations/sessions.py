"""Live codegym episodes behind a server: the one session manager of `codegym serve`.

`SessionManager` owns every env a server process runs, whichever protocol asked for it
(OpenEnv, ORS): `open` makes a `Session` (``gym.make`` of a served id with the server's
and the client's options), `close` frees it (its workspace, its env), `reap` ends sessions idle past
`ServeLimits.idle_timeout_s`, and no more than `ServeLimits.max_sessions` live at once.
A `Session` runs reset / step / one tool call / state under its own lock and answers
plain JSON records (`observation`, `reward`, `done`, `info` with the judge report) that
each protocol turns into its own messages. `TOOLS` are the tools both servers offer;
`tool_action` writes a tool call as the action text the env parses. docs/serve.md.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from codegym.edits.render import tool_schemas
from codegym.envs.registration import ENV_IDS, register_envs
from codegym.rollout.records import jsonable
from codegym.tasks.suite import list_suites

#: ``gym.make`` options a client may set when it opens a session (anything else is refused)
ENV_OPTIONS = ("max_turns", "feedback", "reward", "formats", "language", "auto_submit", "timing",
                 "early_exit", "suite")
#: ``info["files"]`` is sent while the files total at most this many characters
MAX_INFO_FILES_CHARS = 256 * 1024


def _tools() -> dict[str, dict[str, Any]]:
    """name -> {"description", "parameters" (JSON schema)}: the edit tools, repository tools, ``act``."""
    out = {s["function"]["name"]: {"description": s["function"]["description"],
                                   "parameters": s["function"]["parameters"]} for s in tool_schemas(None)}
    out["run_tests"] = {"description": out["run_tests"]["description"] + " Repository tasks (SWE): `tests` "
                        "names the test ids to run (default: the existing tests).",
                        "parameters": {"type": "object", "properties": {"tests": {
                            "type": "string", "description": "Test ids, space separated (repository tasks)."}},
                            "required": [], "additionalProperties": False}}
    out["list_files"] = {"description": "Repository tasks: the files under a folder (default: all).",
                         "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                                        "required": [], "additionalProperties": False}}
    out["search"] = {"description": "Repository tasks: lines matching a regular expression.",
                     "parameters": {"type": "object",
                                    "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
                                    "required": ["pattern"], "additionalProperties": False}}
    out["act"] = {"description": "One action as free text, in any edit format the env accepts (a fenced "
                  "code block, a unified diff, SEARCH/REPLACE blocks, tool calls, `submit`).",
                  "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                                 "required": ["text"], "additionalProperties": False}}
    return out


#: the tools of both servers; each call is one env step (one turn)
TOOLS: dict[str, dict[str, Any]] = _tools()
_JSON_TYPES = {"string": str, "integer": int}


class SessionError(RuntimeError):
    """A request the session cannot serve (unknown env, bad option or argument); ``status``
    is the HTTP status a server answers it with (a client error, never a 500)."""

    status = 400


class OrderError(SessionError):
    """A request out of order: a step before reset, or after the episode ended."""

    status = 409


class CapacityError(SessionError):
    """The server already runs `ServeLimits.max_sessions` sessions (retry later)."""

    status = 503


class SessionClosed(SessionError):
    """The session was closed; its env is gone."""

    status = 410


class SessionExpired(SessionClosed):
    """The session was closed by the idle reaper; its env is gone."""


@dataclass(frozen=True)
class ServeLimits:
    """Limits of one server process (docs/serve.md).

    Args:
        max_sessions: live sessions at once (every protocol together).
        idle_timeout_s: a session without a request for this long is closed (None: never).
        max_request_bytes: largest request body or WebSocket message.
        token: when set, every request must carry ``Authorization: Bearer <token>``
            (or ``X-API-Key: <token>``, what ORS clients send).
    """

    max_sessions: int = 64
    idle_timeout_s: float | None = 600.0
    max_request_bytes: int = 8 * 1024 * 1024
    token: str | None = None

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ValueError("max_sessions must be >= 1")
        if self.idle_timeout_s is not None and self.idle_timeout_s <= 0:
            raise ValueError("idle_timeout_s must be > 0 (or None)")
        if self.max_request_bytes < 1024:
            raise ValueError("max_request_bytes must be >= 1024")


def served_env_ids() -> list[str]:
    """The registered codegym ids (``codegym/Suite-v0`` needs a ``suite`` option)."""
    register_envs()
    return list(ENV_IDS)


def check_tool_call(name: str, arguments: Any) -> dict[str, Any]:
    """`arguments` checked against the tool's schema; raises `SessionError` naming what is wrong."""
    spec = TOOLS.get(name)
    if spec is None:
        raise SessionError(f"unknown tool {name!r}; tools: {', '.join(TOOLS)}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise SessionError(f"{name}: arguments must be an object, not {type(arguments).__name__}")
    params = spec["parameters"]
    props = params.get("properties", {})
    unknown = sorted(set(arguments) - set(props))
    missing = [k for k in params.get("required", []) if k not in arguments]
    if unknown or missing:
        raise SessionError(f"{name}: " + "; ".join(
            ([f"unknown argument(s) {unknown}"] if unknown else []) + ([f"missing {missing}"] if missing else []))
            + f" (arguments: {sorted(props)})")
    for key, value in arguments.items():
        want = _JSON_TYPES.get(props[key].get("type"))
        if want is not None and value is not None and (not isinstance(value, want) or isinstance(value, bool)):
            raise SessionError(f"{name}: argument {key!r} must be a {props[key]['type']}")
    return dict(arguments)


def tool_action(name: str, arguments: Mapping[str, Any] | None = None) -> str:
    """The action text of one tool call (what the env parses): JSON in OpenAI function-call shape."""
    args = check_tool_call(name, arguments)
    if name == "act":
        return str(args["text"])
    if name == "submit":
        return "submit"
    return json.dumps({"name": name, "arguments": {k: v for k, v in args.items() if v is not None}})


def _info_record(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` as JSON; ``files`` is left out (``files_omitted``) when it is large."""
    out = dict(info)
    files = out.get("files")
    if isinstance(files, Mapping):
        size = sum(len(v) if isinstance(v, str) else 0 for v in files.values())
        if size > MAX_INFO_FILES_CHARS:
            out["files"] = None
            out["files_omitted"] = {"files": len(files), "chars": size}
    return jsonable(out)


class Session:
    """One client's episodes on one env (made by `SessionManager.open`; thread-safe)."""

    def __init__(self, manager: SessionManager, session_id: str, env_id: str, options: dict[str, Any]):
        self.manager, self.id, self.env_id, self.options = manager, session_id, env_id, options
        self.env: gym.Env | None = None
        self.lock = threading.Lock()
        self.created_at = self.last_active = time.monotonic()
        self.episode_id: str | None = None
        self.step_count = 0
        self.done = True
        self.total_reward = 0.0
        self.last_info: dict[str, Any] = {}
        self.closed = self.expired = False
        self.episodes = 0

    # ------------------------------------------------------------------ helpers

    def _live_env(self) -> gym.Env:
        if self.expired:
            raise SessionExpired(f"session {self.id} was closed after {self.manager.limits.idle_timeout_s:g} s "
                                 "without a request; its env is gone (open a new session)")
        if self.closed or self.env is None:
            raise SessionClosed(f"session {self.id} is closed")
        return self.env

    def touch(self) -> None:
        """Count a request as activity (the idle reaper spares the session)."""
        self.last_active = time.monotonic()

    # ------------------------------------------------------------------ operations

    def reset(self, seed: int | None = None, task_id: str | None = None, episode_id: str | None = None,
              options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Start an episode (seeded, or on `task_id`); returns ``{observation, reward: None, done, info}``."""
        with self.lock:
            self.touch()
            opts = dict(options or {})
            if task_id is not None:
                opts["task_id"] = task_id
            try:
                obs, info = self._live_env().reset(seed=seed, options=opts)
            except KeyError as e:  # unknown task id: the env's own message
                raise SessionError(str(e.args[0]) if e.args else str(e)) from None
            self.episode_id = episode_id or uuid.uuid4().hex
            self.step_count, self.done, self.total_reward = 0, False, 0.0
            self.episodes += 1
            self.last_info = _info_record(info)
            self.touch()
            return {"observation": obs, "reward": None, "done": False, "terminated": False, "truncated": False,
                    "info": self.last_info}

    def step(self, action: str) -> dict[str, Any]:
        """One env step on `action` text; returns ``{observation, reward, done, terminated, truncated, info}``."""
        if not isinstance(action, str):
            raise SessionError(f"an action is text, not {type(action).__name__}")
        with self.lock:
            self.touch()
            env = self._live_env()
            if self.episode_id is None:
                raise OrderError("reset first: call reset before step")
            if self.done:
                raise OrderError("the episode is over; call reset to start another")
            obs, reward, terminated, truncated, info = env.step(action)
            self.step_count += 1
            self.done = bool(terminated or truncated)
            self.total_reward += float(reward)
            self.last_info = _info_record(info)
            self.touch()
            return {"observation": obs, "reward": float(reward), "done": self.done, "terminated": bool(terminated),
                    "truncated": bool(truncated), "info": self.last_info}

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """One tool call (`TOOLS`) as one step; the record also names the tool."""
        record = self.step(tool_action(name, arguments))
        record["tool"] = name
        return record

    def state(self) -> dict[str, Any]:
        """The session's state without stepping (a snapshot: never waits for a running step)."""
        info, idle = self.last_info, time.monotonic() - self.last_active
        self.touch()
        return {"session_id": self.id, "env_id": self.env_id, "episode_id": self.episode_id,
                "step_count": self.step_count, "done": self.done, "total_reward": self.total_reward,
                "episodes": self.episodes, "task_id": info.get("task_id"), "turn": info.get("turn"),
                "turns_left": info.get("turns_left"), "language": info.get("language"),
                "main_file": info.get("main_file"), "files": info.get("files"),
                "options": jsonable(self.options), "expired": self.expired, "closed": self.closed,
                "idle_s": idle}

    def close(self) -> None:
        """Free the env (its workspace and working tree); idempotent."""
        self.manager.close(self)

    def _free(self, expired: bool) -> None:
        env, self.env = self.env, None
        self.closed, self.expired = True, self.expired or expired
        if env is not None:
            env.close()


class SessionManager:
    """Every live session of one server process (see the module docstring).

    Args:
        limits: `ServeLimits`.
        env_ids: the ids clients may open (default: every registered codegym id).
        env_kwargs: ``gym.make`` options for every env (e.g. ``{"sandbox": "docker"}``, or
            ``{"reward": ...}``: a base reward, a wrapper type or a reward stack); a client's
            reset options override them.
        suites: suite names or paths clients may name (besides the bundled suites).
    """

    def __init__(self, limits: ServeLimits | None = None, env_ids: Sequence[str] | None = None,
                 env_kwargs: Mapping[str, Any] | None = None, suites: Sequence[str] = ()):
        self.limits = limits or ServeLimits()
        known = served_env_ids()
        self.env_ids = list(env_ids) if env_ids else known
        unknown = [e for e in self.env_ids if e not in known]
        if unknown:
            raise ValueError(f"unknown env ids {unknown}; registered: {known}")
        self.env_kwargs = dict(env_kwargs or {})
        self.suites = list(dict.fromkeys([*list_suites(), *map(str, suites)]))
        self.sessions: dict[str, Session] = {}
        self.counts = {"opened": 0, "closed": 0, "expired": 0, "refused": 0}
        self._envs: weakref.WeakSet = weakref.WeakSet()
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)  # notified when a session opens or ends
        self._ids = itertools.count(1)
        self.executor = ThreadPoolExecutor(max_workers=self.limits.max_sessions + 4,
                                           thread_name_prefix="codegym-session")
        self._stop = threading.Event()
        self._reaper: threading.Thread | None = None

    # ------------------------------------------------------------------ sessions

    def _env_options(self, env_id: str, options: Mapping[str, Any]) -> dict[str, Any]:
        bad = sorted(set(options) - set(ENV_OPTIONS))
        if bad:
            raise SessionError(f"unknown env option(s) {bad}; allowed: {list(ENV_OPTIONS)}")
        opts = {k: v for k, v in options.items() if v is not None}
        suite = opts.get("suite")
        if suite is not None and str(suite) not in self.suites:
            raise SessionError(f"suite {suite!r} is not served; suites: {self.suites}")
        if env_id == "codegym/Suite-v0" and suite is None:
            raise SessionError("codegym/Suite-v0 needs the option suite=NAME (served: "
                               f"{', '.join(self.suites)})")
        return opts

    def open(self, env_id: str, options: Mapping[str, Any] | None = None) -> Session:
        """A new session on `env_id` with env `options` (`ENV_OPTIONS`); raises `CapacityError` when full."""
        if env_id not in self.env_ids:
            raise SessionError(f"env {env_id!r} is not served; served: {self.env_ids}")
        opts = self._env_options(env_id, options or {})
        with self._lock:
            if len(self.sessions) >= self.limits.max_sessions:
                self.counts["refused"] += 1
                raise CapacityError(f"server at capacity: {len(self.sessions)}/{self.limits.max_sessions} "
                                    "sessions are live; close one or wait for an idle one to expire")
            session = Session(self, f"s{next(self._ids)}-{uuid.uuid4().hex[:8]}", env_id, opts)
            self.sessions[session.id] = session  # the slot is held while the env is made
        try:
            env = gym.make(env_id, **{**self.env_kwargs, **opts})
        except Exception as e:
            with self._lock:
                self.sessions.pop(session.id, None)
            raise SessionError(f"cannot make {env_id} with {opts}: {e}") from e
        session.env = env
        self._envs.add(env.unwrapped)
        with self._lock:
            self.counts["opened"] += 1
            self._changed.notify_all()
        return session

    def get(self, session_id: str) -> Session:
        with self._lock:
            session = self.sessions.get(session_id)
        if session is None:
            raise SessionError(f"no session {session_id!r}")
        return session

    def close(self, session: Session, expired: bool = False) -> None:
        """Free `session` (waits for a step it is running); idempotent."""
        with session.lock:
            if session.closed:
                return
            session._free(expired)
        with self._lock:
            self.sessions.pop(session.id, None)
            self.counts["expired" if expired else "closed"] += 1
            self._changed.notify_all()

    def reap(self, now: float | None = None) -> list[str]:
        """Close the sessions idle longer than the timeout at `now` (monotonic); returns their ids.

        A session running a step is busy, not idle: it is left alone."""
        timeout = self.limits.idle_timeout_s
        if timeout is None:
            return []
        now = time.monotonic() if now is None else now
        with self._lock:
            stale = [s for s in self.sessions.values() if now - s.last_active > timeout]
        reaped = []
        for s in stale:
            if not s.lock.acquire(blocking=False):
                continue  # busy
            try:
                if s.closed or now - s.last_active <= timeout:
                    continue
                s._free(expired=True)
            finally:
                s.lock.release()
            with self._lock:
                self.sessions.pop(s.id, None)
                self.counts["expired"] += 1
                self._changed.notify_all()
            reaped.append(s.id)
        return reaped

    def wait_for(self, predicate, timeout: float | None = None) -> bool:
        """Block until ``predicate(manager)`` holds (checked whenever a session opens or
        ends); returns whether it held before `timeout` seconds."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self), timeout)

    # ------------------------------------------------------------------ lifecycle

    def start_reaper(self) -> None:
        """Reap idle sessions in a daemon thread (every quarter of the timeout, at most 5 s apart)."""
        if self.limits.idle_timeout_s is None or self._reaper is not None:
            return
        interval = min(max(self.limits.idle_timeout_s / 4, 0.05), 5.0)

        def loop() -> None:
            while not self._stop.wait(interval):
                self.reap()

        self._reaper = threading.Thread(target=loop, name="codegym-session-reaper", daemon=True)
        self._reaper.start()

    def shutdown(self) -> None:
        """Stop the reaper and close every session."""
        self._stop.set()
        for s in list(self.sessions.values()):
            self.close(s)
        self.executor.shutdown(wait=False, cancel_futures=True)

    def stats(self) -> dict[str, Any]:
        """Live sessions, limits and counters (``live_envs``: env objects not yet garbage collected)."""
        with self._lock:
            active = len(self.sessions)
            busy = sum(1 for s in self.sessions.values() if s.lock.locked())
        return {"active": active, "busy": busy, "max_sessions": self.limits.max_sessions,
                "idle_timeout_s": self.limits.idle_timeout_s, "live_envs": len(self._envs), **self.counts,
                "env_ids": list(self.env_ids), "suites": list(self.suites)}
