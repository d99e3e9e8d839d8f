"""YAML output of the importers: task files and suite folders.

`flow_text` (a value as one line of YAML flow text, much faster than PyYAML's
representer for 10^5 test cases), `task_yaml` (a task mapping as YAML: test cases
in flow style, statements and code as literal blocks, key order kept) and
`write_suite` (``suite.yaml`` + one file per task, each loaded back when asked),
`write_suite_file` (one task file).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from codegym.tasks.load import load_task


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


_BLOCK_UNSAFE = re.compile(
    "[^\x09\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


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


def write_suite_file(out_dir: str | os.PathLike, task: Mapping[str, Any]) -> Path:
    """Write one task mapping as ``<out_dir>/<task name>.yaml`` (atomically); its path."""
    p = Path(out_dir) / f"{str(task['id']).rsplit('/', 1)[-1]}.yaml"
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(task_yaml(task), encoding="utf-8")
    os.replace(tmp, p)
    return p


def write_suite(out_dir: str | os.PathLike, tasks: Sequence[Mapping[str, Any]], *, name: str,
                description: str, defaults: Mapping[str, Any] | None = None, validate: bool = True,
                clean: bool = False) -> list[Path]:
    """Write a suite folder: ``suite.yaml`` (name, description, `defaults` merged under
    every task) and ``<task name>.yaml`` per task mapping (the name is the part of the
    id after the last ``/``). With `validate`, every file is loaded back with
    `codegym.tasks.load.load_task` (raises `TaskValidationError` on the first bad one).
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
        paths.append(write_suite_file(out, t))
    if validate:
        for p in paths:
            load_task(p)
    return paths
