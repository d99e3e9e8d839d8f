"""What a chat completion answer holds for codegym: sampled token ids, log-probs, tool calls.

`response_tokens` reads the token ids and log-probs of vLLM's and SGLang's answer
shapes (docs/rollout.md lists the fields); `render_tool_calls` turns OpenAI
``tool_calls`` into the JSON tool-call text `codegym.edits.parse.parse_action` reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_TOKEN_ID_RE = re.compile(r"^token_id[:_](\d+)$")


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
    return _ints(prompt), _ints(response), logprobs


def _ints(xs: Any) -> list[int] | None:
    return [int(x) for x in xs] if isinstance(xs, list) else None


def render_tool_calls(calls: Sequence[Mapping[str, Any]]) -> str:
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
