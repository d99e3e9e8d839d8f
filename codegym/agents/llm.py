"""`LLMAgent`: an agent backed by any OpenAI-compatible chat endpoint.

Owns the conversation (chat messages, one user message per observation; answers to
native ``tool_calls`` go back as ``tool`` messages), the request body (sampling
parameters, log-probs, token-id fields), model discovery and what a turn records
for training in ``last_turn`` (token ids and log-probs exactly as sampled, and
whether the chat template is prefix-preserving). The HTTP side is
`codegym.agents.llm_client`, the settings groups `codegym.agents.llm_settings`, the
spec syntax `codegym.agents.llm_spec`, the answer's token fields
`codegym.agents.llm_response`; docs/rollout.md has details.

    >>> agent = LLMAgent(model="qwen", base_url="http://127.0.0.1:8000/v1", temperature=0.7)
    >>> agent = LLMAgent.from_spec("model=qwen,base_url=http://127.0.0.1:8000/v1,max_tokens=512")
"""

from __future__ import annotations

import os
import threading
import time
import urllib.parse
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from codegym.agents.llm_client import Attempt, ChatClient, LLMError
from codegym.agents.llm_response import render_tool_calls, response_tokens
from codegym.agents.llm_settings import TOKEN_ID_FIELDS, ChatSettings, SamplingSettings, TransportSettings
from codegym.agents.llm_spec import parse_spec
from codegym.core.groups import GroupField, as_group, grouped
from codegym.core.keys import user_base_url
from codegym.edits.render import TOOL_SCHEMAS
from codegym.tasks.schema import Task

# process-wide state shared by all agents (and their forks): discovered models, servers
# that refused the token-id fields
_REGISTRY_LOCK = threading.Lock()
_MODELS: dict[str, str] = {}
_NO_TOKEN_FIELDS: set[str] = set()


#: `LLMAgent`'s own arguments (besides the settings groups' fields it takes one by one)
AGENT_ARGUMENTS = ("model", "base_url", "api_key", "api_key_env", "sampling", "chat", "transport", "name")


class LLMAgent(ChatClient):
    """An agent that asks an OpenAI-compatible chat endpoint for each action.

    Args:
        model: served model name (None: ``CODEGYM_LLM_MODEL``, else the first of ``/models``).
        base_url: API root including ``/v1`` (None: ``CODEGYM_LLM_BASE_URL``/``OPENAI_BASE_URL``).
        api_key: bearer token (never recorded); None reads the environment variable
            ``api_key_env`` (None: no key). Where a config may send it: `codegym.core.keys`.
        sampling: the request's sampling fields (`SamplingSettings`: temperature, top_p,
            max_tokens, seed, stop, extra_body).
        chat: the conversation and what a turn records (`ChatSettings`: system_prompt,
            logprobs, token_ids, use_tools, check_prefix).
        transport: the HTTP side (`TransportSettings`: max_concurrency, timeout, max_retries,
            backoff_base, backoff_max, retry_after_max, headers; see `ChatClient`).
        name: agent name in records (default ``llm:<model>``).
        **options: the groups' fields one by one (``temperature=0.7, max_tokens=512``), over
            the groups; any other keyword is a TypeError that names it. Each field is also
            read (and set) as the agent's attribute (``agent.temperature``).

    A group may also be a mapping of its fields (an eval config's ``options``).
    """

    temperature = GroupField("sampling")
    top_p = GroupField("sampling")
    max_tokens = GroupField("sampling")
    seed = GroupField("sampling")
    stop = GroupField("sampling")
    extra_body = GroupField("sampling")
    system_prompt = GroupField("chat")
    logprobs = GroupField("chat")
    token_ids = GroupField("chat")
    use_tools = GroupField("chat")
    check_prefix = GroupField("chat")

    def __init__(self, model: str | None = None, base_url: str | None = None, *,
                 api_key: str | None = None, api_key_env: str | None = "OPENAI_API_KEY",
                 sampling: SamplingSettings | None = None, chat: ChatSettings | None = None,
                 transport: TransportSettings | None = None, name: str | None = None, **options: Any):
        groups = grouped("LLMAgent", options, also=AGENT_ARGUMENTS,
                         sampling=as_group(sampling, SamplingSettings(), "LLMAgent", "sampling"),
                         chat=as_group(chat, ChatSettings(), "LLMAgent", "chat"),
                         transport=as_group(transport, TransportSettings(), "LLMAgent", "transport"))
        base_url = base_url or user_base_url()
        super().__init__(base_url, api_key=api_key, api_key_env=api_key_env, transport=groups["transport"])
        self.model = model or os.environ.get("CODEGYM_LLM_MODEL") or None
        self.sampling: SamplingSettings = groups["sampling"]
        self.chat: ChatSettings = groups["chat"]
        self._name = name
        self.messages: list[dict[str, Any]] = []
        self.last_turn: dict[str, Any] | None = None
        self.episode_seed: int | None = None
        self.turn = 0
        self._pending_tool_ids: list[str] = []
        self._prev_ids: list[int] | None = None  # prompt + response ids of the previous turn
        self._warned_prefix = False

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_spec(cls, spec: str, **overrides: Any) -> LLMAgent:
        """An agent from a spec string, e.g. ``"model=qwen,base_url=http://127.0.0.1:8000/v1,temperature=0.7"``."""
        return cls(**{**parse_spec(spec), **overrides})

    def _config(self) -> dict[str, Any]:
        # copies of the groups: a fork's extra_body / headers are its own
        return dict(model=self.model, base_url=self.base_url, api_key=self._api_key,
                    api_key_env=self.api_key_env, sampling=replace(self.sampling), chat=self.chat,
                    transport=replace(self.transport), name=self._name)

    def fork(self) -> LLMAgent:
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

    def reset(self, task: Task | None = None, seed: int | None = None) -> None:
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
            rendered = render_tool_calls(calls)
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

    # ------------------------------------------------------------------ requests

    def _request_seed(self) -> int | None:
        if self.seed is None:
            return None
        # distinct per turn and episode, reproducible for the same (seed, episode seed, turn)
        return (int(self.seed) * 1_000_003 + int(self.episode_seed or 0) * 10_007 + self.turn) % (2 ** 31 - 1)

    def _token_fields(self) -> dict[str, Any]:
        host = urllib.parse.urlsplit(self.base_url).hostname or ""
        if self.token_ids == "auto" and (host.endswith("openai.com") or self.base_url in _NO_TOKEN_FIELDS):
            return {}
        return dict(TOKEN_ID_FIELDS[self.token_ids])

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
            body["tools"] = TOOL_SCHEMAS
            body["tool_choice"] = "auto"
        body.update(self._token_fields())
        body.update(self.extra_body)  # the user's fields win
        return body

    def _resend_body(self, status: int, text: str, body: dict[str, Any]) -> dict[str, Any] | None:
        # a server that refuses codegym's token-id fields: drop them (for this base URL), resend once
        auto = TOKEN_ID_FIELDS["auto"]
        if status != 400 or self.token_ids != "auto" or not any(f in text for f in auto):
            return None
        with _REGISTRY_LOCK:
            _NO_TOKEN_FIELDS.add(self.base_url)
        return {k: v for k, v in body.items() if k not in auto}

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

    def _chat(self, messages: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Attempt]]:
        return self._request("POST", "/chat/completions", self._body(messages, self._resolve_model()), "choices")
