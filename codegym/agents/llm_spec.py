"""The ``llm:SPEC`` syntax: `LLMAgent` keyword arguments from one string.

Comma-separated ``key=value`` pairs; a first item without ``=`` is the model. Values
are read as JSON when they parse (numbers, ``true``/``false``/``null``, ``["a","b"]``,
``{...}``; commas inside brackets, braces or quotes do not split), else as strings.
``extra.NAME=VALUE`` adds ``NAME`` to the request body. Keys are the agent's flat
keywords (its arguments and its settings groups' fields, `codegym.agents.llm_settings`)
plus the aliases in `ALIASES`. The API key (and ``headers``) is never part of a spec.

    >>> parse_spec("qwen,base_url=http://127.0.0.1:8000/v1,temperature=0.7,extra.top_k=20")["extra_body"]
    {'top_k': 20}
"""

from __future__ import annotations

import json
from typing import Any

#: short spellings of constructor arguments
ALIASES = {"url": "base_url", "concurrency": "max_concurrency", "retries": "max_retries",
           "system": "system_prompt", "tools": "use_tools"}


#: spec key -> type (str values are taken verbatim; `object` = any JSON)
SPEC_TYPES: dict[str, type] = {
    "model": str, "base_url": str, "api_key_env": str, "temperature": float, "top_p": float,
    "max_tokens": int, "seed": int, "stop": object, "extra_body": dict, "system_prompt": str,
    "max_concurrency": int, "timeout": float, "max_retries": int,
    "backoff_base": float, "backoff_max": float, "retry_after_max": float, "logprobs": bool,
    "token_ids": str, "use_tools": bool, "check_prefix": bool, "name": str,
}


def split_top(spec: str) -> list[str]:
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


def spec_value(text: str) -> Any:
    """A spec value: JSON when it parses, yes/no/on/off/none as such, else the text."""
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
    for n, item in enumerate(split_top(spec or "")):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq:
            if n == 0:
                kwargs["model"] = item
                continue
            raise ValueError(f"llm spec item {item!r} is not key=value (spec: {spec!r})")
        raw = raw.strip()
        if key.startswith("extra."):
            extra[key[len("extra."):]] = spec_value(raw)
            continue
        key = ALIASES.get(key, key)
        if key not in SPEC_TYPES:
            raise ValueError(f"unknown llm spec key {key!r}; known: {', '.join(sorted(SPEC_TYPES))}, "
                             f"extra.NAME, aliases {', '.join(sorted(ALIASES))}")
        kind = SPEC_TYPES[key]
        value = spec_value(raw)
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
