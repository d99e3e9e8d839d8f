"""The settings groups of `LLMAgent`: what it samples, how it converses, how requests travel.

- `SamplingSettings`: the request's sampling fields (temperature, top_p, max_tokens,
  seed, stop, extra_body);
- `ChatSettings`: the conversation and what a turn records for training (system prompt,
  tools offered, log-probs, token-id fields, the prefix check);
- `TransportSettings`: the HTTP side of `ChatClient` (concurrency, timeout, retries and
  backoff, extra headers).

Each is taken whole (``LLMAgent(sampling=SamplingSettings(temperature=0.7))``) or field by
field as a keyword of the agent (``LLMAgent(temperature=0.7)``, `codegym.core.groups`). The
API key is in none of them: it is the agent's own argument (never in a record or a repr).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_SYSTEM_PROMPT = (
    "You are an expert programmer working on a coding task in a multi-turn environment. "
    "Each reply you write is applied to the workspace as an edit, in one of the action "
    "formats the task describes; you then see the test feedback. Write `submit` on a line "
    "of its own when your solution is ready."
)

#: request fields codegym adds to get token ids (dropped if a server refuses them)
TOKEN_ID_FIELDS: dict[str, dict[str, Any]] = {
    "auto": {"return_token_ids": True, "return_prompt_token_ids": True},
    "vllm": {"return_token_ids": True, "return_tokens_as_token_ids": True},
    "sglang": {"return_token_ids": True, "return_prompt_token_ids": True},
    "off": {},
}


@dataclass(frozen=True)
class SamplingSettings:
    """The sampling fields of every request (None: the server's default).

    temperature, top_p, max_tokens, stop   as in the OpenAI API (``stop``: a string or a list,
                                           kept as a list; OpenAI reasoning models that refuse
                                           ``max_tokens`` take ``extra_body={"max_completion_tokens": N}``)
    seed         base sampling seed: each request sends a seed derived from it, the episode
                 seed and the turn (reproducible, yet different across turns and episodes)
    extra_body   more request fields (``top_k``, ``min_p``, ``chat_template_kwargs`` ...);
                 they win over codegym's own
    """

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: str | Sequence[str] | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        stop = self.stop
        object.__setattr__(self, "stop", [stop] if isinstance(stop, str) else
                           (list(stop) if stop is not None else None))
        object.__setattr__(self, "extra_body", dict(self.extra_body or {}))


@dataclass(frozen=True)
class ChatSettings:
    """The conversation, and what a turn records for training.

    system_prompt   the first message (None or "" for none)
    logprobs        ask for the sampled tokens' log-probs
    token_ids       ``"auto"``, ``"vllm"``, ``"sglang"`` or ``"off"``: which token-id request
                    fields to send (`TOKEN_ID_FIELDS`; docs/rollout.md)
    use_tools       offer ``codegym.edits.render.TOOL_SCHEMAS`` as OpenAI tools
    check_prefix    check that the chat template is prefix-preserving when prompt ids come back
    """

    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT
    logprobs: bool = True
    token_ids: str = "auto"
    use_tools: bool = False
    check_prefix: bool = True

    def __post_init__(self) -> None:
        if self.token_ids not in TOKEN_ID_FIELDS:
            raise ValueError(f"token_ids must be one of {sorted(TOKEN_ID_FIELDS)}, not {self.token_ids!r}")
        for name in ("logprobs", "use_tools", "check_prefix"):
            object.__setattr__(self, name, bool(getattr(self, name)))


@dataclass(frozen=True)
class TransportSettings:
    """How requests travel to one base URL (`codegym.agents.llm_client.ChatClient`).

    max_concurrency            requests in flight per base URL in this process (None/0: no limit)
    timeout                    seconds an attempt may wait on the socket (to connect, or for the
                               next bytes of the answer) before it counts as timed out and is retried
    max_retries                retries after the first attempt (>= 0)
    backoff_base, backoff_max  the delay before retry k is ``min(max, base * 2**k)``, jittered to
                               between half and all of it
    retry_after_max            cap on a server's ``Retry-After``
    headers                    extra HTTP headers (not shown in the repr)
    """

    max_concurrency: int | None = 8
    timeout: float = 600.0
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    retry_after_max: float = 300.0
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        for name in ("timeout", "backoff_base", "backoff_max", "retry_after_max"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "max_retries", int(self.max_retries))
        object.__setattr__(self, "headers", dict(self.headers or {}))
