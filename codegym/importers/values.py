"""Values of imported tests: tagged wire JSON, Python literals, plain-data checks.

`tag_encode` (a host value -> the tagged JSON that `codegym.judge.protocol.decode_value`
reads back; the one encoder, shared with the in-sandbox `reference_driver`),
`py_literal` (a value as Python source, for script tests), `is_plain_value` (whether a
value survives a YAML round trip unchanged, i.e. may be a `function` case's args or
expected value), `has_nonfinite` and `to_plain`.
"""

from __future__ import annotations

import math
from typing import Any

from codegym.importers.reference_driver import sorted_members
from codegym.judge.protocol import encode_value


def tag_encode(x: Any, depth: int = 0) -> Any:
    """A host value in the tagged JSON form `codegym.judge.protocol.decode_value` reads
    (tuples, sets, dicts with any keys, bytes, non-finite floats, big ints, complex);
    sets in a deterministic order; TypeError for other types (`encode_value`)."""
    return encode_value(x, depth)


def py_literal(x: Any, depth: int = 0) -> str:
    """Python source that evaluates (with builtins only) to a value equal to `x`,
    with the same container types; deterministic (sets sorted by repr)."""
    if depth > 1000:
        raise ValueError("value nested too deeply")
    t = type(x)
    if x is None or t in (bool, int, str, bytes):
        return repr(x)
    if t is float:
        if math.isnan(x):
            return 'float("nan")'
        if math.isinf(x):
            return 'float("inf")' if x > 0 else 'float("-inf")'
        return repr(x)
    if t is complex:
        return f"complex({py_literal(x.real)}, {py_literal(x.imag)})"
    if t is list:
        return "[" + ", ".join(py_literal(v, depth + 1) for v in x) + "]"
    if t is tuple:
        inner = ", ".join(py_literal(v, depth + 1) for v in x)
        return "(" + inner + ("," if len(x) == 1 else "") + ")"
    if t is dict:
        return "{" + ", ".join(f"{py_literal(k, depth + 1)}: {py_literal(v, depth + 1)}"
                               for k, v in x.items()) + "}"
    if t is set:
        return ("{" + ", ".join(py_literal(v, depth + 1) for v in sorted_members(x)) + "}") if x else "set()"
    if t is frozenset:
        return "frozenset([" + ", ".join(py_literal(v, depth + 1) for v in sorted_members(x)) + "])"
    if t is bytearray:
        return f"bytearray({bytes(x)!r})"
    raise TypeError(f"cannot write a {t.__name__} value as a literal")


def is_plain_value(x: Any, allow_tuples: bool = True, depth: int = 0) -> bool:
    """True when `x` is made of None/bool/int/float/str, lists (and tuples, which
    become lists, when `allow_tuples`) and str-keyed dicts only: what a `function`
    case can carry through YAML, JSON and the value checker without changing meaning."""
    if depth > 500:
        return False
    t = type(x)
    if x is None or t in (bool, int, float, str):
        return True
    if t is list or (allow_tuples and t is tuple):
        return all(is_plain_value(v, allow_tuples, depth + 1) for v in x)
    if t is dict:
        return all(type(k) is str and is_plain_value(v, allow_tuples, depth + 1) for k, v in x.items())
    return False


def has_nonfinite(x: Any, depth: int = 0) -> bool:
    """True when a plain value holds nan or +-inf somewhere (JSON cannot carry those)."""
    if depth > 500:
        return True
    if type(x) is float:
        return math.isnan(x) or math.isinf(x)
    if isinstance(x, (list, tuple)):
        return any(has_nonfinite(v, depth + 1) for v in x)
    if isinstance(x, dict):
        return any(has_nonfinite(v, depth + 1) for v in x.values())
    return False


def to_plain(x: Any) -> Any:
    """Tuples -> lists, recursively (for values accepted by `is_plain_value`)."""
    if isinstance(x, (list, tuple)):
        return [to_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: to_plain(v) for k, v in x.items()}
    return x
