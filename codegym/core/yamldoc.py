"""The one YAML + pydantic loader: documents that remember the line of every key.

Owns `parse_yaml` (the only place YAML text is parsed: YAML 1.2 floats, duplicate
keys, the line of every key and item), `Doc` (one file: data, lines, errors, and the
sibling files read relative to it), the error record `DocError`
(``file:line: field.path: message``) with `DocValidationError`, the mapping of
pydantic errors to those messages (`pydantic_message`), "did you mean" hints
(`suggest`), and `dump_yaml`. Task files, eval configs and reward declarations are
all read through here (docs/tasks.md); bounds on what a file may cost (its size,
aliases, the length of a scalar) belong in `parse_yaml`.
"""

from __future__ import annotations

import difflib
import os
import re
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import yaml
from pydantic import BaseModel

from codegym.core.paths import display_path

__all__ = ["Loc", "DocError", "DocValidationError", "format_path", "YamlLoader", "Parsed",
           "parse_yaml", "Doc", "SIMPLE_MESSAGES", "suggest", "model_at", "unknown_field_message",
           "pydantic_message", "dump_yaml"]

Loc = tuple  # a path into a document: str keys and int indices

# --------------------------------------------------------------------------- errors


class DocError(NamedTuple):
    """One problem of a YAML file: where it is and what is wrong."""

    file: str
    line: int
    path: str
    message: str

    def __str__(self) -> str:
        if self.path:
            return f"{self.file}:{self.line}: {self.path}: {self.message}"
        return f"{self.file}:{self.line}: {self.message}"


class DocValidationError(ValueError):
    """Every problem found in one or more YAML files (`errors`), one per line in str()."""

    def __init__(self, errors: Iterable[DocError]):
        seen: set[DocError] = set()
        uniq = []
        for e in errors:  # a broken shared file (suite.yaml) is reported once, not per user
            if e not in seen:
                seen.add(e)
                uniq.append(e)
        self.errors: list[DocError] = uniq
        super().__init__("\n".join(str(e) for e in uniq))


def format_path(loc: Iterable[Any]) -> str:
    """``("tests", "hidden", 2, "stdin")`` -> ``tests.hidden[2].stdin``; odd keys go in brackets."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", part):
            out += ("." if out else "") + part
        else:
            out += f"[{part}]"
    return out


# --------------------------------------------------------------------------- parsing


class YamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml parser when available
    """SafeLoader that reads YAML 1.2 floats: ``1e-6`` is a float, not the string
    PyYAML's YAML 1.1 rules make of it (a silent trap for tolerances and answers)."""


YamlLoader.yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
YamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


class Parsed(NamedTuple):
    """What `parse_yaml` made of a text: `ok` False means `data` is unusable."""

    ok: bool
    data: Any
    lines: dict[Loc, int]
    errors: list[DocError]


def parse_yaml(text: str, display: str) -> Parsed:
    """Parse one YAML document, keeping the line of every key and item.

    Problems (syntax errors, values that cannot be built, duplicate keys) are
    `DocError`s naming `display`; duplicate keys leave the document usable."""
    lines: dict[Loc, int] = {(): 1}
    errors: list[DocError] = []
    loader = YamlLoader(text)
    node = None
    try:
        node = loader.get_single_node()
        if node is None:
            return Parsed(True, None, lines, errors)
        # Walk before constructing: construction flattens merge keys (<<) in place.
        _walk(node, (), set(), lines, errors, display)
        return Parsed(True, loader.construct_document(node), lines, errors)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = e.problem or e.context or "invalid YAML"
        if e.context and e.problem:
            problem = f"{e.context}: {e.problem}"
        errors.append(DocError(display, line, "", f"YAML syntax error: {problem}"))
    except yaml.YAMLError as e:
        errors.append(DocError(display, 1, "", f"YAML error: {e}"))
    except ValueError as e:  # a scalar that resolves but cannot be built (2026-13-01)
        bad = _unbuildable_scalar(loader, node)
        line = bad.start_mark.line + 1 if bad is not None else 1
        what = f"invalid value {bad.value!r}: " if bad is not None else ""
        at = max((loc for loc, ln in lines.items() if ln == line), key=len, default=())
        errors.append(DocError(display, line, format_path(at), f"{what}{e}"))
    finally:
        loader.dispose()
    return Parsed(False, None, lines, errors)


def _walk(node: yaml.Node, loc: Loc, active: set[int], lines: dict[Loc, int],
          errors: list[DocError], display: str) -> None:
    if id(node) in active:  # recursive alias
        return
    active = active | {id(node)}
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for knode, vnode in node.value:
            if knode.tag == "tag:yaml.org,2002:merge":
                continue
            key = knode.value if isinstance(knode, yaml.ScalarNode) else str(knode.start_mark)
            line = knode.start_mark.line + 1
            if key in seen:
                errors.append(DocError(display, line, format_path(loc + (key,)),
                                       f"duplicate key (first given on line {seen[key]})"))
                continue
            seen[key] = line
            lines[loc + (key,)] = line
            _walk(vnode, loc + (key,), active, lines, errors, display)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[loc + (i,)] = item.start_mark.line + 1
            _walk(item, loc + (i,), active, lines, errors, display)


def _unbuildable_scalar(loader: Any, node: Any) -> Any:
    """The first scalar under `node` whose construction raises ValueError, or None."""
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, yaml.ScalarNode):
            loader.recursive_objects = {}  # a failed construction leaves its node marked
            loader.constructed_objects = {}
            try:
                loader.construct_object(n, deep=True)
            except ValueError:
                return n
            except Exception:  # noqa: BLE001  other problems are reported elsewhere
                continue
        elif isinstance(n, yaml.MappingNode):
            stack.extend(v for pair in reversed(n.value) for v in reversed(pair))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(reversed(n.value))
    return None


class Doc:
    """One YAML file plus what the loader learnt about it: lines, files read, errors."""

    def __init__(self, file: Path, display: str | None = None):
        self.file = Path(file)
        self.display = display if display is not None else display_path(file)
        self.base = self.file.parent
        self.lines: dict[Loc, int] = {(): 1}
        self.errors: list[DocError] = []
        self.deps: list[Path] = [self.file]
        self.data: Any = None

    def err(self, loc: Loc, message: str) -> None:
        self.errors.append(DocError(self.display, self.line_of(loc), format_path(loc), message))

    def line_of(self, loc: Loc) -> int:
        """Line of `loc`, else of its longest known prefix (1 for the document)."""
        for i in range(len(loc), -1, -1):
            if loc[:i] in self.lines:
                return self.lines[loc[:i]]
        return 1

    def alias(self, new: Loc, old: Loc) -> None:
        """A value moved from `old` to `new` (e.g. stdin_file -> stdin): keep its line."""
        if old in self.lines:
            self.lines[new] = self.lines[old]

    def load(self) -> bool:
        """Read and parse the file; on failure record the error (with its line) and
        return False. Duplicate keys are recorded in `errors` but do not fail."""
        try:
            text = self.file.read_bytes().decode("utf-8")
        except FileNotFoundError:
            self.errors.append(DocError(self.display, 1, "", "file not found"))
            return False
        except (OSError, UnicodeDecodeError) as e:
            self.errors.append(DocError(self.display, 1, "", f"cannot read: {e}"))
            return False
        parsed = parse_yaml(text, self.display)
        self.lines.update(parsed.lines)
        self.errors.extend(parsed.errors)
        if parsed.ok:
            self.data = parsed.data
        return parsed.ok

    def read_rel(self, rel: Any, loc: Loc) -> str | None:
        """Text of a file named relative to this YAML file; errors name the key's line."""
        if not isinstance(rel, str) or not rel.strip():
            self.err(loc, "expected a file path (relative to the YAML file)")
            return None
        if os.path.isabs(rel):
            self.err(loc, f"file paths must be relative to the YAML file: {rel}")
            return None
        full = self.base / rel
        self.deps.append(full)
        try:
            return full.read_bytes().decode("utf-8")
        except FileNotFoundError:
            self.err(loc, f"file not found: {rel} (relative to {self.display})")
        except IsADirectoryError:
            self.err(loc, f"is a directory, not a file: {rel}")
        except UnicodeDecodeError:
            self.err(loc, f"not UTF-8 text: {rel}")
        except OSError as e:
            self.err(loc, f"cannot read {rel}: {e}")
        return None


# --------------------------------------------------------------------------- pydantic errors

SIMPLE_MESSAGES = {
    "string_type": "expected string",
    "int_type": "expected integer", "int_parsing": "expected integer",
    "int_from_float": "expected integer",
    "float_type": "expected number", "float_parsing": "expected number",
    "finite_number": "expected a finite number",
    "bool_type": "expected boolean (true/false)", "bool_parsing": "expected boolean (true/false)",
    "list_type": "expected list", "tuple_type": "expected list",
    "dict_type": "expected mapping", "model_type": "expected mapping",
    "model_attributes_type": "expected mapping", "dataclass_type": "expected mapping",
    "date_type": "expected date (YYYY-MM-DD)", "date_parsing": "expected date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "expected date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "expected date (YYYY-MM-DD) without a time",
    "missing": "required field missing",
}


def suggest(word: Any, candidates: Iterable[str], listed: Iterable[str] | None = None,
            label: str = "known") -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, else ``; known: a, b`` listing
    `listed` (default: the candidates); "" when there is nothing to list."""
    candidates = list(candidates)
    close = difflib.get_close_matches(str(word), candidates, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    shown = candidates if listed is None else list(listed)
    return f"; {label}: {', '.join(shown)}" if shown else ""


def _unwrap(tp: Any) -> Any:
    while True:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


def model_at(root: Any, loc: Loc) -> Any:
    """The schema type at a path below the model `root` (None when the path leaves it)."""
    tp: Any = root
    for part in loc:
        tp = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            f = tp.model_fields.get(part) if isinstance(part, str) else None
            if f is None:
                return None
            tp = f.annotation
        else:
            origin = typing.get_origin(tp)
            if origin is list:
                tp = typing.get_args(tp)[0]
            elif origin is dict:
                tp = typing.get_args(tp)[1]
            else:
                return None
    return _unwrap(tp)


def unknown_field_message(root: Any, loc: Loc,
                          extra_keys: Mapping[type, Sequence[str]] | None = None) -> str:
    """``unknown field 'x' (did you mean 'y'?)`` or ``...; allowed: a, b`` for the model
    at ``loc[:-1]``; `extra_keys` adds keys a loader consumes before the model sees them."""
    key = loc[-1]
    model = model_at(root, loc[:-1])
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return f"unknown field {key!r}"
    names = [n for n, f in model.model_fields.items() if not f.exclude]
    names += list((extra_keys or {}).get(model, ()))
    return f"unknown field {key!r}" + suggest(key, names, label="allowed")


def pydantic_message(e: Mapping[str, Any], root: Any = None,
                     extra_keys: Mapping[type, Sequence[str]] | None = None) -> str:
    """The message of one pydantic error (``exc.errors()`` item) in codegym's words;
    `root` is the validated model (for unknown-field suggestions)."""
    t = e["type"]
    ctx = e.get("ctx") or {}
    if t == "extra_forbidden":
        return unknown_field_message(root, tuple(e["loc"]), extra_keys)
    if t in SIMPLE_MESSAGES:
        return SIMPLE_MESSAGES[t]
    bounds = {"greater_than": (">", "gt"), "greater_than_equal": (">=", "ge"),
              "less_than": ("<", "lt"), "less_than_equal": ("<=", "le")}
    if t in bounds:
        op, key = bounds[t]
        return f"must be {op} {ctx.get(key)}"
    if t == "literal_error":
        return f"expected one of {ctx.get('expected')}"
    if t == "too_short":
        return f"needs at least {ctx.get('min_length')} item(s)"
    if t == "string_pattern_mismatch":
        return f"does not match {ctx.get('pattern')}"
    if t in ("value_error", "assertion_error"):
        err = ctx.get("error")
        return str(err) if err is not None else e["msg"]
    return e["msg"]


# --------------------------------------------------------------------------- writing


class _BlockDumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, s: str):
    style = "|" if "\n" in s else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=style)


_BlockDumper.add_representer(str, _str_representer)


def dump_yaml(data: Any) -> str:
    """YAML text of `data` (keys in order, multi-line strings as literal blocks)."""
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)
