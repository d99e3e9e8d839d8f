"""Shared machinery of the benchmark importers: reading sources, values, YAML output.

This module owns:

- `read_records(path)`: the records of a ``.jsonl`` / ``.jsonl.gz`` / ``.json`` /
  ``.json.gz`` file (a JSON list, a mapping of records, or JSON lines);
- `task_name(source_id)`: a source id turned into a task name that keeps it
  readable (``HumanEval/0`` -> ``HumanEval_0``);
- value helpers: `tag_encode` (host value -> the tagged wire JSON that
  `codegym.judge.harness.decode_value` reads back), `py_literal` (a value as Python
  source, for script tests), `is_plain_value` (whether a value survives a YAML
  round trip unchanged, i.e. may be a `function` case's args or expected value);
- `task_yaml(mapping)` / `write_suite(...)`: task YAML text (test data in flow
  style, text in literal blocks) and a suite folder (``suite.yaml`` + one file per
  task), every written file re-loaded with `codegym.tasks.schema.load_task` when asked;
- `ImportReport`: what an import wrote, skipped (with reasons) and noticed;
- `judge_references(tasks)`: judge every task's reference in parallel (import proofs);
- `ORACLE_PROGRAM` + `run_reference(...)`: run a trusted reference function on
  many inputs *in the sandbox* (never on the host), in parallel over its slots,
  and read back each return value and its CPU time.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

__all__ = ["read_records", "task_name", "tag_encode", "py_literal", "is_plain_value", "task_yaml",
           "write_suite", "ImportReport", "ORACLE_PROGRAM", "RefResult", "run_reference", "ImportError_",
           "flow_text", "judge_references", "has_nonfinite", "to_plain"]


class ImportError_(ValueError):  # noqa: N801 -- ImportError is a builtin with another meaning
    """A source file that cannot be imported (unreadable, wrong schema)."""


# --------------------------------------------------------------------------- reading


def read_records(path: str | os.PathLike) -> list[dict]:
    """Records of a JSON-lines or JSON file, optionally gzip-compressed.

    A JSON file may hold a list of records, or a mapping whose values are records
    (as EvalPlus caches do); blank lines of a JSON-lines file are skipped.
    """
    p = Path(path)
    if not p.is_file():
        raise ImportError_(f"{p}: no such file")
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ImportError_(f"{p}: not UTF-8 text: {e}") from None
    stripped = text.lstrip()
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    if name.endswith(".json") or (stripped.startswith("[") and not name.endswith(".jsonl")):
        try:
            data = json.loads(text)
        except ValueError as e:
            raise ImportError_(f"{p}: not valid JSON: {e}") from None
        if isinstance(data, dict):
            data = list(data.values()) if all(isinstance(v, dict) for v in data.values()) else [data]
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ImportError_(f"{p}: expected a list of JSON objects")
        return data
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise ImportError_(f"{p}:{n}: not valid JSON: {e}") from None
        if not isinstance(rec, dict):
            raise ImportError_(f"{p}:{n}: expected a JSON object per line")
        out.append(rec)
    return out


_NAME_BAD = re.compile(r"[^A-Za-z0-9_.+\-]+")


def task_name(source_id: Any) -> str:
    """A task name made from a source id: ``/`` and other characters an id cannot hold
    become ``_`` (``HumanEval/0`` -> ``HumanEval_0``); never empty, never starts with
    a separator."""
    name = _NAME_BAD.sub("_", str(source_id)).strip("_.-+")
    return name or "task"


# --------------------------------------------------------------------------- values


def tag_encode(x: Any, depth: int = 0) -> Any:
    """A host value in the tagged JSON form `codegym.judge.harness.decode_value` reads
    (tuples, sets, dicts with any keys, bytes, non-finite floats, big ints, complex)."""
    if depth > 1000:
        raise ValueError("value nested too deeply")
    t = type(x)
    if x is None or t in (bool, str):
        return x
    if t is int:
        return x if -(1 << 63) < x < (1 << 63) else {"#": "int", "v": hex(x)}
    if t is float:
        if math.isnan(x):
            return {"#": "float", "v": "nan"}
        if math.isinf(x):
            return {"#": "float", "v": "inf" if x > 0 else "-inf"}
        return x
    if t is list:
        return [tag_encode(v, depth + 1) for v in x]
    if t is tuple:
        return {"#": "tuple", "v": [tag_encode(v, depth + 1) for v in x]}
    if t is dict:
        return {"#": "dict", "v": [[tag_encode(k, depth + 1), tag_encode(v, depth + 1)] for k, v in x.items()]}
    if t in (set, frozenset):
        return {"#": t.__name__, "v": [tag_encode(v, depth + 1) for v in _sorted_members(x)]}
    if t in (bytes, bytearray):
        return {"#": "bytes", "v": base64.b64encode(bytes(x)).decode()}
    if t is complex:
        return {"#": "complex", "v": [tag_encode(x.real, depth + 1), tag_encode(x.imag, depth + 1)]}
    raise TypeError(f"cannot encode a {t.__name__} value")


def _sorted_members(s: Iterable[Any]) -> list[Any]:
    # a deterministic order (set iteration order of str depends on PYTHONHASHSEED),
    # so the generated task text -- and its content hash -- is stable
    return sorted(s, key=lambda v: (type(v).__name__, repr(v)))


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
        return ("{" + ", ".join(py_literal(v, depth + 1) for v in _sorted_members(x)) + "}") if x else "set()"
    if t is frozenset:
        return "frozenset([" + ", ".join(py_literal(v, depth + 1) for v in _sorted_members(x)) + "])"
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


# --------------------------------------------------------------------------- YAML


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # libyaml's emitter: ~10x faster
    pass


def _str(d, s: str):
    # literal blocks keep statements and code readable; a string with trailing spaces on
    # a line or with control characters cannot be a literal block in YAML: quote it.
    if "\n" in s and not re.search(r"[ \t]\n|[\x00-\x08\x0b-\x1f\x7f]|\s$", s.rstrip("\n")):
        return d.represent_scalar("tag:yaml.org,2002:str", s, style="|")
    return d.represent_scalar("tag:yaml.org,2002:str", s)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(tuple, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", list(v)))


# Characters PyYAML's reader accepts raw (its check_printable) minus the line breaks it
# would fold inside a quoted scalar; everything else is written as an escape.
_YAML_UNSAFE = re.compile("[^\x09\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _quote(s: str) -> str:
    """A YAML double-quoted scalar equal to `s` (JSON escapes are YAML escapes)."""
    q = json.dumps(s, ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", q)


def _float_text(x: float) -> str:
    if math.isnan(x):
        return ".nan"
    if math.isinf(x):
        return ".inf" if x > 0 else "-.inf"
    r = repr(x)
    # YAML 1.1 (PyYAML) reads "1e-06" as a string: its floats need a dot
    if "e" in r and "." not in r:
        m, e = r.split("e")
        r = f"{m}.0e{e}"
    return r


def flow_text(x: Any, depth: int = 0) -> str:
    """`x` as one line of YAML flow text that PyYAML's safe loader reads back equal
    (None/bool/int/float/str, lists/tuples -> sequences, dicts with scalar keys).
    Much faster than PyYAML's representer, which matters for 10^5 test cases."""
    if depth > 900:
        raise ValueError("value nested too deeply")
    t = type(x)
    if x is None:
        return "null"
    if t is bool:
        return "true" if x else "false"
    if t is int:
        return repr(x)
    if t is float:
        return _float_text(x)
    if t is str:
        return _quote(x)
    if t is list or t is tuple:
        return "[" + ", ".join(flow_text(v, depth + 1) for v in x) + "]"
    if t is dict:
        return "{" + ", ".join(f"{flow_text(k, depth + 1)}: {flow_text(v, depth + 1)}" for k, v in x.items()) + "}"
    raise TypeError(f"cannot write a {t.__name__} value as YAML flow text")


def _yaml_block(doc: Mapping[str, Any]) -> str:
    return yaml.dump(dict(doc), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False) if doc else ""


_BLOCK_UNSAFE = re.compile("[^\x09\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _literal_block(s: str, indent: str) -> str | None:
    """`s` as a YAML literal block scalar (header + lines at `indent`), or None when a
    block cannot hold it exactly (then it is written quoted)."""
    if _BLOCK_UNSAFE.search(s) or not s.strip("\n"):
        return None
    body = s.rstrip("\n")
    trailing = len(s) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    lines = body.split("\n")
    first = next(ln for ln in lines if ln.strip() != "" or ln)
    # an explicit indentation indicator when the content starts with a space (or the
    # first non-empty line is indented more than the block)
    ind = "2" if lines[0].startswith(" ") or (first.startswith(" ")) else ""
    if any(ln.strip() == "" and ln for ln in lines):
        # lines of only spaces are read as part of the block's indentation: not exact
        return None
    pad = indent + "  "
    out = ["|" + ind + chomp]
    out.extend((pad + ln) if ln else "" for ln in lines)
    out.extend("" for _ in range(trailing - 1))
    return "\n".join(out)


def _case_text(case: Mapping[str, Any], indent: str) -> str:
    """One test case as a YAML block-sequence item at `indent`: data as one-line flow
    text, multi-line code as a literal block."""
    pad = indent + "  "
    lines: list[str] = []
    for k, v in case.items():
        block = _literal_block(v, pad) if isinstance(v, str) and "\n" in v and k in ("code", "stdin") else None
        lines.append(f"{k}: {block if block is not None else flow_text(v)}")
    return indent + "- " + ("\n" + pad).join(lines) + "\n"


def task_yaml(task: Mapping[str, Any]) -> str:
    """YAML text of a task mapping: test cases written by a fast flow-style writer
    (data on one line each), everything else by PyYAML (multi-line strings as
    literal blocks); key order kept."""
    parts = []
    chunk: dict[str, Any] = {}
    for k, v in task.items():
        if k == "tests" and isinstance(v, Mapping):
            parts.append(_yaml_block(chunk))
            chunk = {}
            text = ["tests:\n"]
            for split, cases in v.items():
                if not cases:
                    text.append(f"  {split}: []\n")
                    continue
                text.append(f"  {split}:\n")
                text.extend(_case_text(c, "  ") for c in cases)
            parts.append("".join(text))
        else:
            chunk[k] = v
    parts.append(_yaml_block(chunk))
    return "".join(parts)


@dataclass
class ImportReport:
    """What an import did.

    source    the file (or dataset) read
    out_dir   the suite folder written (None: nothing written)
    written   ids of the tasks written, in order
    skipped   (source id, reason) of records not turned into tasks
    notes     other remarks (e.g. inputs a reference could not run, repairs applied)
    counts    free-form counters (cases, kinds, ...)
    elapsed_s wall-clock seconds of the import
    """

    source: str
    out_dir: str | None = None
    written: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def summary(self) -> str:
        lines = [f"{len(self.written)} task(s) written to {self.out_dir}, {len(self.skipped)} skipped "
                 f"({self.elapsed_s:.1f} s) from {self.source}"]
        if self.counts:
            lines.append("  " + ", ".join(f"{k}: {v}" for k, v in sorted(self.counts.items())))
        for sid, why in self.skipped:
            lines.append(f"  skipped {sid}: {why}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"source": self.source, "out_dir": self.out_dir, "written": list(self.written),
                "skipped": [list(s) for s in self.skipped], "notes": list(self.notes),
                "counts": dict(self.counts), "elapsed_s": self.elapsed_s}


def write_suite(out_dir: str | os.PathLike, tasks: Sequence[Mapping[str, Any]], *, name: str,
                description: str, defaults: Mapping[str, Any] | None = None, validate: bool = True,
                clean: bool = False) -> list[Path]:
    """Write a suite folder: ``suite.yaml`` (name, description, `defaults` merged under
    every task) and ``<task name>.yaml`` per task mapping (the name is the part of the
    id after the last ``/``). With `validate`, every file is loaded back with
    `codegym.tasks.schema.load_task` (raises `TaskValidationError` on the first bad one).
    `clean` removes the folder's other ``*.yaml`` files first (a re-import with
    filters must not leave stale tasks behind)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if clean:
        for old in out.glob("*.yaml"):
            old.unlink()
    suite_doc: dict[str, Any] = {"suite": {"name": name, "description": description}}
    suite_doc.update(defaults or {})
    (out / "suite.yaml").write_text(yaml.dump(suite_doc, Dumper=_Dumper, sort_keys=False,
                                              allow_unicode=True, width=100), encoding="utf-8")
    paths = []
    seen: dict[str, str] = {}
    for t in tasks:
        fname = str(t["id"]).rsplit("/", 1)[-1]
        if fname in seen:
            raise ValueError(f"two tasks would be written to {fname}.yaml: {seen[fname]} and {t['id']}")
        seen[fname] = str(t["id"])
        p = out / f"{fname}.yaml"
        tmp = p.with_name(f".{p.name}.tmp")
        tmp.write_text(task_yaml(t), encoding="utf-8")
        os.replace(tmp, p)
        paths.append(p)
    if validate:
        from codegym.tasks.schema import load_task  # noqa: PLC0415 (pydantic only when validating)
        for p in paths:
            load_task(p)
    return paths


# --------------------------------------------------------------------------- reference runs

#: Runs a reference implementation on inputs, in the sandbox. Trusted code written
#: here (the reference itself is benchmark data, which we do not run on the host).
#: stdin: JSON {code, entry, inputs: [tagged argument lists], kwargs: [tagged dicts] | null,
#: send_max}; stdout: one JSON line per input {"i", "t" (CPU s of the call), "n" (about
#: the size of the value as JSON, counted up to just past measure_max), "p" (plain data JSON can carry), "f" (EvalPlus's
#: is_floats), "v" (tagged value, only when n <= send_max) | "e" (error)}, then
#: {"done": true}.
ORACLE_PROGRAM = r'''"""codegym importer: run a reference function on inputs (generated by codegym/importers)."""
import base64, json, os, sys, time, traceback


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
    raise ValueError("unknown tag %r" % (tag,))


def enc(x, depth=0):
    t = type(x)
    if x is None or t is bool or t is str:
        return x
    if t is int:
        return x if -(1 << 63) < x < (1 << 63) else {"#": "int", "v": hex(x)}
    if t is float:
        if x != x:
            return {"#": "float", "v": "nan"}
        if x in (float("inf"), float("-inf")):
            return {"#": "float", "v": "inf" if x > 0 else "-inf"}
        return x
    if depth > 900:
        return {"#": "repr", "t": t.__name__, "v": "<too deep>"}
    if t is list:
        return [enc(v, depth + 1) for v in x]
    if t is tuple:
        return {"#": "tuple", "v": [enc(v, depth + 1) for v in x]}
    if t is dict:
        return {"#": "dict", "v": [[enc(k, depth + 1), enc(v, depth + 1)] for k, v in x.items()]}
    if t is set or t is frozenset:
        return {"#": t.__name__, "v": [enc(v, depth + 1) for v in x]}
    if t is bytes or t is bytearray:
        return {"#": "bytes", "v": base64.b64encode(bytes(x)).decode()}
    if t is complex:
        return {"#": "complex", "v": [enc(x.real), enc(x.imag)]}
    return {"#": "repr", "t": t.__name__, "v": repr(x)[:1000]}


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
                frame["v"] = enc(v)
        except BaseException as e:
            frame = {"i": i, "t": time.process_time() - t0,
                     "e": "".join(traceback.format_exception_only(type(e), e))[-1000:]}
        v = None
        out.write(json.dumps(frame) + "\n")
        out.flush()
    out.write('{"done": true}\n')
    out.flush()


main()
'''


@dataclass
class RefResult:
    """Outcome of one reference run over a list of inputs.

    values   decoded return value per input; None where it failed (see errors) or was
             larger than `send_max` (see sizes)
    times    CPU seconds of each call (0.0 where unknown)
    sizes    about the size of each value as JSON, in characters
    plain    each value is plain data (None/bool/int/float/str, lists, tuples, str-keyed dicts)
    floats   each value is a float or a non-empty list/tuple of floats (EvalPlus's is_floats)
    errors   input index -> message (an exception, or the run ended before it)
    message  what went wrong with the run as a whole ("" when it completed)
    """

    values: list[Any]
    times: list[float]
    sizes: list[int] = field(default_factory=list)
    plain: list[bool] = field(default_factory=list)
    floats: list[bool] = field(default_factory=list)
    errors: dict[int, str] = field(default_factory=dict)
    message: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors and not self.message


def run_reference(sandbox, jobs: Sequence[dict], limits=None, send_max: int = 1 << 16,
                  measure_max: int = 1 << 20) -> list[RefResult]:
    """Run reference functions on inputs in the sandbox, jobs in parallel over its slots.

    Each job: ``{"code": source, "entry": "f" or "Class.method", "inputs": [argument
    lists], "kwargs": [dicts] or None}`` (values may hold tuples, sets, bytes,
    complex ...: they travel tagged). Values larger than `send_max` characters are
    not sent back (only their size and kind); sizes are counted up to just past
    `measure_max`. Returns one `RefResult` per job, in order.
    """
    from codegym.judge.harness import DecodeError, decode_value  # noqa: PLC0415
    from codegym.core.limits import Limits  # noqa: PLC0415
    from codegym.sandbox import RunRequest  # noqa: PLC0415

    lim = limits or Limits(time_s=300.0, wall_s=900.0, memory_mb=2048, output_bytes=256 << 20,
                           file_size_mb=16)
    build = sandbox.build("python", {"main.py": ORACLE_PROGRAM})
    if not build.ok:
        msg = build.result.message if build.result is not None else "build failed"
        return [RefResult([None] * len(j["inputs"]), [0.0] * len(j["inputs"]), message=msg) for j in jobs]
    reqs = []
    for j in jobs:
        body = {"code": j["code"], "entry": j["entry"], "inputs": [tag_encode(list(a)) for a in j["inputs"]],
                "kwargs": [tag_encode(dict(k)) for k in j["kwargs"]] if j.get("kwargs") else None,
                "send_max": send_max, "measure_max": measure_max}
        reqs.append(RunRequest(stdin=json.dumps(body, allow_nan=False), limits=lim))
    results = sandbox.run_many(build, reqs) if reqs else []
    out: list[RefResult] = []
    for j, res in zip(jobs, results):
        n = len(j["inputs"])
        rr = RefResult([None] * n, [0.0] * n, [0] * n, [False] * n, [False] * n)
        seen: set[int] = set()
        done = False
        for line in (res.stdout if res is not None else "").splitlines():
            try:
                fr = json.loads(line)
            except ValueError:
                continue
            if fr.get("done") is True:
                done = True
                continue
            i = fr.get("i")
            if not isinstance(i, int) or not 0 <= i < n:
                continue
            seen.add(i)
            rr.times[i] = float(fr.get("t") or 0.0)
            if "e" in fr:
                rr.errors[i] = str(fr["e"]).strip()
                continue
            rr.sizes[i] = int(fr.get("n") or 0)
            rr.plain[i] = bool(fr.get("p"))
            rr.floats[i] = bool(fr.get("f"))
            if "v" in fr:
                v = fr["v"]
                if isinstance(v, dict) and v.get("#") == "repr":
                    rr.plain[i] = False
                    continue
                try:
                    rr.values[i] = decode_value(v)
                except (DecodeError, ValueError, TypeError, KeyError) as e:
                    rr.errors[i] = f"undecodable return value: {e}"
        if not done:
            status = res.status if res is not None else "not run"
            err = (res.stderr or "").strip()[-800:] if res is not None else ""
            rr.message = f"the reference run ended early ({status})" + (f": {err}" if err else "")
            for i in range(n):
                if i not in seen:
                    rr.errors[i] = rr.message
        out.append(rr)
    return out


def judge_references(tasks: Iterable[Any], solution: str = "reference", sandbox=None, split: str = "hidden",
                     workers: int | None = None) -> list[tuple[str, Any]]:
    """Judge each task's `solution` on `split`, tasks in parallel over the sandbox's slots
    (a thread per slot; each judge spreads its own cases too). Returns ``[(task id,
    JudgeReport)]`` in task order; a task without that solution is skipped. Used to
    prove an import: every reference of a benchmark must be accepted."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    from codegym.judge.run import judge  # noqa: PLC0415
    if sandbox is None:
        from codegym.sandbox import make_sandbox  # noqa: PLC0415
        sandbox = make_sandbox()
    todo = [t for t in tasks if solution in t.solutions]

    def one(task):
        sol = task.solution(solution)
        return task.id, judge(task, dict(sol.files), sandbox=sandbox, split=split,
                              language=sol.language or task.language)

    n = workers or max(1, int(getattr(sandbox, "workers", 1) or 1))
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="codegym-verify") as ex:
        return list(ex.map(one, todo))
