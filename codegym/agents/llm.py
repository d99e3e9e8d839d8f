"""`LLMAgent`: an agent backed by any OpenAI-compatible chat endpoint.

This module owns the client side of codegym's model agent: the conversation
(kept as chat messages), the HTTP calls (standard library only), the retry and
concurrency policy, and what a turn records for training (token ids and
log-probs exactly as the server sampled them).

Servers: vLLM, SGLang, llama.cpp's ``llama-server``, Ollama (``/v1``), OpenAI
and anything else that answers ``POST {base_url}/chat/completions``.

    >>> agent = LLMAgent(model="qwen", base_url="http://127.0.0.1:8000/v1", temperature=0.7)
    >>> agent = LLMAgent.from_spec("model=qwen,base_url=http://127.0.0.1:8000/v1,max_tokens=512")
    >>> # codegym run codegym/PerfCode-v0 --agent "llm:model=qwen,base_url=http://127.0.0.1:8000/v1"

Conversation: ``[system] + user(observation) + assistant(reply) + user(observation) ...``,
one user message per env observation. When the server answered with OpenAI
``tool_calls``, the assistant message keeps them and the next observation is
sent as ``tool`` message(s) answering those calls (the protocol requires it; the
first call's message carries the observation, the others point to it).

Action: the whole reply text goes to the env (its action parser finds fenced
blocks, diffs, SEARCH/REPLACE blocks, JSON tool calls and ``submit``). Native
tool calls are rendered as a ```` ```json ```` block of
``{"name": ..., "arguments": {...}}`` objects, the tool-call format
`codegym.edits.parse.parse_action` accepts. With ``use_tools=True`` the request
offers ``tools=codegym.edits.parse.TOOL_SCHEMAS``.

Token ids and log-probs (``self.last_turn`` after each `act`):

- log-probs: the request asks ``logprobs: true, top_logprobs: 0`` (``logprobs=False``
  to turn off); read from ``choices[0].logprobs.content[*].logprob``.
- vLLM (``return_token_ids: true``): prompt ids at top-level ``prompt_token_ids``,
  sampled ids at ``choices[0].token_ids``. With ``return_tokens_as_token_ids``
  (request field or server flag) each log-prob entry's ``token`` is
  ``"token_id:<id>"``, from which the sampled ids are read when ``token_ids`` is absent.
- SGLang (``return_prompt_token_ids``/``return_token_ids: true``): ids at
  ``choices[0].prompt_token_ids`` / ``choices[0].token_ids``; also
  ``choices[0].meta_info.output_token_logprobs`` (``[logprob, id, text]`` triples).
- ``token_ids="auto"`` (default) sends ``return_token_ids`` and
  ``return_prompt_token_ids`` to every server except api.openai.com (which refuses
  unknown fields); if a server answers 400 naming one of those fields, they are
  dropped for that base URL and the request is sent again.

Prefix check: a chat template is prefix-preserving when the prompt of turn t
starts with the prompt of turn t-1 followed by the tokens sampled at t-1; a
trainer that concatenates turns relies on it. When the server returns prompt
ids, every turn is checked: ``last_turn["prefix_preserving"]`` is True/False
(None when unknown) and the first failure of an agent emits one warning.

Reliability: each attempt holds a process-wide semaphore per
``(base_url, max_concurrency)`` (collect runs several agents in threads; forks
share it). Timeouts, connection errors, 408/409/425/429/5xx and malformed
200 bodies are retried with exponential backoff and jitter, honouring
``Retry-After``; other 4xx fail at once. When retries run out, `LLMError`
(status, body excerpt, attempts) is raised: the episode runner decides.

Spec syntax (`from_spec`, ``codegym run --agent llm:SPEC``): comma-separated
``key=value`` pairs; a first item without ``=`` is the model. Values are read as
JSON when they parse (numbers, ``true``/``false``/``null``, ``["a","b"]``,
``{...}``; commas inside brackets, braces or quotes do not split), else as
strings. ``extra.NAME=VALUE`` adds ``NAME`` to the request body. Keys are the
constructor's arguments, plus the aliases ``url`` (base_url), ``concurrency``
(max_concurrency), ``retries`` (max_retries), ``system`` (system_prompt),
``tools`` (use_tools). Example::

    model=qwen,base_url=http://127.0.0.1:8000/v1,temperature=0.7,max_tokens=512,stop=["\\n\\n\\n"],extra.top_k=20

The API key is never part of a spec: it comes from the environment variable
named by ``api_key_env`` (default ``OPENAI_API_KEY``) unless given to the constructor.
Defaults for ``base_url``/``model`` come from ``CODEGYM_LLM_BASE_URL`` (else
``OPENAI_BASE_URL``, else ``http://127.0.0.1:8000/v1``) and ``CODEGYM_LLM_MODEL``
(else the first model the server lists at ``/models``).
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import json
import os
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

__all__ = ["LLMAgent", "LLMError", "DEFAULT_SYSTEM_PROMPT", "parse_spec", "response_tokens"]

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
DEFAULT_SYSTEM_PROMPT = (
    "You are an expert programmer working on a coding task in a multi-turn environment. "
    "Each reply you write is applied to the workspace as an edit, in one of the action "
    "formats the task describes; you then see the test feedback. Write `submit` on a line "
    "of its own when your solution is ready."
)

#: request fields codegym adds to get token ids (dropped if a server refuses them)
_TOKEN_ID_FIELDS = {
    "auto": {"return_token_ids": True, "return_prompt_token_ids": True},
    "vllm": {"return_token_ids": True, "return_tokens_as_token_ids": True},
    "sglang": {"return_token_ids": True, "return_prompt_token_ids": True},
    "off": {},
}
_RETRY_STATUSES = frozenset({408, 409, 425, 429}) | frozenset(range(500, 600))
_TOKEN_ID_RE = re.compile(r"^token_id[:_](\d+)$")
_BODY_EXCERPT = 500


class LLMError(RuntimeError):
    """A chat request failed for good (a non-retryable 4xx, or retries ran out).

    Attributes: ``status`` (HTTP status or None for network errors), ``body``
    (excerpt of the response body), ``url``, ``attempts`` (requests made),
    ``reason`` (short cause: ``"http"``, ``"timeout"``, ``"connection"``, ``"malformed"``).
    """

    def __init__(self, message: str, *, status: int | None = None, body: str = "", url: str = "",
                 attempts: int = 0, reason: str = "http"):
        super().__init__(message)
        self.status = status
        self.body = body
        self.url = url
        self.attempts = attempts
        self.reason = reason


# ---------------------------------------------------------------------------
# process-wide state shared by all agents (and their forks): concurrency gates,
# discovered models, servers that refused the token-id fields
# ---------------------------------------------------------------------------

_REGISTRY_LOCK = threading.Lock()
_GATES: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_MODELS: dict[str, str] = {}
_NO_TOKEN_FIELDS: set[str] = set()


def _gate(base_url: str, limit: int | None) -> threading.BoundedSemaphore | None:
    """The semaphore that bounds requests in flight to `base_url` (None: unbounded)."""
    if not limit or limit <= 0:
        return None
    key = (base_url, int(limit))
    with _REGISTRY_LOCK:
        sem = _GATES.get(key)
        if sem is None:
            sem = _GATES[key] = threading.BoundedSemaphore(int(limit))
        return sem


# ---------------------------------------------------------------------------
# spec parsing
# ---------------------------------------------------------------------------

_ALIASES = {"url": "base_url", "concurrency": "max_concurrency", "retries": "max_retries",
            "system": "system_prompt", "tools": "use_tools"}


def _split_top(spec: str) -> list[str]:
    """Split on commas that are not inside brackets, braces or quotes."""
    items, depth, quote, cur = [], 0, "", []
    i = 0
    while i < len(spec):
        ch = spec[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(spec):
                cur.append(spec[i + 1])
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch in "[{(":
            depth += 1
            cur.append(ch)
        elif ch in "]})":
            depth = max(0, depth - 1)
            cur.append(ch)
        elif ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    items.append("".join(cur))
    return [s.strip() for s in items if s.strip()]


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        low = text.lower()
        if low in ("true", "yes", "on"):
            return True
        if low in ("false", "no", "off"):
            return False
        if low in ("none", "null"):
            return None
        return text


def parse_spec(spec: str) -> dict[str, Any]:
    """Keyword arguments of `LLMAgent` from a spec string (syntax in the module docstring)."""
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for n, item in enumerate(_split_top(spec or "")):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq:
            if n == 0:
                kwargs["model"] = item
                continue
            raise ValueError(f"llm spec item {item!r} is not key=value (spec: {spec!r})")
        raw = raw.strip()
        if key.startswith("extra."):
            extra[key[len("extra."):]] = _value(raw)
            continue
        key = _ALIASES.get(key, key)
        if key not in _SPEC_TYPES:
            raise ValueError(f"unknown llm spec key {key!r}; known: {', '.join(sorted(_SPEC_TYPES))}, "
                             f"extra.NAME, aliases {', '.join(sorted(_ALIASES))}")
        kind = _SPEC_TYPES[key]
        value = _value(raw)
        if kind is str:
            value = raw  # never reinterpret a model name like "1.5" or "null"
        elif value is not None:
            try:
                if kind is bool and not isinstance(value, bool):
                    raise TypeError
                if kind is int and (isinstance(value, bool) or (isinstance(value, float) and not value.is_integer())):
                    raise TypeError
                value = kind(value) if kind in (int, float) else value
                if kind is dict and not isinstance(value, dict):
                    raise TypeError
            except (TypeError, ValueError):
                raise ValueError(f"llm spec {key}={raw!r}: expected {kind.__name__}") from None
        kwargs[key] = value
    if extra:
        kwargs["extra_body"] = {**(kwargs.get("extra_body") or {}), **extra}
    return kwargs


#: spec key -> type (str values are taken verbatim; `object` = any JSON)
_SPEC_TYPES: dict[str, type] = {
    "model": str, "base_url": str, "api_key_env": str, "temperature": float, "top_p": float,
    "max_tokens": int, "seed": int, "stop": object, "extra_body": dict, "system_prompt": str,
    "max_concurrency": int, "timeout": float, "max_retries": int,
    "backoff_base": float, "backoff_max": float, "retry_after_max": float, "logprobs": bool,
    "token_ids": str, "use_tools": bool, "check_prefix": bool, "name": str,
}


# ---------------------------------------------------------------------------
# response parsing
# ---------------------------------------------------------------------------


def response_tokens(data: Mapping[str, Any]) -> tuple[list[int] | None, list[int] | None, list[float] | None]:
    """``(prompt_ids, response_ids, logprobs)`` from a chat completion body (None where absent).

    Knows vLLM's (top-level ``prompt_token_ids``, ``choices[0].token_ids``,
    ``token_id:<id>`` log-prob tokens) and SGLang's (``choices[0].prompt_token_ids``,
    ``choices[0].token_ids``, ``meta_info.output_token_logprobs``) shapes."""
    choice = (data.get("choices") or [{}])[0] or {}
    prompt = data.get("prompt_token_ids")
    if prompt is None:
        prompt = choice.get("prompt_token_ids")
    response = choice.get("token_ids")
    logprobs: list[float] | None = None
    lp = choice.get("logprobs")
    if isinstance(lp, dict):
        content = lp.get("content")
        if isinstance(content, list) and content:
            logprobs = [float(e.get("logprob", 0.0)) for e in content if isinstance(e, dict)]
            if response is None:
                ids = [_TOKEN_ID_RE.match(str(e.get("token", ""))) for e in content if isinstance(e, dict)]
                if ids and all(ids):
                    response = [int(m.group(1)) for m in ids if m]
        elif isinstance(lp.get("token_logprobs"), list):  # completions-style logprobs
            logprobs = [float(x) if x is not None else 0.0 for x in lp["token_logprobs"]]
    meta = choice.get("meta_info")
    if isinstance(meta, dict) and isinstance(meta.get("output_token_logprobs"), list):
        triples = [t for t in meta["output_token_logprobs"] if isinstance(t, (list, tuple)) and len(t) >= 2]
        if triples:
            if response is None:
                response = [int(t[1]) for t in triples]
            if logprobs is None:
                logprobs = [float(t[0]) if t[0] is not None else 0.0 for t in triples]
    as_ints = lambda xs: [int(x) for x in xs] if isinstance(xs, list) else None  # noqa: E731
    return as_ints(prompt), as_ints(response), logprobs


def _render_tool_calls(calls: Sequence[Mapping[str, Any]]) -> str:
    """OpenAI ``tool_calls`` as the JSON tool-call text `codegym.edits.parse.parse_action` reads."""
    out = []
    for call in calls:
        fn = call.get("function") or {}
        args: Any = fn.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                pass  # kept as the string: the env's parser reports the bad arguments
        out.append({"name": fn.get("name"), "arguments": args if args is not None else {}})
    return "```json\n" + json.dumps(out, indent=2, ensure_ascii=False) + "\n```\n"


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta seconds, possibly fractional, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time()) if when is not None else None


def _is_loopback(host: str | None) -> bool:
    return host in ("localhost", "127.0.0.1", "::1") or bool(host and host.startswith("127."))


@dataclass
class _Attempt:
    """Outcome of one HTTP attempt (recorded in ``last_turn["attempts"]``)."""

    status: int | None
    error: str | None
    delay: float = 0.0  # backoff slept after this attempt

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "error": self.error, "delay": self.delay}


# ---------------------------------------------------------------------------
# the agent
# ---------------------------------------------------------------------------


class LLMAgent:
    """An agent that asks an OpenAI-compatible chat endpoint for each action.

    Args:
        model: served model name (None: ``CODEGYM_LLM_MODEL``, else the first of ``/models``).
        base_url: API root including ``/v1`` (None: ``CODEGYM_LLM_BASE_URL``/``OPENAI_BASE_URL``).
        api_key: bearer token; None reads the environment variable ``api_key_env``.
        temperature, top_p, max_tokens, stop: sampling parameters (None: server default;
            for OpenAI reasoning models that refuse ``max_tokens`` use
            ``extra_body={"max_completion_tokens": N}``).
        seed: base sampling seed; when set each request sends a seed derived from it, the
            episode seed and the turn (reproducible, yet different across turns and episodes).
        extra_body: more request fields (``top_k``, ``min_p``, ``chat_template_kwargs`` ...).
        system_prompt: first message (None or "" for none).
        max_concurrency: requests in flight per base URL in this process (None/0: no limit).
        timeout: seconds an attempt may wait on the socket (to connect, or for the next
            bytes of the answer) before it counts as timed out and is retried.
        max_retries: retries after the first attempt.
        backoff_base, backoff_max: delay before retry k is ``min(max, base * 2**k)``,
            jittered to between half and all of it.
        retry_after_max: cap on a server's ``Retry-After``.
        logprobs: ask for sampled-token log-probs.
        token_ids: ``"auto"``, ``"vllm"``, ``"sglang"`` or ``"off"``: which token-id request
            fields to send (module docstring).
        use_tools: offer ``codegym.edits.parse.TOOL_SCHEMAS`` as OpenAI tools.
        check_prefix: run the prefix-preservation check when prompt ids come back.
        headers: extra HTTP headers.
        name: agent name in records (default ``llm:<model>``).
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, *,
                 api_key: str | None = None, api_key_env: str = "OPENAI_API_KEY",
                 temperature: float | None = None, top_p: float | None = None,
                 max_tokens: int | None = None, seed: int | None = None,
                 stop: str | Sequence[str] | None = None, extra_body: Mapping[str, Any] | None = None,
                 system_prompt: str | None = DEFAULT_SYSTEM_PROMPT, max_concurrency: int | None = 8,
                 timeout: float = 600.0, max_retries: int = 4,
                 backoff_base: float = 0.5, backoff_max: float = 30.0, retry_after_max: float = 300.0,
                 logprobs: bool = True, token_ids: str = "auto", use_tools: bool = False,
                 check_prefix: bool = True, headers: Mapping[str, str] | None = None,
                 name: str | None = None):
        if token_ids not in _TOKEN_ID_FIELDS:
            raise ValueError(f"token_ids must be one of {sorted(_TOKEN_ID_FIELDS)}, not {token_ids!r}")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        base_url = base_url or os.environ.get("CODEGYM_LLM_BASE_URL") or os.environ.get("OPENAI_BASE_URL") \
            or DEFAULT_BASE_URL
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model or os.environ.get("CODEGYM_LLM_MODEL") or None
        self._api_key = api_key
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.seed = seed
        self.stop = [stop] if isinstance(stop, str) else (list(stop) if stop is not None else None)
        self.extra_body = dict(extra_body or {})
        self.system_prompt = system_prompt
        self.max_concurrency = max_concurrency
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.retry_after_max = float(retry_after_max)
        self.logprobs = bool(logprobs)
        self.token_ids = token_ids
        self.use_tools = bool(use_tools)
        self.check_prefix = bool(check_prefix)
        self.headers = dict(headers or {})
        self._name = name
        self._rng = random.Random()
        self.messages: list[dict[str, Any]] = []
        self.last_turn: dict[str, Any] | None = None
        self.episode_seed: int | None = None
        self.turn = 0
        self._pending_tool_ids: list[str] = []
        self._prev_ids: list[int] | None = None  # prompt + response ids of the previous turn
        self._warned_prefix = False

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_spec(cls, spec: str, **overrides: Any) -> "LLMAgent":
        """An agent from a spec string, e.g. ``"model=qwen,base_url=http://127.0.0.1:8000/v1,temperature=0.7"``."""
        return cls(**{**parse_spec(spec), **overrides})

    def _config(self) -> dict[str, Any]:
        return dict(model=self.model, base_url=self.base_url, api_key=self._api_key,
                    api_key_env=self.api_key_env, temperature=self.temperature, top_p=self.top_p,
                    max_tokens=self.max_tokens, seed=self.seed, stop=self.stop,
                    extra_body=dict(self.extra_body), system_prompt=self.system_prompt,
                    max_concurrency=self.max_concurrency, timeout=self.timeout,
                    max_retries=self.max_retries,
                    backoff_base=self.backoff_base, backoff_max=self.backoff_max,
                    retry_after_max=self.retry_after_max, logprobs=self.logprobs,
                    token_ids=self.token_ids, use_tools=self.use_tools, check_prefix=self.check_prefix,
                    headers=dict(self.headers), name=self._name)

    def fork(self) -> "LLMAgent":
        """A fresh agent with the same configuration and no conversation.

        It shares this process's semaphore for the base URL (the gates live in a
        module registry, not on the instance, which also keeps agents picklable)."""
        return type(self)(**self._config())

    def __repr__(self) -> str:  # never shows the API key
        return f"LLMAgent(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def name(self) -> str:
        return self._name or (f"llm:{self.model}" if self.model else "llm")

    # ------------------------------------------------------------------ Agent protocol

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        """Start a new conversation (the task is not read: the model sees only observations)."""
        self.messages = []
        self.last_turn = None
        self.episode_seed = seed
        self.turn = 0
        self._pending_tool_ids = []
        self._prev_ids = None

    def act(self, observation: str, info: Mapping[str, Any] | None = None) -> str:
        """Send the observation, return the reply as action text; fills ``self.last_turn``.

        Raises `LLMError` when the server fails for good; the conversation is then left
        as it was before the call, so the caller may call `act` again with the same
        observation."""
        n_before, pending_before = len(self.messages), list(self._pending_tool_ids)
        try:
            return self._act(observation)
        except BaseException:
            del self.messages[n_before:]
            self._pending_tool_ids = pending_before
            raise

    def _act(self, observation: str) -> str:
        if not self.messages and self.system_prompt:
            self.messages.append({"role": "system", "content": self.system_prompt})
        if self._pending_tool_ids:
            first, *rest = self._pending_tool_ids
            self.messages.append({"role": "tool", "tool_call_id": first, "content": observation})
            for call_id in rest:
                self.messages.append({"role": "tool", "tool_call_id": call_id,
                                      "content": "(the result of all tool calls is in the first tool message)"})
            self._pending_tool_ids = []
        else:
            self.messages.append({"role": "user", "content": observation})
        sent = [dict(m) for m in self.messages]
        t0 = time.perf_counter()
        data, attempts = self._chat(sent)
        latency = time.perf_counter() - t0
        choice = data["choices"][0]
        msg = choice.get("message") or {}
        content = msg.get("content")
        if isinstance(content, list):  # content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        content = content or ""
        calls = [c for c in (msg.get("tool_calls") or []) if isinstance(c, dict)]
        action = content
        assistant: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            rendered = _render_tool_calls(calls)
            action = (content.rstrip() + "\n\n" + rendered) if content.strip() else rendered
            assistant["tool_calls"] = calls
            self._pending_tool_ids = [str(c.get("id") or f"call_{self.turn}_{i}") for i, c in enumerate(calls)]
        self.messages.append(assistant)
        prompt_ids, response_ids, logprobs = response_tokens(data)
        prefix_ok = self._check_prefix(prompt_ids)
        self._prev_ids = (prompt_ids + response_ids) if (prompt_ids is not None and response_ids is not None) \
            else None
        self.turn += 1
        self.last_turn = {
            "prompt_ids": prompt_ids,
            "response_ids": response_ids,
            "logprobs": logprobs,
            "messages": sent,
            "finish_reason": choice.get("finish_reason"),
            "usage": data.get("usage"),
            "prefix_preserving": prefix_ok,
            "text": content,
            "tool_calls": calls or None,
            "reasoning": msg.get("reasoning_content", msg.get("reasoning")),
            "model": data.get("model"),
            "attempts": [a.to_dict() for a in attempts],
            "latency_s": latency,
        }
        return action

    # ------------------------------------------------------------------ prefix check

    def _check_prefix(self, prompt_ids: list[int] | None) -> bool | None:
        if not self.check_prefix or prompt_ids is None or self._prev_ids is None:
            return None
        expected = self._prev_ids
        ok = prompt_ids[:len(expected)] == expected
        if not ok and not self._warned_prefix:
            self._warned_prefix = True
            at = next((i for i, (a, b) in enumerate(zip(prompt_ids, expected)) if a != b),
                      min(len(prompt_ids), len(expected)))
            warnings.warn(
                f"{self.name} @ {self.base_url}: the server's chat template is not prefix-preserving "
                f"between turns (turn {self.turn + 1}'s prompt ids differ from the previous prompt + "
                f"sampled response at token {at} of {len(expected)}); concatenating turns for training "
                "would not match what the model saw (last_turn['prefix_preserving'] is False)",
                UserWarning, stacklevel=3)
        return ok

    # ------------------------------------------------------------------ HTTP

    def _request_seed(self) -> int | None:
        if self.seed is None:
            return None
        # distinct per turn and episode, reproducible for the same (seed, episode seed, turn)
        return (int(self.seed) * 1_000_003 + int(self.episode_seed or 0) * 10_007 + self.turn) % (2 ** 31 - 1)

    def _token_fields(self) -> dict[str, Any]:
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        if self.token_ids == "auto" and (host.endswith("openai.com") or self.base_url in _NO_TOKEN_FIELDS):
            return {}
        return dict(_TOKEN_ID_FIELDS[self.token_ids])

    def _body(self, messages: list[dict[str, Any]], model: str) -> dict[str, Any]:
        body: dict[str, Any] = {"model": model, "messages": messages}
        for key, value in (("temperature", self.temperature), ("top_p", self.top_p),
                           ("max_tokens", self.max_tokens), ("seed", self._request_seed()),
                           ("stop", self.stop)):
            if value is not None:
                body[key] = value
        if self.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = 0
        if self.use_tools:
            from codegym.edits.parse import TOOL_SCHEMAS
            body["tools"] = TOOL_SCHEMAS
            body["tool_choice"] = "auto"
        body.update(self._token_fields())
        body.update(self.extra_body)  # the user's fields win
        return body

    def _api_key_value(self) -> str | None:
        return self._api_key or os.environ.get(self.api_key_env) or None

    def _open(self, method: str, url: str, payload: bytes | None) -> tuple[int, dict[str, str], bytes]:
        headers = {"Accept": "application/json", "User-Agent": "codegym-llm-agent", **self.headers}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        key = self._api_key_value()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(url, data=payload, headers=headers, method=method)
        # a proxy from the environment must not capture a local server
        handlers = [urllib.request.ProxyHandler({})] if _is_loopback(urllib.parse.urlsplit(url).hostname) else []
        opener = urllib.request.build_opener(*handlers)
        try:
            with opener.open(req, timeout=self.timeout) as resp:
                return resp.status, dict(resp.headers.items()), resp.read()
        except urllib.error.HTTPError as e:
            try:
                body = e.read()
            except (OSError, http.client.HTTPException):
                body = b""
            return e.code, dict(e.headers.items()) if e.headers else {}, body

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None,
                 expect: str) -> tuple[dict[str, Any], list[_Attempt]]:
        """JSON request with retries; `expect` is a key the answer must hold ("choices", "data")."""
        url = self.base_url + path
        payload = json.dumps(body).encode() if body is not None else None
        gate = _gate(self.base_url, self.max_concurrency) or contextlib.nullcontext()
        attempts: list[_Attempt] = []
        dropped_fields = False
        attempt = 0
        while True:
            status: int | None = None
            raw = b""
            hdrs: dict[str, str] = {}
            error: str | None = None
            reason = "http"
            with gate:
                try:
                    status, hdrs, raw = self._open(method, url, payload)
                except (TimeoutError, socket.timeout) as e:
                    error, reason = f"timeout after {self.timeout:g}s ({e})", "timeout"
                except urllib.error.URLError as e:
                    if isinstance(e.reason, (TimeoutError, socket.timeout)):
                        error, reason = f"timeout after {self.timeout:g}s ({e.reason})", "timeout"
                    else:
                        error, reason = f"connection error: {e.reason}", "connection"
                except (ConnectionError, http.client.HTTPException, OSError) as e:
                    error, reason = f"connection error: {type(e).__name__}: {e}", "connection"
            text = raw.decode("utf-8", "replace")
            excerpt = text[:_BODY_EXCERPT] + ("..." if len(text) > _BODY_EXCERPT else "")
            retry_after = None
            if error is None and status == 200:
                try:
                    data = json.loads(text)
                    if not isinstance(data, dict) or not data.get(expect):
                        raise ValueError(f"no {expect!r} in the answer")
                    if expect == "choices" and not isinstance((data["choices"][0] or {}).get("message"), dict):
                        raise ValueError("choices[0] has no message")
                    attempts.append(_Attempt(status, None))
                    return data, attempts
                except (ValueError, TypeError, IndexError, KeyError) as e:
                    error, reason = f"malformed response: {e}", "malformed"
            elif error is None:
                error = f"HTTP {status}"
                if status in _RETRY_STATUSES:
                    retry_after = _retry_after(next((v for k, v in hdrs.items() if k.lower() == "retry-after"), None))
                else:
                    attempts.append(_Attempt(status, error))
                    # a server that refuses codegym's token-id fields: drop them once, resend
                    if (status == 400 and body is not None and not dropped_fields and self.token_ids == "auto"
                            and any(f in text for f in _TOKEN_ID_FIELDS["auto"])):
                        with _REGISTRY_LOCK:
                            _NO_TOKEN_FIELDS.add(self.base_url)
                        body = {k: v for k, v in body.items() if k not in _TOKEN_ID_FIELDS["auto"]}
                        payload = json.dumps(body).encode()
                        dropped_fields = True
                        continue
                    raise LLMError(f"{method} {url} failed: HTTP {status}: {excerpt}", status=status,
                                   body=excerpt, url=url, attempts=len(attempts), reason="http")
            record = _Attempt(status, error)
            attempts.append(record)
            if attempt >= self.max_retries:
                raise LLMError(f"{method} {url} failed after {len(attempts)} attempt(s): {error}"
                               + (f" (HTTP {status}): {excerpt}" if status is not None else ""),
                               status=status, body=excerpt, url=url, attempts=len(attempts), reason=reason)
            delay = min(self.backoff_max, self.backoff_base * (2 ** attempt))
            delay = delay / 2 + self._rng.uniform(0, delay / 2)  # jitter: desynchronise parallel workers
            if retry_after is not None:
                delay = max(delay, min(retry_after, self.retry_after_max))
            record.delay = delay
            time.sleep(delay)  # outside the gate: a waiting worker does not block the others
            attempt += 1

    def _resolve_model(self) -> str:
        if self.model:
            return self.model
        with _REGISTRY_LOCK:
            known = _MODELS.get(self.base_url)
        if known is None:
            data, _ = self._request("GET", "/models", None, "data")
            first = (data.get("data") or [{}])[0]
            if not isinstance(first, dict) or not first.get("id"):
                raise LLMError(f"{self.base_url}/models lists no model; give model=", url=self.base_url + "/models")
            known = str(first["id"])
            with _REGISTRY_LOCK:
                _MODELS[self.base_url] = known
        self.model = known
        return known

    def _chat(self, messages: list[dict[str, Any]]) -> tuple[dict[str, Any], list[_Attempt]]:
        return self._request("POST", "/chat/completions", self._body(messages, self._resolve_model()), "choices")
