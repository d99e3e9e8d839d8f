"""`TokenAgent`: a codegym agent driven by a token-in/token-out policy (trainer adapters).

Trainers generate from token ids (verl's rollout servers, TRL's model). `ChatTokens`
turns chat messages into ids with the tokenizer's chat template and computes the
tokens a new user message (the env's feedback) adds after a sampled response without
re-tokenising it (the template is rendered with a sentinel in place of the reply).
`TokenAgent` follows the `codegym.agents` protocol and fills ``last_turn`` (prompt and
response ids, log-probs, messages), so `codegym.rollout.episode.play_episode` records
token-exact trajectories; its context only grows, so turns concatenate. When the
episode budget (``max_completion_tokens``) cannot hold the next feedback and a reply,
it answers ``submit`` without sampling. docs/rollout.md has the details.

    generate(context_ids: list[int], max_new_tokens: int) -> (ids, logprobs or None)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from codegym.tasks.schema import Task

GenerateFn = Callable[[list[int], int], "tuple[list[int], list[float] | None]"]

#: replaces the assistant's content when rendering, to find where the content ends
_SENTINEL = "\u2063codegym-assistant-content\u2063"

#: a plain template for tokenizers that have none (role line, content, end of turn)
DEFAULT_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


class ChatTokens:
    """Chat-template tokenisation with prefix-preserving turns (docs/rollout.md).

    Args:
        tokenizer: a ``transformers`` tokenizer (``apply_chat_template``, ``__call__``,
            ``decode``, ``eos_token_id``).
        chat_template_kwargs: extra keyword arguments for ``apply_chat_template``
            (e.g. ``enable_thinking=False``).
    """

    def __init__(self, tokenizer: Any, chat_template_kwargs: dict[str, Any] | None = None):
        self.tokenizer = tokenizer
        self.kwargs = dict(chat_template_kwargs or {})
        if getattr(tokenizer, "chat_template", None) is None and "chat_template" not in self.kwargs:
            self.kwargs["chat_template"] = DEFAULT_CHAT_TEMPLATE
        eos = getattr(tokenizer, "eos_token_id", None)
        self.eos_ids: set[int] = set(eos if isinstance(eos, (list, tuple)) else [eos]) - {None}
        self._warned = False

    def render(self, messages: Sequence[dict[str, Any]], add_generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(list(messages), tokenize=False,
                                                  add_generation_prompt=add_generation_prompt, **self.kwargs)

    def encode(self, text: str) -> list[int]:
        # the template already holds every special token it wants: add none
        return [int(t) for t in self.tokenizer(text, add_special_tokens=False)["input_ids"]]

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def prompt_ids(self, messages: Sequence[dict[str, Any]]) -> list[int]:
        """Token ids of `messages` followed by the generation prompt."""
        return self.encode(self.render(messages, add_generation_prompt=True))

    def transition_ids(self, history: Sequence[dict[str, Any]], response_ids: Sequence[int],
                       new_messages: Sequence[dict[str, Any]]) -> list[int]:
        """Tokens that follow the sampled `response_ids` so the context continues with
        `new_messages` and a generation prompt.

        `history`: the messages before the assistant turn that produced `response_ids`."""
        with_sentinel = [*history, {"role": "assistant", "content": _SENTINEL}]
        prev = self.render(with_sentinel, add_generation_prompt=False)
        at = prev.rfind(_SENTINEL)
        if at < 0:
            raise ValueError("the chat template dropped the assistant's content; cannot find the end of the turn")
        close = prev[at + len(_SENTINEL):]
        if response_ids and int(response_ids[-1]) in self.eos_ids:
            # the policy sampled the end-of-turn token itself: do not add it twice
            eos_text = self.tokenizer.decode([int(response_ids[-1])], skip_special_tokens=False)
            if eos_text and close.startswith(eos_text):
                close = close[len(eos_text):]
        full = self.render([*with_sentinel, *new_messages], add_generation_prompt=True)
        if full.startswith(prev):
            nxt = full[len(prev):]
        else:
            # the template rewrites earlier turns when a new one is added (e.g. drops
            # reasoning): render the new messages alone, as verl's tool agent loop does
            if not self._warned:
                warnings.warn("the chat template is not prefix-preserving between turns; feedback turns "
                              "are rendered on their own", stacklevel=2)
                self._warned = True
            nxt = self.render(list(new_messages), add_generation_prompt=True)
        return self.encode(close + nxt)


class TokenAgent:
    """A codegym agent whose answers are sampled from a token-level policy.

    Args:
        generate: ``generate(context_ids, max_new_tokens) -> (ids, logprobs|None)``.
        tokenizer: a ``transformers`` tokenizer (or a ready `ChatTokens`).
        max_new_tokens: sampled tokens per turn.
        max_completion_tokens: sampled + feedback tokens per episode (None: unbounded).
        system_prompt: optional system message before the first observation.
        messages: the first turn's messages instead of ``[system?, user: observation]``
            (e.g. the prompt a dataset row carries); its last message is the prompt.
        chat_template_kwargs: passed to ``apply_chat_template``.
    """

    name = "token-policy"

    def __init__(self, generate: GenerateFn, tokenizer: Any, max_new_tokens: int = 512,
                 max_completion_tokens: int | None = None, system_prompt: str | None = None,
                 messages: Sequence[dict[str, Any]] | None = None,
                 chat_template_kwargs: dict[str, Any] | None = None):
        self.generate = generate
        self.chat = tokenizer if isinstance(tokenizer, ChatTokens) else ChatTokens(tokenizer, chat_template_kwargs)
        self.max_new_tokens = int(max_new_tokens)
        self.max_completion_tokens = max_completion_tokens
        self.system_prompt = system_prompt
        self.first_messages = [dict(m) for m in messages] if messages is not None else None
        self.last_turn: dict[str, Any] | None = None
        self._reset_state()

    def _reset_state(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.prompt_len = 0
        self.context: list[int] = []
        self._last_response: list[int] | None = None
        self.done_budget = False

    def reset(self, task: Task | None = None, seed: int | None = None) -> None:
        self._reset_state()
        self.last_turn = None

    def fork(self) -> TokenAgent:
        return TokenAgent(self.generate, self.chat, self.max_new_tokens, self.max_completion_tokens,
                          self.system_prompt, self.first_messages)

    @property
    def used(self) -> int:
        """Completion tokens so far (sampled + feedback)."""
        return len(self.context) - self.prompt_len

    def _budget(self) -> int:
        if self.max_completion_tokens is None:
            return self.max_new_tokens
        return min(self.max_new_tokens, self.max_completion_tokens - self.used)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._last_response is None:
            if self.first_messages is not None:
                self.messages = [dict(m) for m in self.first_messages]
            else:
                self.messages = ([{"role": "system", "content": self.system_prompt}] if self.system_prompt else [])
                self.messages.append({"role": "user", "content": observation})
            self.context = self.chat.prompt_ids(self.messages)
            self.prompt_len = len(self.context)
        else:
            user = {"role": "user", "content": observation}
            trans = self.chat.transition_ids(self.messages[:-1], self._last_response, [user])
            fits = (self.max_completion_tokens is None
                    or self.used + len(trans) < self.max_completion_tokens)
            if not fits:
                return self._forced_submit("the completion token budget cannot hold the feedback and a reply")
            self.messages.append(user)
            self.context = self.context + trans
        budget = self._budget()
        if budget <= 0:
            return self._forced_submit("the completion token budget is spent")
        prompt_ids = list(self.context)
        ids, logprobs = self.generate(prompt_ids, budget)
        ids = [int(t) for t in ids][:budget]
        if logprobs is not None:
            logprobs = [float(x) for x in logprobs][:len(ids)]
            if len(logprobs) != len(ids):
                logprobs = None
        text = self.chat.decode(ids)
        self.last_turn = {"prompt_ids": prompt_ids, "response_ids": ids, "logprobs": logprobs,
                          "messages": [dict(m) for m in self.messages],
                          "finish_reason": "stop" if ids and ids[-1] in self.chat.eos_ids else "length"}
        self.messages.append({"role": "assistant", "content": text})
        self.context = prompt_ids + ids
        self._last_response = ids
        return text

    def _forced_submit(self, why: str) -> str:
        self.done_budget = True
        self.last_turn = {"prompt_ids": list(self.context), "response_ids": [], "logprobs": [],
                          "messages": [dict(m) for m in self.messages], "finish_reason": "budget",
                          "forced_submit": why}
        return "submit"
