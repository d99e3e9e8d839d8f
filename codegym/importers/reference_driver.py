"""codegym importer: run a reference function on inputs, in the sandbox (trusted program).

Sent as ``main.py`` by `codegym.importers.references.run_reference`; the host imports
`sorted_members` from here. stdin: JSON {code, entry, inputs: [tagged argument lists],
kwargs: [tagged dicts] | null, send_max, measure_max}; stdout: one JSON line per
input {"i", "t" (CPU s of the call), "n" (about the size of the value as JSON, counted
up to just past measure_max), "p" (plain data JSON can carry), "f" (EvalPlus's
is_floats), "v" (tagged value, only when n <= send_max) | "e" (error)}, then
{"done": true}. Imports nothing but the standard library.
"""

import base64
import json
import os
import sys
import time
import traceback

_INF = float("inf")


def sorted_members(s):
    """Members of a set in a deterministic order (set iteration order of str depends
    on PYTHONHASHSEED): generated task text, and its content hash, stay stable."""
    return sorted(s, key=lambda v: (type(v).__name__, repr(v)))


def encode(x, depth=0):
    """A value in the tagged JSON form `codegym.judge.protocol.decode_value` reads (tuples,
    sets, dicts with any keys, bytes, non-finite floats, big ints, complex); other types
    and values nested past 900 levels become ``{"#": "repr"}`` tags (the host's strict
    twin is `codegym.judge.protocol.encode_value`)."""
    t = type(x)
    if x is None or t is bool or t is str:
        return x
    if t is int:
        return x if -(1 << 63) < x < (1 << 63) else {"#": "int", "v": hex(x)}
    if t is float:
        if x != x:
            return {"#": "float", "v": "nan"}
        if x in (_INF, -_INF):
            return {"#": "float", "v": "inf" if x > 0 else "-inf"}
        return x
    if depth > 900:
        return {"#": "repr", "t": t.__name__, "v": "<too deep>"}
    if t is list:
        return [encode(v, depth + 1) for v in x]
    if t is tuple:
        return {"#": "tuple", "v": [encode(v, depth + 1) for v in x]}
    if t is dict:
        return {"#": "dict", "v": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in x.items()]}
    if t is set or t is frozenset:
        return {"#": t.__name__, "v": [encode(v, depth + 1) for v in x]}
    if t is bytes or t is bytearray:
        return {"#": "bytes", "v": base64.b64encode(bytes(x)).decode()}
    if t is complex:
        return {"#": "complex", "v": [encode(x.real, depth + 1), encode(x.imag, depth + 1)]}
    return {"#": "repr", "t": t.__name__, "v": repr(x)[:1000]}


def dec(o):
    t = type(o)
    if t is list:
        return [dec(v) for v in o]
    if t is not dict:
        return o
    tag, v = o.get("#"), o.get("v")
    if tag == "tuple":
        return tuple(dec(x) for x in v)
    if tag == "dict":
        return {dec(k): dec(x) for k, x in v}
    if tag == "set":
        return {dec(x) for x in v}
    if tag == "frozenset":
        return frozenset(dec(x) for x in v)
    if tag == "float":
        return float(v)
    if tag == "int":
        return int(v, 16)
    if tag == "bytes":
        return base64.b64decode(v)
    if tag == "complex":
        return complex(dec(v[0]), dec(v[1]))
    raise ValueError(f"unknown tag {tag!r}")


def measure(x, limit, depth=0):
    """(about the JSON size of x -- exact enough, stops counting past limit, plain data?)"""
    t = type(x)
    if x is None or t is bool:
        return 5, True
    if t is int:
        return x.bit_length() // 3 + 2, True
    if t is float:
        return 24, True
    if t is str:
        return len(x) + 2, True
    if depth > 400:
        return limit + 1, False
    if t in (list, tuple, dict, set, frozenset):
        items = x.items() if t is dict else x
        n, plain = 2, t in (list, tuple, dict)
        for it in items:
            if t is dict:
                k, v = it
                plain = plain and type(k) is str
                a, pa = measure(k, limit, depth + 1)
                b, pb = measure(v, limit, depth + 1)
                n, plain = n + a + b + 2, plain and pa and pb
            else:
                a, pa = measure(it, limit, depth + 1)
                n, plain = n + a + 1, plain and pa
            if n > limit:
                return n, plain
        return n, plain
    if t in (bytes, bytearray):
        return len(x) * 4 // 3 + 16, False
    return 64, False


def is_floats(x):
    """EvalPlus's ``is_floats``: a float, or a non-empty list/tuple of floats only."""
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(isinstance(i, float) for i in x)
    return False


def main():
    req = json.loads(sys.stdin.read())
    out = os.fdopen(os.dup(1), "w")
    sys.stdout = open(os.devnull, "w")   # the reference's own prints are not results
    send_max = int(req.get("send_max") or 1 << 16)
    measure_max = max(send_max, int(req.get("measure_max") or 1 << 20))
    g = {"__name__": "__codegym_reference__"}
    exec(compile(req["code"], "reference.py", "exec"), g)
    head, _, meth = req["entry"].partition(".")
    target = g[head]
    kwargs_all = req.get("kwargs")
    for i, raw in enumerate(req["inputs"]):
        args = dec(raw)
        kwargs = dec(kwargs_all[i]) if kwargs_all else {}
        fn = getattr(target(), meth) if meth else target
        t0 = time.process_time()
        try:
            v = fn(*args, **kwargs)
            t = time.process_time() - t0
            n, plain = measure(v, measure_max)
            frame = {"i": i, "t": t, "n": n, "p": plain, "f": is_floats(v)}
            if n <= send_max:
                frame["v"] = encode(v)
        except BaseException as e:
            frame = {"i": i, "t": time.process_time() - t0,
                     "e": "".join(traceback.format_exception_only(type(e), e))[-1000:]}
        v = None
        out.write(json.dumps(frame) + "\n")
        out.flush()
    out.write('{"done": true}\n')
    out.flush()


if __name__ == "__main__":
    main()
