"""The one YAML + pydantic loader: documents that remember the line of every key.

Owns `parse_yaml` (the only place YAML text is parsed: YAML 1.2 floats, duplicate
keys, the line of every key and item, within the bounds of `Caps`), `Doc` (one
file: data, lines, errors, and the sibling files read relative to it -- confined to
its `root` folder after following symlinks, each and all together under `Caps`),
the error record `DocError` (``file:line: field.path: message``) with
`DocValidationError`, the mapping of pydantic errors to those messages
(`pydantic_message`), "did you mean" hints (`suggest`), and `dump_yaml`. Task
files, suite files, eval configs and reward declarations are all read through here;
the bounded composer is `codegym.core.yamlcompose` (docs/tasks.md: confinement and caps).
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import yaml
from pydantic import BaseModel

from codegym.core.paths import display_path
from codegym.core.yamlcompose import DEFAULT_CAPS, CapError, Caps, compose, gc_paused

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


if TYPE_CHECKING:  # (a type checker sees the base the libyaml one mirrors)
    from yaml import SafeLoader as _BaseLoader
else:
    _BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml parser when available


class YamlLoader(_BaseLoader):  # a base chosen at import
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


def parse_yaml(text: str, display: str, caps: Caps = DEFAULT_CAPS) -> Parsed:
    """Parse one YAML document, keeping the line of every key and item.

    Problems (syntax errors, values that cannot be built, duplicate keys, a document
    over `caps`: too deep, too many values, an alias bomb, a tag outside the safe set)
    are `DocError`s naming `display` and the line; duplicate keys leave the document
    usable. Never raises: the work is linear in the text (`codegym.core.yamlcompose`)."""
    lines: dict[Loc, int] = {(): 1}
    errors: list[DocError] = []
    dups: list[tuple] = []
    loader = None
    node = None
    try:
        loader = YamlLoader(text)
        with gc_paused():
            node = compose(loader, caps, len(text), lines, dups)
            if node is None:
                return Parsed(True, None, lines, errors)
            return Parsed(True, loader.construct_document(node), lines, errors)
    except CapError as e:
        errors.append(DocError(display, e.line, format_path(e.loc), e.message))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = e.problem or e.context or "invalid YAML"
        if e.context and e.problem:
            problem = f"{e.context}: {e.problem}"
        kind = "YAML error" if isinstance(e, yaml.constructor.ConstructorError) else "YAML syntax error"
        if "maximum nesting depth" in problem:  # PyYAML >= 6.0.4's scanner met it before our cap
            errors.append(DocError(display, line, "", f"nested deeper than {caps.depth} levels"))
        else:
            errors.append(DocError(display, line, "", f"{kind}: {problem}"))
    except yaml.reader.ReaderError as e:  # a character YAML does not allow (binary junk)
        line = text.encode("utf-8", "surrogatepass")[:max(0, e.position)].count(b"\n") + 1
        ch = e.character if isinstance(e.character, int) else ord(str(e.character)[:1] or "\0")
        errors.append(DocError(display, line, "", f"not YAML text: character #x{ch:04x} "
                                                  "(control characters are not allowed)"))
    except yaml.YAMLError as e:
        errors.append(DocError(display, 1, "", f"YAML error: {e}"))
    except UnicodeError as e:
        line = text[:getattr(e, "start", 0)].count("\n") + 1
        errors.append(DocError(display, line, "", f"not YAML text: {getattr(e, 'reason', e)}"))
    except Exception as e:  # noqa: BLE001  a scalar that resolves but cannot be built (2026-13-01)
        bad = _unbuildable_scalar(loader, node)
        line = bad.start_mark.line + 1 if bad is not None else 1
        at = max((loc for loc, ln in lines.items() if ln == line), key=len, default=())
        errors.append(DocError(display, line, format_path(at), _reason(e, bad)))
    finally:
        errors[:0] = [DocError(display, ln, format_path(loc), msg) for ln, loc, msg in dups]
        if loader is not None:
            loader.dispose()
    return Parsed(False, None, lines, errors)


def _reason(e: Exception, bad: Any) -> str:
    """What is wrong with a scalar whose construction raised `e` (`bad`: the node, or None)."""
    if bad is None:
        return f"a value cannot be built ({type(e).__name__}: {str(e)[:200]})"
    value = bad.value if len(bad.value) <= 60 else bad.value[:57] + "..."
    tag = bad.tag.replace("tag:yaml.org,2002:", "!!")
    detail = str(e)[:200] if isinstance(e, ValueError) and len(str(e)) < 200 else f"not a valid {tag}"
    return f"invalid value {value!r}: {detail}"


def _unbuildable_scalar(loader: Any, node: Any) -> Any:
    """The first scalar under `node` whose construction raises ValueError, or None."""
    stack = [node] if node is not None and loader is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, yaml.ScalarNode):
            loader.recursive_objects = {}  # a failed construction leaves its node marked
            loader.constructed_objects = {}
            try:
                loader.construct_object(n, deep=True)
            except yaml.MarkedYAMLError:  # (reported with its own line)
                continue
            except Exception:  # noqa: BLE001  ValueError, or a tag's constructor failing (!!bool x)
                return n
        elif isinstance(n, yaml.MappingNode):
            stack.extend(v for pair in reversed(n.value) for v in reversed(pair))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(reversed(n.value))
    return None


def inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Whether `path` is `root` or below it, both taken as they are (resolve them first)."""
    path, root = os.fspath(path), os.fspath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB" if n >= 100_000 else f"{n:,} bytes"


class Doc:
    """One YAML file plus what the loader learnt about it: lines, files read, errors.

    `root`: the folder every file it names must resolve into (symlinks followed;
    default: the YAML file's own folder); `caps`: what it may read (`Caps`);
    `cap_hint`: how a user raises the caps, quoted in the errors they cause."""

    def __init__(self, file: Path, display: str | None = None, root: Path | None = None,
                 caps: Caps = DEFAULT_CAPS, cap_hint: str = ""):
        self.file = Path(file)
        self.display = display if display is not None else display_path(file)
        self.base = self.file.parent
        self.root = Path(root) if root is not None else self.base
        self.caps = caps
        self.cap_hint = cap_hint
        self.bytes_read = 0
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
        data = self._read(self.file, self.caps.file_bytes, (), None, "a YAML file")
        if data is None:
            return False
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data[:e.start].count(b"\n") + 1
            self.errors.append(DocError(self.display, line, "", f"not UTF-8 text (byte 0x{data[e.start]:02x} "
                                                                "on this line): is it a binary file?"))
            return False
        parsed = parse_yaml(text, self.display, self.caps)
        self.lines.update(parsed.lines)
        self.errors.extend(parsed.errors)
        if parsed.ok:
            self.data = parsed.data
        return parsed.ok

    def _fail(self, loc: Loc | None, message: str) -> None:
        if loc is None:
            self.errors.append(DocError(self.display, 1, "", message))
        else:
            self.err(loc, message)

    def _read(self, path: Path, cap: int, loc: Loc | None, rel: str | None, what: str) -> bytes | None:
        """The bytes of `path` (a regular file within the caps; with `rel`, also inside
        `root`), or None with the error recorded at `loc` (None: the document itself)."""
        name = rel if rel is not None else "the file"
        real = os.path.realpath(path)
        root = os.path.realpath(self.root)
        if rel is not None and not inside(real, root):
            self._fail(loc, f"{rel} resolves to {real}, outside the suite folder {display_path(root)}: "
                            "the files a task names must be inside its suite folder (symlinks are followed)")
            return None
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
        except FileNotFoundError:
            self._fail(loc, "file not found" if rel is None else f"file not found: {rel} (relative to {self.display})")
            return None
        except IsADirectoryError:
            self._fail(loc, "is a directory, not a file" + (f": {rel}" if rel else ""))
            return None
        except OSError as e:
            self._fail(loc, f"cannot read {name}: {e.strerror or e}")
            return None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                self._fail(loc, "is a directory, not a file" + (f": {rel}" if rel else ""))
                return None
            if not stat.S_ISREG(st.st_mode):
                self._fail(loc, "not a regular file (a device, pipe or socket)" + (f": {rel}" if rel else ""))
                return None
            if rel is not None and not inside(os.path.realpath(f"/proc/self/fd/{fd}"), root) \
                    and os.path.isdir("/proc/self/fd"):
                self._fail(loc, f"{rel} moved outside the suite folder while it was read")
                return None
            data = self._read_capped(fd, st.st_size, cap, loc, name, what)
        except OSError as e:
            self._fail(loc, f"cannot read {name}: {e.strerror or e}")
            return None
        finally:
            os.close(fd)
        if data is not None:
            self.bytes_read += len(data)
        return data

    def _read_capped(self, fd: int, size: int, cap: int, loc: Loc | None, name: str, what: str) -> bytes | None:
        hint = f" ({self.cap_hint})" if self.cap_hint else ""
        left = self.caps.total_bytes - self.bytes_read
        if size > cap:
            self._fail(loc, f"{name} is {_mb(size)}, over the cap of {_mb(cap)} for {what}{hint}")
            return None
        if size > left:
            self._fail(loc, f"{name} ({_mb(size)}) takes the files read for this document over their total "
                            f"cap of {_mb(self.caps.total_bytes)}{hint}")
            return None
        chunks, n, limit = [], 0, min(cap, left)
        while n <= limit:  # (the size may change while reading: never more than the cap)
            b = os.read(fd, min(1 << 20, limit + 1 - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
        if n > limit:
            self._fail(loc, f"{name} grew over the cap of {_mb(limit)} while it was read{hint}")
            return None
        return b"".join(chunks)

    def read_rel(self, rel: Any, loc: Loc) -> str | None:
        """Text of a file named relative to this YAML file, inside `root` and under the
        caps; errors name the key's line."""
        if not isinstance(rel, str) or not rel.strip():
            self.err(loc, "expected a file path (relative to the YAML file)")
            return None
        if os.path.isabs(rel):
            self.err(loc, f"file paths must be relative to the YAML file: {rel}")
            return None
        if "\0" in rel:
            self.err(loc, "a file path cannot contain a NUL character")
            return None
        full = self.base / rel
        self.deps.append(full)
        data = self._read(full, self.caps.inlined_bytes, loc, rel, "a file a task names")
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data[:e.start].count(b"\n") + 1
            self.err(loc, f"not UTF-8 text: {rel} (byte 0x{data[e.start]:02x} on its line {line})")
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
