"""TOML from strangers, read within bounds: size, nesting, dotted-key length, finite numbers.

`load_toml(text, where)` is `tomllib.loads` behind a linear pre-scan (`toml_shape`) that
refuses what would make the parser recurse without bound (``a = [[[[...]]]]``: a
RecursionError) or take quadratic time (a 100,000-part dotted key ``[a.b.c...]``: 112 s
in CPython 3.11's tomllib), and `finite_numbers` finds ``inf`` / ``nan`` values. Errors
are `TomlError`, one line naming the file. Harbor's ``task.toml`` is read through here
(`codegym.importers.harbor_read`).
"""

from __future__ import annotations

import math
import re
import tomllib
from typing import Any

#: the largest TOML text read (real task.toml files are a few KiB)
MAX_BYTES = 256 << 10
#: nesting of arrays, inline tables and table headers
MAX_DEPTH = 32
#: parts of one dotted key (``a.b.c`` has 3)
MAX_KEY_PARTS = 32


_SPECIAL = re.compile(r"[\"'#\n\[\]{}=,.]")


class TomlError(ValueError):
    """TOML that cannot be read: not TOML, or beyond the bounds (the message names the file)."""


def toml_shape(text: str) -> tuple[int, int]:
    """(deepest bracket nesting, most parts of a dotted key) of TOML `text`, in one pass
    that skips strings and comments (values' dots, e.g. floats, are not key dots)."""
    depth = best_depth = 0
    stack: list[str] = []          # '[' (array or header) and '{' (inline table)
    parts = best_parts = 1
    in_key = True                  # before '=' on a key line, or inside a table header
    header = False
    i, n = 0, len(text)
    while i < n:
        m = _SPECIAL.search(text, i)
        if m is None:
            break
        i = m.start()
        c = text[i]
        if c in "\"'":
            triple = text.startswith(c * 3, i)
            q = c * 3 if triple else c
            j = i + len(q)
            while j < n:
                if c == '"' and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(q, j):
                    break
                if not triple and text[j] == "\n":
                    break
                j += 1
            i = j + len(q)
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "\n":
            if header:             # an unclosed header ends with its line
                stack.clear()
                header = False
            if not stack:
                in_key, parts = True, 1
            i += 1
            continue
        if c == "[":
            if in_key and not stack and not header:
                header = True      # [table] / [[array of tables]]
            stack.append("[")
            depth += 1
        elif c == "{":
            stack.append("{")
            depth += 1
            in_key, parts = True, 1
        elif c in "]}":
            top = stack.pop() if stack else None
            depth = max(0, depth - 1)
            if (header and not stack) or top == "{":
                in_key = False
            if header and not stack:
                header = False
        elif c == "=":
            in_key, parts = False, 1
        elif c == "," and stack and stack[-1] == "{":
            in_key, parts = True, 1
        elif c == "." and in_key:
            parts += 1
            best_parts = max(best_parts, parts)
        best_depth = max(best_depth, depth)
        i += 1
    return best_depth, best_parts


def non_finite(value: Any, path: str = "") -> str | None:
    """The dotted path of the first ``inf`` / ``nan`` in a parsed TOML value, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return path or "(top)"
    if isinstance(value, dict):
        for k, v in value.items():
            hit = non_finite(v, f"{path}.{k}" if path else str(k))
            if hit:
                return hit
    elif isinstance(value, list):
        for i, v in enumerate(value):
            hit = non_finite(v, f"{path}[{i}]")
            if hit:
                return hit
    return None


def load_toml(text: str, where: str, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH,
              max_key_parts: int = MAX_KEY_PARTS) -> dict[str, Any]:
    """The TOML document `text` (from `where`, named in errors) within the bounds."""
    if len(text) > max_bytes:
        raise TomlError(f"{where}: larger than {max_bytes} bytes")
    depth, parts = toml_shape(text)
    if depth > max_depth:
        raise TomlError(f"{where}: nested deeper than {max_depth} levels ({depth})")
    if parts > max_key_parts:
        raise TomlError(f"{where}: a dotted key of more than {max_key_parts} parts ({parts})")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TomlError(f"{where}: not TOML: {e}") from None
    except RecursionError:
        raise TomlError(f"{where}: nested too deeply") from None
