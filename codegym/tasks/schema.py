"""Tasks: the YAML schema of one coding task, its validation and loading.

This module owns:

- the pydantic models of a task (`Task`, `TestCase`, `TestSplits`, `CheckerSpec`,
  `GeneratorSpec`, `PerfSpec`, `Solution`, `Metadata`, `RepoSpec`); `Task.limits`
  is a `codegym.core.limits.Limits` (re-exported here);
- `load_task(path)`: read one task YAML file, deep-merge the suite defaults
  (`suite.yaml` next to it) under it, inline sibling files, validate, and return a
  frozen `Task` (cached by the modification times of every file it read);
- `TaskValidationError`: every problem of a file, each as
  ``<file>:<line>: <field.path>: <problem>``.

It does not run anything: generated tests are only described here
(`GeneratorSpec`, run by `codegym.judge.testgen`), checkers are only named
(`CheckerSpec`, applied by `codegym.judge.checkers`), and the judge lives in
`codegym.judge.run`.

YAML layout (one task per file, ``tasks/<suite>/<name>.yaml``)::

    id: perfcode/sum-pairs        # default "<suite folder>/<path of the file without .yaml>"
    version: 1
    title: Count pairs with a given sum
    statement: |                  # markdown shown to the agent (or {file: statement.md})
      ...
    kind: stdio                   # stdio | function | script | repo
    language: python              # language of the starter / of function and script tasks
    languages: [python, c, cpp]   # accepted languages (stdio default: every registered one)
    entry_point: solve            # function kind: the callable ("Solution.method" allowed)
    main_file: main.py            # default: the language's main file
    starter: {main.py: "..."}     # value: text or {file: relative/path}
    tests: {public: [...], hidden: [...], perf: [...]}
    checker: tokens               # or {type: float, abs_tol: 1e-6, rel_tol: 1e-6}
    limits: {time_s: 2, memory_mb: 256}
    perf: {baseline: baseline, reference: reference, repeats: 5, metric: cpu}
    solutions: {reference: {language: python, files: {main.py: "..."}}}
    metadata: {source: original, licence: Apache-2.0, difficulty: easy, tags: [..]}

Sibling files are relative to the YAML file that names them (a task file or
its ``suite.yaml``): ``{file: rel}`` for statement / starter / solution files,
``stdin_file`` / ``expected_file`` in stdio cases, ``file`` in generator and
program-checker specs, and a whole split may be ``{glob: "data/*.in",
expected_ext: ".out"}``. All are inlined at load time, so a `Task` is plain data
and its `content_hash` covers every byte a judge would use.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import hashlib
import json
import os
import re
import threading
import types
import typing
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal, NamedTuple

import yaml
from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field,
                      PlainSerializer, ValidationError, ValidationInfo, model_serializer,
                      model_validator)

from codegym.core.languages import LanguageSpec, UnknownLanguageError, get_language, list_languages
from codegym.core.limits import Limits

__all__ = [
    "Task", "TestCase", "TestSplits", "CheckerSpec", "GeneratorSpec", "PerfSpec", "Solution",
    "Metadata", "RepoSpec", "Limits", "TaskError", "TaskValidationError", "load_task",
    "find_suite_file", "read_suite_file", "suite_root", "default_task_id", "format_path",
    "canonical_language", "known_languages", "language_main_file", "KINDS", "SPLITS", "CHECKER_TYPES", "VERDICTS", "SUITE_FILE",
]

KINDS = ("stdio", "function", "script", "repo")
SPLITS = ("public", "hidden", "perf")
CHECKER_TYPES = ("exact", "lines", "tokens", "float", "lines_unordered", "sets", "program")
#: verdicts a solution may be expected to get (`Solution.expect`)
VERDICTS = ("accepted", "wrong_answer", "runtime_error", "timeout", "memory_limit",
            "output_limit", "compile_error")
SUITE_FILE = "suite.yaml"
#: key of suite.yaml that describes the suite itself and is not merged into tasks
SUITE_META_KEY = "suite"

# --------------------------------------------------------------------------- languages

@functools.lru_cache(maxsize=None)
def _lookup(name: str) -> LanguageSpec | None:
    try:
        return get_language(name)
    except UnknownLanguageError:
        return None


def canonical_language(name: str) -> str | None:
    """The table's name for `name` (an alias such as ``py`` gives ``python``), None if unknown."""
    spec = _lookup(name) if isinstance(name, str) else None
    return spec.name if spec else None


def language_main_file(name: str) -> str | None:
    """The main file of a language (``main.py``, ``main.c`` ...), None if unknown."""
    spec = _lookup(name) if isinstance(name, str) else None
    return spec.main_file if spec else None


def known_languages() -> list[str]:
    """Canonical names of every runnable language."""
    return [spec.name for spec in list_languages()]


def _canon_or_keep(name: str) -> str:
    # Unknown names are kept so that the semantic check can report them with a line.
    return canonical_language(name) or name


LangName = Annotated[str, AfterValidator(_canon_or_keep)]

# --------------------------------------------------------------------------- errors


class TaskError(NamedTuple):
    """One problem of a task file: where it is and what is wrong."""

    file: str
    line: int
    path: str
    message: str

    def __str__(self) -> str:
        if self.path:
            return f"{self.file}:{self.line}: {self.path}: {self.message}"
        return f"{self.file}:{self.line}: {self.message}"


class TaskValidationError(ValueError):
    """Every problem found in one or more task files (`errors`), one per line in str()."""

    def __init__(self, errors: Iterable[TaskError]):
        seen: set[TaskError] = set()
        uniq = []
        for e in errors:  # a broken suite.yaml is reported once, not once per task
            if e not in seen:
                seen.add(e)
                uniq.append(e)
        self.errors: list[TaskError] = uniq
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


# --------------------------------------------------------------------------- YAML with lines

Loc = tuple  # a path into the document: str keys and int indices


class _TaskLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml parser when available
    """SafeLoader that reads YAML 1.2 floats: ``1e-6`` is a float, not the string
    PyYAML's YAML 1.1 rules make of it (a silent trap for tolerances and answers)."""


_TaskLoader.yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_TaskLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def _unbuildable_scalar(loader: Any, node: Any) -> Any:
    """The first scalar under `node` whose construction raises ValueError, or None."""
    stack = [node]
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


class _Doc:
    """One YAML document plus what the loader learnt about it: lines, files read, errors."""

    def __init__(self, file: Path, display: str):
        self.file = file
        self.display = display
        self.base = file.parent
        self.lines: dict[Loc, int] = {(): 1}
        self.errors: list[TaskError] = []
        self.deps: list[Path] = [file]
        self.data: Any = None

    def err(self, loc: Loc, message: str) -> None:
        self.errors.append(TaskError(self.display, self.line_of(loc), format_path(loc), message))

    def line_of(self, loc: Loc) -> int:
        for i in range(len(loc), -1, -1):
            if loc[:i] in self.lines:
                return self.lines[loc[:i]]
        return 1

    def alias(self, new: Loc, old: Loc) -> None:
        """A value moved from `old` to `new` (e.g. stdin_file -> stdin): keep its line."""
        if old in self.lines:
            self.lines[new] = self.lines[old]

    def load(self) -> bool:
        """Parse the file; on failure record the error (with its line) and return False."""
        try:
            text = self.file.read_bytes().decode("utf-8")
        except FileNotFoundError:
            self.errors.append(TaskError(self.display, 1, "", "file not found"))
            return False
        except (OSError, UnicodeDecodeError) as e:
            self.errors.append(TaskError(self.display, 1, "", f"cannot read: {e}"))
            return False
        loader = _TaskLoader(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                # Walk before constructing: construction flattens merge keys (<<) in place.
                self._walk(node, (), set())
                self.data = loader.construct_document(node)
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line + 1 if mark is not None else 1
            problem = e.problem or e.context or "invalid YAML"
            if e.context and e.problem:
                problem = f"{e.context}: {e.problem}"
            self.errors.append(TaskError(self.display, line, "", f"YAML syntax error: {problem}"))
            return False
        except yaml.YAMLError as e:
            self.errors.append(TaskError(self.display, 1, "", f"YAML error: {e}"))
            return False
        except ValueError as e:  # a scalar that resolves but cannot be built (2026-13-01)
            bad = _unbuildable_scalar(loader, node)
            line = bad.start_mark.line + 1 if bad is not None else 1
            what = f"invalid value {bad.value!r}: " if bad is not None else ""
            at = max((loc for loc, ln in self.lines.items() if ln == line), key=len, default=())
            self.errors.append(TaskError(self.display, line, format_path(at), f"{what}{e}"))
            return False
        finally:
            loader.dispose()
        return True

    def _walk(self, node: yaml.Node, loc: Loc, active: set[int]) -> None:
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
                    self.errors.append(TaskError(self.display, line, format_path(loc + (key,)),
                                                 f"duplicate key (first given on line {seen[key]})"))
                    continue
                seen[key] = line
                self.lines[loc + (key,)] = line
                self._walk(vnode, loc + (key,), active)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.lines[loc + (i,)] = item.start_mark.line + 1
                self._walk(item, loc + (i,), active)

    # ---- sibling files

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

    def resolve_ref(self, value: Any, loc: Loc) -> Any:
        """``{file: rel}`` -> the file's text; anything else unchanged."""
        if isinstance(value, dict) and "file" in value:
            if set(value) != {"file"}:
                extra = sorted(str(k) for k in value if k != "file")
                self.err(loc, f"a file reference takes only the key 'file' (also got {', '.join(extra)})")
                return ""
            text = self.read_rel(value["file"], loc + ("file",))
            # On failure the error is recorded; "" keeps the schema from adding another.
            return text if text is not None else ""
        return value

    def resolve_code_file(self, spec: Any, loc: Loc) -> None:
        """In a generator / program-checker mapping, replace `file` by `code` (its text)."""
        if not isinstance(spec, dict) or "file" not in spec:
            return
        if "code" in spec:
            self.err(loc + ("file",), "give either code or file, not both")
            return
        text = self.read_rel(spec["file"], loc + ("file",))
        del spec["file"]
        spec["code"] = text if text is not None else ""  # a failure is already recorded
        self.alias(loc + ("code",), loc + ("file",))

    def resolve_files(self) -> None:
        """Inline every sibling file the document names (tolerant of a wrong structure:
        whatever does not have the expected shape is left for the schema to report)."""
        d = self.data
        if not isinstance(d, dict):
            return
        if "statement" in d:
            d["statement"] = self.resolve_ref(d["statement"], ("statement",))
        if isinstance(d.get("starter"), dict):
            for k, v in d["starter"].items():
                d["starter"][k] = self.resolve_ref(v, ("starter", k))
        if isinstance(d.get("solutions"), dict):
            for name, sol in d["solutions"].items():
                if isinstance(sol, dict) and isinstance(sol.get("files"), dict):
                    for k, v in sol["files"].items():
                        sol["files"][k] = self.resolve_ref(v, ("solutions", name, "files", k))
        if isinstance(d.get("checker"), dict):
            self.resolve_code_file(d["checker"], ("checker",))
        tests = d.get("tests")
        if isinstance(tests, dict):
            for split, cases in list(tests.items()):
                if isinstance(cases, dict) and "glob" in cases:
                    tests[split] = self._expand_glob(cases, ("tests", split))
                elif isinstance(cases, list):
                    for i, case in enumerate(cases):
                        if isinstance(case, dict):
                            self._resolve_case(case, ("tests", split, i))

    def _resolve_case(self, case: dict, loc: Loc) -> None:
        for src, dst in (("stdin_file", "stdin"), ("expected_file", "expected")):
            if src not in case:
                continue
            if dst in case:
                self.err(loc + (src,), f"give either {dst} or {src}, not both")
                continue
            rel = case.pop(src)
            text = self.read_rel(rel, loc + (src,))
            if text is not None:
                case[dst] = text
                self.alias(loc + (dst,), loc + (src,))
                if src == "stdin_file" and "name" not in case and isinstance(rel, str):
                    case["name"] = Path(rel).stem  # a readable default for reports
            else:
                # The missing file is already reported; a placeholder keeps the schema
                # and the other checks from reporting it again in other words.
                case[dst] = ""
                self.alias(loc + (dst,), loc + (src,))
        if isinstance(case.get("generator"), dict):
            self.resolve_code_file(case["generator"], loc + ("generator",))
        if isinstance(case.get("checker"), dict):
            self.resolve_code_file(case["checker"], loc + ("checker",))

    def _expand_glob(self, spec: dict, loc: Loc) -> Any:
        """``{glob: "dir/*.in", expected_ext: ".out"}`` -> stdio cases, one per matched file."""
        extra = set(spec) - {"glob", "expected_ext"}
        if extra:
            self.err(loc + (sorted(map(str, extra))[0],),
                     "a glob split takes only the keys glob and expected_ext")
            return []
        pattern, ext = spec.get("glob"), spec.get("expected_ext", ".out")
        if not isinstance(pattern, str) or not pattern or os.path.isabs(pattern):
            self.err(loc + ("glob",), "expected a glob pattern relative to the YAML file")
            return []
        if not isinstance(ext, str):
            self.err(loc + ("expected_ext",), "expected string")
            return []
        # The directory's mtime changes when files are added or removed there.
        self.deps.append((self.base / pattern).parent)
        matches = sorted(p for p in self.base.glob(pattern) if p.is_file())
        if not matches:
            self.err(loc + ("glob",), f"no file matches {pattern}")
            return []
        cases = []
        for p in matches:
            rel = p.relative_to(self.base).as_posix()
            case: dict[str, Any] = {"name": p.stem}
            text = self.read_rel(rel, loc + ("glob",))
            if text is None:
                continue
            case["stdin"] = text
            exp = p.with_name(p.stem + ext)
            if ext and exp != p and exp.is_file():
                etext = self.read_rel(exp.relative_to(self.base).as_posix(), loc + ("glob",))
                if etext is not None:
                    case["expected"] = etext
            cases.append(case)
        return cases


def _deep_merge(base: Any, over: Any) -> Any:
    """Mappings merge key by key (recursively); anything else in `over` replaces `base`."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _deep_merge(base[k], v) if k in base else v
        return out
    return over


# --------------------------------------------------------------------------- models


class _Model(BaseModel):
    # extra="forbid": a misspelt key is an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid", frozen=True)

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False):
        """As BaseModel.model_copy, but cached hashes are recomputed for the copy
        (pydantic copies ``__dict__``, where functools.cached_property keeps them)."""
        new = super().model_copy(update=update, deep=deep)
        for name in _cached_names(type(self)):
            new.__dict__.pop(name, None)
        return new


@functools.lru_cache(maxsize=None)
def _cached_names(cls: type) -> tuple[str, ...]:
    return tuple(n for n in dir(cls) if isinstance(getattr(cls, n, None), functools.cached_property))


class _LimitsModel(_Model):
    """The YAML form of `codegym.core.limits.Limits` (every field optional, same names)."""

    time_s: float = Field(Limits.time_s, gt=0)
    wall_s: float | None = Field(None, gt=0)
    memory_mb: int = Field(Limits.memory_mb, gt=0)
    output_bytes: int = Field(Limits.output_bytes, gt=0)
    processes: int = Field(Limits.processes, ge=0)
    file_size_mb: int = Field(Limits.file_size_mb, ge=0)
    open_files: int = Field(Limits.open_files, gt=0)
    disk_mb: int = Field(Limits.disk_mb, gt=0)
    wall_factor: float = Field(Limits.wall_factor, gt=0)


def _limits_in(v: Any) -> Any:
    return dataclasses.asdict(v) if isinstance(v, Limits) else v


def _limits_out(m: Any) -> Any:
    return Limits(**m.model_dump()) if isinstance(m, _LimitsModel) else m


#: validated as `_LimitsModel` (so errors name the field), held and dumped as `Limits`
LimitsField = Annotated[_LimitsModel, BeforeValidator(_limits_in), AfterValidator(_limits_out),
                        PlainSerializer(lambda v: v.to_dict() if isinstance(v, Limits) else v)]


def _checker_shorthand(v: Any) -> Any:
    return {"type": v} if isinstance(v, str) else v


class CheckerSpec(_Model):
    """How a program's output is compared with the expected one (applied by codegym.judge.checkers).

    type     exact  -- byte-for-byte equal (function tasks: equal values, the default there)
             lines  -- equal line by line, trailing whitespace and trailing blank lines ignored
             tokens -- equal whitespace-separated tokens (stdio default)
             float  -- tokens, numbers equal within abs_tol or rel_tol (function tasks:
                       values compared recursively with the same tolerance)
             lines_unordered -- the output lines as a multiset (any order)
             sets   -- line by line, each line compared as a multiset of tokens
             program -- a checker program (`code`, in `language`) decides; see codegym.judge.checkers
    abs_tol, rel_tol  tolerances of `float`
    seq_lenient   function tasks: a list equals a tuple with the same items (default true,
                  as LiveCodeBench and EvalPlus compare)
    strict_types  function tasks: 1 != 1.0 and True != 1 (default false: Python equality)
    code     source of a `program` checker (YAML may give `file: rel/path` instead)
    language language of a `program` checker (default python)
    args     extra argv for a `program` checker

    A bare string in YAML (``checker: tokens``) means ``{type: tokens}``.
    """

    type: Literal["exact", "lines", "tokens", "float", "lines_unordered", "sets", "program"] = "tokens"
    abs_tol: float = Field(1e-6, ge=0)
    rel_tol: float = Field(1e-6, ge=0)
    seq_lenient: bool = True
    strict_types: bool = False
    code: str | None = None
    language: LangName = "python"
    args: list[str] = Field(default_factory=list)


CheckerField = Annotated[CheckerSpec, BeforeValidator(_checker_shorthand)]


def _scalars(v: list) -> list:
    for x in v:
        if not isinstance(x, (str, int, float, bool)):
            raise ValueError("generator args must be strings or numbers")
    return v


def _sha256_json(obj: Any) -> str:
    return hashlib.sha256(_canonical_json(obj).encode("utf-8")).hexdigest()


def _canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class GeneratorSpec(_Model):
    """A program whose stdout is a test's stdin (run by codegym.judge.testgen, which caches by
    `content_hash`).

    code      the generator's source (YAML may give `file: rel/path` instead)
    language  its language (default python)
    seed      integer seed; by convention the generator gets ``argv = [str(seed), *args]``
              (see `argv()`), so equal specs give equal inputs
    args      further arguments (strings or numbers), e.g. sizes
    """

    code: str
    language: LangName = "python"
    seed: int = 0
    args: Annotated[list[Any], AfterValidator(_scalars)] = Field(default_factory=list)

    def argv(self) -> list[str]:
        """Arguments the generator program is run with: the seed, then `args`."""
        return [str(self.seed), *(str(a) for a in self.args)]

    @functools.cached_property
    def content_hash(self) -> str:
        """sha256 of (code, language, seed, args): the cache key of the generated input."""
        return _sha256_json({"schema": "codegym.generator/1", "code": self.code,
                             "language": self.language, "seed": self.seed,
                             "args": [str(a) for a in self.args]})


class TestCase(_Model):
    """One test. Which input fields apply depends on the task's kind:

    stdio     stdin (YAML may give stdin_file) or generator; expected (or expected_file):
              the expected stdout. Omitted means "computed by running the reference solution".
    function  args (list), kwargs (mapping), expected (any JSON value; omitted means
              computed by the reference solution). An explicit ``expected: null`` is kept.
    script    code: test code run after the candidate's code (assert-style; passes when
              it exits cleanly)
    repo      command: argv to run in the repository; tests: test ids it must pass
    any kind  name, weight (score of the case, default 1), checker (overrides the task's),
              time_s (overrides limits.time_s for this case)
    """

    __test__ = False  # not a pytest test class despite the name

    name: str | None = None
    weight: float = Field(1.0, ge=0)
    checker: CheckerField | None = None
    time_s: float | None = Field(None, gt=0)
    stdin: str | None = None
    generator: GeneratorSpec | None = None
    expected: Any = None
    args: list[Any] | None = None
    kwargs: dict[str, Any] | None = None
    code: str | None = None
    command: list[str] | None = None
    tests: list[str] | None = None

    @property
    def has_expected(self) -> bool:
        """True when the expected output/value is given (False: computed by the reference)."""
        return "expected" in self.model_fields_set

    @property
    def is_generated(self) -> bool:
        return self.generator is not None

    @property
    def call_args(self) -> list[Any]:
        return list(self.args or [])

    @property
    def call_kwargs(self) -> dict[str, Any]:
        return dict(self.kwargs or {})

    @model_serializer(mode="wrap")
    def _keep_expected_given(self, handler, info):
        # "expected omitted" and "expected: null" differ (null is a legal return value),
        # so dumps (and hence content hashes and YAML round trips) keep the difference,
        # even when defaults are left out.
        d = handler(self)
        if isinstance(d, dict):
            if not self.has_expected:
                d.pop("expected", None)
            elif "expected" not in d and info.exclude_defaults and self.expected is None:
                d["expected"] = None
        return d


class TestSplits(_Model):
    """Test cases by split: `public` (shown as feedback), `hidden` (decide correctness),
    `perf` (timed). In YAML a split may also be ``{glob: "dir/*.in", expected_ext: ".out"}``."""

    __test__ = False

    public: list[TestCase] = Field(default_factory=list)
    hidden: list[TestCase] = Field(default_factory=list)
    perf: list[TestCase] = Field(default_factory=list)


class PerfSpec(_Model):
    """Performance settings (used by codegym.timing.measurement / the timed rewards).

    baseline   name of the slow-but-correct solution; None (default) means the starter files
    reference  name of the fast (expert) solution (default "reference"); it also computes
               omitted expected outputs
    repeats    measurement repeats (timing may add more to reach its target precision)
    warmups    untimed runs before measuring
    metric     cpu (child CPU seconds) | wall | instructions (valgrind, compiled languages)
    runtimes   recorded runtimes in seconds by solution name (filled by `tasks calibrate`)
    """

    baseline: str | None = None
    reference: str = "reference"
    repeats: int = Field(5, ge=1)
    warmups: int = Field(1, ge=0)
    metric: Literal["cpu", "wall", "instructions"] = "cpu"
    runtimes: dict[str, Annotated[float, Field(ge=0)]] = Field(default_factory=dict)


class Solution(_Model):
    """A known program for the task.

    language     its language (default: the task's language)
    files        {path: text}; YAML may give {file: rel/path} as a value
    expect       the verdict the judge must give it (checked by `codegym tasks validate
                 --oracle`): "accepted" (default) means on every split; any other verdict
                 is the one of the first split (public, hidden, perf) it fails -- e.g.
                 wrong_answer for a deliberately broken variant used in tests
    description  free text
    """

    language: LangName | None = None
    files: dict[str, str] = Field(min_length=1)
    expect: Literal["accepted", "wrong_answer", "runtime_error", "timeout", "memory_limit",
                    "output_limit", "compile_error"] = "accepted"
    description: str | None = None


class Metadata(_Model):
    """Where the task comes from and how to select it.

    source        origin ("original", "leetcode-contest", ...)
    licence       licence of the task text and tests
    difficulty    free-form label (easy / medium / hard, a rating ...)
    tags          list of labels (Suite.filter(tags=...))
    release_date  YYYY-MM-DD (Suite.filter(since=..., until=...), e.g. contamination windows)
    url, authors  provenance
    extra         anything else an importer wants to keep
    """

    source: str | None = None
    licence: str | None = None
    difficulty: str | None = None
    tags: list[str] = Field(default_factory=list)
    release_date: date | None = None
    url: str | None = None
    authors: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)


class RepoSpec(_Model):
    """Repository of a `repo` (SWE-style) task; provisional, extended with that kind.

    url     git URL;  commit  the base commit;  image  container image to run tests in
    dockerfile  the text of a Dockerfile for that image instead (its dependencies); the
            docker backend builds it once per content hash, without network (``FROM`` a
            local image such as ``codegym/python:3.11``: the runner needs a python3)
    setup   shell commands run once after checkout
    """

    url: str
    commit: str | None = None
    image: str | None = None
    dockerfile: str | None = None
    setup: list[str] = Field(default_factory=list)


_ID_RE = r"^[A-Za-z0-9][A-Za-z0-9_.+\-]*(/[A-Za-z0-9_.+\-]+)*$"


class Task(_Model):
    """One coding task, fully resolved (sibling files inlined) and immutable.

    Fields (YAML keys):
      id           unique in its suite, "<suite>/<name>" (default from the file's path)
      version      integer, bump when the task changes meaning
      title        one line (default: the id)
      statement    markdown shown to the agent
      kind         stdio | function | script | repo
      language     language of the starter, and of function / script tasks
      languages    accepted languages; None means every registered language (stdio) or
                   just `language` (other kinds) -- see `accepted_languages()`
      entry_point  function kind: name of the callable ("Class.method" allowed)
      main_file    the file the program starts from (default: the language's main file)
      starter      {path: text} the agent starts from
      tests        TestSplits (public / hidden / perf)
      checker      default CheckerSpec of the cases (tokens; exact for function tasks)
      limits       codegym.core.limits.Limits (YAML: a mapping of its fields)
      perf         PerfSpec
      solutions    {name: Solution}; conventionally "reference" (fast) and "baseline" (slow)
      metadata     Metadata
      repo         RepoSpec for repo tasks
    Not in YAML: source_path (the file it was loaded from; not part of the hash).
    """

    id: str = Field(pattern=_ID_RE)
    version: int = Field(1, ge=0)
    title: str = ""
    statement: str
    kind: Literal["stdio", "function", "script", "repo"] = "stdio"
    language: LangName = "python"
    languages: list[LangName] | None = Field(None, min_length=1)
    entry_point: str | None = None
    main_file: str | None = None
    starter: dict[str, str] = Field(default_factory=dict)
    tests: TestSplits = Field(default_factory=TestSplits)
    checker: CheckerField = Field(default_factory=CheckerSpec)
    limits: LimitsField = Field(default_factory=Limits)  # type: ignore[assignment]
    perf: PerfSpec = Field(default_factory=PerfSpec)
    solutions: dict[str, Solution] = Field(default_factory=dict)
    metadata: Metadata = Field(default_factory=Metadata)
    repo: RepoSpec | None = None
    source_path: str | None = Field(None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _defaults_and_checks(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return data
        # The loader runs the same checks itself, to give each its own path and line.
        if not (info.context or {}).get("codegym_loader"):
            problems = _semantic_errors(data)
            if problems:
                raise ValueError("; ".join(f"{format_path(p)}: {m}" if p else m
                                           for p, m, _ in problems))
        return _fill_defaults(data)

    # ---- identity

    @functools.cached_property
    def content_hash(self) -> str:
        """sha256 hex of the canonical JSON of the resolved task (everything but source_path)."""
        return _sha256_json(self.model_dump(mode="json"))

    @property
    def key(self) -> str:
        """``"<id>@<version>:<first 12 hex of content_hash>"``: names this exact task."""
        return f"{self.id}@{self.version}:{self.content_hash[:12]}"

    def __hash__(self) -> int:
        return hash(self.content_hash)

    # ---- convenience

    @property
    def tags(self) -> list[str]:
        return list(self.metadata.tags)

    @property
    def difficulty(self) -> str | None:
        return self.metadata.difficulty

    def accepted_languages(self) -> list[str]:
        """Languages a submission may be in (resolved now for stdio tasks without `languages`)."""
        if self.languages is not None:
            return list(self.languages)
        if self.kind == "stdio":
            langs = known_languages()
            return langs if self.language in langs else [self.language, *langs]
        return [self.language]

    def main_file_for(self, language: str | None = None) -> str | None:
        """Main file for a submission in `language` (the task's main_file for its own language)."""
        lang = canonical_language(language) if language else self.language
        if lang is None or lang == self.language:
            return self.main_file
        return language_main_file(lang)

    def starter_files(self) -> dict[str, str]:
        """A copy of the starter files ({path: text})."""
        return dict(self.starter)

    def solution(self, name: str) -> Solution:
        """The named solution; KeyError listing the known names if absent."""
        try:
            return self.solutions[name]
        except KeyError:
            raise KeyError(f"task {self.id} has no solution {name!r} "
                           f"(has: {', '.join(self.solutions) or 'none'})") from None

    @property
    def reference_name(self) -> str | None:
        """Name of the reference solution, None when the task has none."""
        return self.perf.reference if self.perf.reference in self.solutions else None

    @property
    def baseline_name(self) -> str | None:
        """Name of the baseline solution; None when the baseline is the starter."""
        b = self.perf.baseline
        return b if b and b != "starter" else None

    def baseline_files(self) -> tuple[str, dict[str, str]]:
        """(language, files) of the baseline: the named solution, else the starter."""
        name = self.baseline_name
        if name is not None:
            sol = self.solution(name)
            return sol.language or self.language, dict(sol.files)
        return self.language, self.starter_files()

    def cases(self, split: str) -> list[TestCase]:
        """The cases of one split ("public", "hidden" or "perf")."""
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
        return list(getattr(self.tests, split))

    def checker_for(self, case: TestCase) -> CheckerSpec:
        """The case's own checker, else the task's."""
        return case.checker or self.checker

    def limits_for(self, case: TestCase) -> Limits:
        """The task's limits with the case's time_s override applied."""
        return self.limits.replace(time_s=case.time_s) if case.time_s else self.limits

    def generator_hash(self, spec: GeneratorSpec | TestCase) -> str:
        """Stable content hash of a generator spec (source text, language, seed, args):
        the cache key of the input it generates."""
        gen = spec.generator if isinstance(spec, TestCase) else spec
        if gen is None:
            raise ValueError("test case has no generator")
        return gen.content_hash

    def solution_hash(self, name: str) -> str:
        """sha256 of one solution (language and files)."""
        sol = self.solution(name)
        return _sha256_json({"language": sol.language or self.language, "files": sol.files})

    def expected_key(self, case: TestCase) -> str | None:
        """Cache key of an expected output computed by the reference solution: hash of the
        case's input and of the reference. None when the case gives `expected` or there is
        no reference."""
        ref = self.reference_name
        if case.has_expected or ref is None:
            return None
        if case.generator is not None:
            inp: Any = {"generator": case.generator.content_hash}
        elif self.kind == "function":
            inp = {"args": case.args or [], "kwargs": case.kwargs or {}}
        else:
            inp = {"stdin": case.stdin}
        return _sha256_json({"schema": "codegym.expected/1", "input": inp,
                             "reference": self.solution_hash(ref), "entry_point": self.entry_point,
                             "kind": self.kind})

    # ---- writing

    def to_yaml_dict(self) -> dict[str, Any]:
        """A mapping that `load_task` turns back into an equal task (defaults left out)."""
        d = self.model_dump(mode="json", exclude_defaults=True)
        d["id"] = self.id
        d["statement"] = self.statement
        return d

    def to_yaml(self) -> str:
        """YAML text of `to_yaml_dict()`, multi-line strings as literal blocks."""
        return yaml.dump(self.to_yaml_dict(), Dumper=_BlockDumper, sort_keys=False,
                         allow_unicode=True, width=100)


class _BlockDumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, s: str):
    style = "|" if "\n" in s else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=style)


_BlockDumper.add_representer(str, _str_representer)


# --------------------------------------------------------------------------- defaults & checks


def _fill_defaults(data: dict) -> dict:
    """Kind- and language-dependent defaults (a copy; the input is not modified)."""
    d = dict(data)
    kind = d.get("kind") or "stdio"
    lang = d.get("language") or "python"
    if d.get("checker") is None:
        d["checker"] = {"type": "exact" if kind == "function" else "tokens"}
    if not d.get("main_file") and kind != "repo" and isinstance(lang, str):
        main = language_main_file(lang)
        if main:
            d["main_file"] = main
    if not d.get("title") and isinstance(d.get("id"), str):
        d["title"] = d["id"]
    sols = d.get("solutions")
    if isinstance(sols, dict):
        d["solutions"] = {k: ({**v, "language": lang} if isinstance(v, dict) and not v.get("language")
                              else v) for k, v in sols.items()}
    return d


#: test-case keys that belong to one kind's input form
_FORM_FIELDS = {
    "stdio": ("stdin", "stdin_file", "generator", "expected", "expected_file"),
    "function": ("args", "kwargs", "expected"),
    "script": ("code",),
    "repo": ("command", "tests"),
}
_FORM_HINT = {"stdio": "stdin/stdin_file/generator and expected", "function": "args/kwargs and expected",
              "script": "code", "repo": "command and tests"}


def _semantic_errors(d: dict) -> list[tuple[Loc, str, Loc | None]]:
    """Checks the schema cannot express, on the merged YAML mapping (tolerant of wrong
    types: those are the schema's to report). Each problem: (path, message, path whose
    line to report or None for `path`)."""
    out: list[tuple[Loc, str, Loc | None]] = []
    kind = d.get("kind", "stdio")
    kind = kind if kind in KINDS else None
    lang = d.get("language", "python")

    def check_lang(value: Any, loc: Loc) -> str | None:
        if not isinstance(value, str):
            return None
        canon = canonical_language(value)
        if canon is None:
            out.append((loc, f"unknown language {value!r}; known: {', '.join(known_languages())}", None))
        return canon

    canon_lang = check_lang(lang, ("language",))
    langs = d.get("languages")
    canon_langs: list[str] = []
    if isinstance(langs, list):
        for i, x in enumerate(langs):
            c = check_lang(x, ("languages", i))
            if c:
                canon_langs.append(c)
        if canon_lang and canon_langs and canon_lang not in canon_langs:
            out.append((("languages",), f"does not include the task's language {canon_lang!r}", None))

    entry = d.get("entry_point")
    if kind == "function" and not entry:
        out.append((("entry_point",), "required for function tasks (the name of the callable)",
                    ("kind",)))
    if kind in ("stdio", "repo") and entry:
        out.append((("entry_point",), f"only function and script tasks have an entry point "
                                      f"(this task is {kind})", None))

    sols = d.get("solutions") if isinstance(d.get("solutions"), dict) else {}
    perf = d.get("perf") if isinstance(d.get("perf"), dict) else {}
    ref_name = perf.get("reference", "reference")
    has_ref = isinstance(ref_name, str) and ref_name in sols

    tests = d.get("tests") if isinstance(d.get("tests"), dict) else {}
    if kind is not None:
        for split, cases in tests.items():
            if not isinstance(cases, list):
                continue
            names: dict[str, int] = {}
            for i, case in enumerate(cases):
                if not isinstance(case, dict):
                    continue
                out.extend(_case_errors(case, ("tests", split, i), kind, has_ref, ref_name))
                nm = case.get("name")
                if isinstance(nm, str):
                    if nm in names:
                        out.append((("tests", split, i, "name"),
                                    f"duplicate case name {nm!r} (also case {names[nm]})", None))
                    else:
                        names[nm] = i

    # Solutions: known language, a main file to start from.
    main_file = d.get("main_file")
    for name, sol in sols.items():
        if not isinstance(sol, dict):
            continue
        sl = sol.get("language") or lang
        c = check_lang(sol.get("language"), ("solutions", name, "language")) if sol.get("language") \
            else canon_lang
        files = sol.get("files")
        if c and isinstance(files, dict) and files and kind != "repo":
            want = main_file if (c == canon_lang and main_file) else language_main_file(c)
            if want and want not in files:
                out.append((("solutions", name, "files"),
                            f"has no {want} (the main file of {sl})", None))
        if c and canon_langs and c not in canon_langs:
            out.append((("solutions", name, "language"),
                        f"{c!r} is not one of the task's languages", None))
    starter = d.get("starter")
    if isinstance(starter, dict) and starter and kind != "repo" and canon_lang:
        want = main_file or language_main_file(canon_lang)
        if want and want not in starter:
            out.append((("starter",), f"has no {want} (the main file)", None))

    # Perf: the solutions it names must exist.
    perf_given = isinstance(d.get("perf"), dict)
    perf_cases = tests.get("perf") if isinstance(tests.get("perf"), list) else []
    if perf_given and "reference" in perf and isinstance(ref_name, str) and not has_ref:
        out.append((("perf", "reference"), f"names a missing solution {ref_name!r} "
                                           f"(solutions: {', '.join(map(str, sols)) or 'none'})", None))
    elif perf_cases and not has_ref:
        out.append((("tests", "perf"), f"perf tests need a reference solution; there is no "
                                       f"solution named {ref_name!r}", None))
    base = perf.get("baseline")
    if isinstance(base, str) and base != "starter" and base not in sols:
        out.append((("perf", "baseline"), f"names a missing solution {base!r} "
                                          f"(solutions: {', '.join(map(str, sols)) or 'none'})", None))
    if perf_cases and base in (None, "starter") and not (isinstance(starter, dict) and starter):
        out.append((("perf", "baseline"), "perf tests need a baseline: name a solution here "
                                          "or give starter files", ("tests", "perf")))

    # Checkers and generators in other languages must be runnable.
    chk = d.get("checker")
    if isinstance(chk, dict):
        out.extend(_checker_errors(chk, ("checker",), check_lang))
    return out


def _checker_errors(chk: dict, loc: Loc, check_lang) -> list[tuple[Loc, str, Loc | None]]:
    out: list[tuple[Loc, str, Loc | None]] = []
    if chk.get("type") == "program":
        if chk.get("code") is None and "file" not in chk:
            out.append((loc, "a program checker needs code or file", None))
        if "language" in chk:
            check_lang(chk["language"], loc + ("language",))
    return out


def _case_errors(case: dict, loc: Loc, kind: str, has_ref: bool,
                 ref_name: Any) -> list[tuple[Loc, str, Loc | None]]:
    out: list[tuple[Loc, str, Loc | None]] = []
    own = _FORM_FIELDS[kind]
    for key in case:
        for other, fields in _FORM_FIELDS.items():
            if other != kind and key in fields and key not in own:
                out.append((loc + (key,), f"not a field of {kind} test cases "
                                          f"(those use {_FORM_HINT[kind]})", None))
                break
    computable = (f"no expected output and no reference solution to compute it "
                  f"(no solution named {ref_name!r})")
    if kind == "stdio":
        has_in = "stdin" in case or "stdin_file" in case
        if "generator" in case and has_in:
            out.append((loc + ("generator",), "give either stdin or generator, not both", None))
        elif not has_in and "generator" not in case:
            out.append((loc, "needs stdin, stdin_file or generator", None))
        if "expected" in case and not isinstance(case["expected"], str):
            out.append((loc + ("expected",), "expected string (quote numbers in YAML so that "
                                             "they keep their exact text)", None))
        elif "expected" not in case and "expected_file" not in case and not has_ref:
            out.append((loc, computable, None))
    elif kind == "function":
        if "expected" not in case and not has_ref:
            out.append((loc, computable, None))
    elif kind == "script":
        if "code" not in case:
            out.append((loc, "needs code (the test code run after the candidate's)", None))
    elif kind == "repo":
        if "command" not in case:
            out.append((loc, "needs command (argv of the test command)", None))
    if isinstance(case.get("generator"), dict) and "language" in case["generator"]:
        lang = case["generator"]["language"]
        if isinstance(lang, str) and canonical_language(lang) is None:
            out.append((loc + ("generator", "language"), f"unknown language {lang!r}", None))
    if isinstance(case.get("checker"), dict):
        def check_lang(value: Any, at: Loc) -> None:
            if isinstance(value, str) and canonical_language(value) is None:
                out.append((at, f"unknown language {value!r}", None))
        out.extend(_checker_errors(case["checker"], loc + ("checker",), check_lang))
    return out


# --------------------------------------------------------------------------- pydantic errors

_SIMPLE_MESSAGES = {
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

#: keys the loader consumes before the schema sees them (offered as suggestions too)
_LOADER_KEYS: dict[type, tuple[str, ...]] = {
    TestCase: ("stdin_file", "expected_file"), CheckerSpec: ("file",), GeneratorSpec: ("file",)}


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


def _model_at(loc: Loc) -> Any:
    """The schema type at a path of the task mapping (for "did you mean" suggestions)."""
    tp: Any = Task
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


def _unknown_field_message(loc: Loc) -> str:
    key = loc[-1]
    model = _model_at(loc[:-1])
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return f"unknown field {key!r}"
    names = [n for n, f in model.model_fields.items() if not f.exclude]
    names += list(_LOADER_KEYS.get(model, ()))
    close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
    if close:
        return f"unknown field {key!r} (did you mean {close[0]!r}?)"
    return f"unknown field {key!r}; allowed: {', '.join(names)}"


def _pydantic_message(e: dict) -> str:
    t = e["type"]
    ctx = e.get("ctx") or {}
    loc = tuple(e["loc"])
    if t == "extra_forbidden":
        return _unknown_field_message(loc)
    if t in _SIMPLE_MESSAGES:
        return _SIMPLE_MESSAGES[t]
    if t == "literal_error":
        return f"expected one of {ctx.get('expected')}"
    if t == "greater_than":
        return f"must be > {ctx.get('gt')}"
    if t == "greater_than_equal":
        return f"must be >= {ctx.get('ge')}"
    if t == "less_than":
        return f"must be < {ctx.get('lt')}"
    if t == "less_than_equal":
        return f"must be <= {ctx.get('le')}"
    if t == "too_short":
        return f"needs at least {ctx.get('min_length')} item(s)"
    if t == "string_pattern_mismatch":
        if loc == ("id",):
            return "ids are '<suite>/<name>': letters, digits, '_', '-', '.', '+' separated by '/'"
        return f"does not match {ctx.get('pattern')}"
    if t in ("value_error", "assertion_error"):
        err = ctx.get("error")
        return str(err) if err is not None else e["msg"]
    return e["msg"]


# --------------------------------------------------------------------------- loading


def find_suite_file(task_file: Path) -> Path | None:
    """The suite.yaml that applies to a task file: the nearest one in its directory or an
    ancestor, not looking above a tasks root (a directory named ``tasks`` / ``_tasks``, or
    one holding ``pyproject.toml`` or ``.git``)."""
    d = task_file.resolve().parent
    while True:
        cand = d / SUITE_FILE
        if cand.is_file():
            return cand
        parent = d.parent
        if (parent == d or parent.name in ("tasks", "_tasks")
                or any((d / m).exists() for m in ("pyproject.toml", ".git"))
                or any((parent / m).exists() for m in ("pyproject.toml", ".git"))):
            return None
        d = parent


class _SuiteDefaults(NamedTuple):
    doc: _Doc
    defaults: dict
    meta: dict


_CACHE_LOCK = threading.Lock()
_TASK_CACHE: dict[tuple[Path, str], tuple[tuple, Task]] = {}
_SUITE_CACHE: dict[Path, tuple[tuple, _SuiteDefaults]] = {}


def _signature(paths: Iterable[Path]) -> tuple:
    sig = []
    for p in dict.fromkeys(paths):
        try:
            st = p.stat()
            sig.append((str(p), st.st_mtime_ns, st.st_size))
        except OSError:
            sig.append((str(p), None, None))
    return tuple(sig)


def _display(path: Path) -> str:
    """A path as users typed it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def read_suite_file(path: Path) -> _SuiteDefaults:
    """Parse a suite.yaml: (doc with its errors, defaults merged under tasks, the `suite:`
    description block). Cached by modification time."""
    path = Path(path).resolve()
    with _CACHE_LOCK:
        hit = _SUITE_CACHE.get(path)
    if hit is not None and hit[0] == _signature(hit[1].doc.deps):
        return hit[1]
    doc = _Doc(path, _display(path))
    defaults: dict = {}
    meta: dict = {}
    if doc.load():
        if doc.data is None:
            doc.data = {}
        if not isinstance(doc.data, dict):
            doc.err((), "suite.yaml must be a mapping of default task fields")
        else:
            doc.resolve_files()
            defaults = dict(doc.data)
            raw_meta = defaults.pop(SUITE_META_KEY, None) or {}
            if not isinstance(raw_meta, dict):
                doc.err((SUITE_META_KEY,), "expected mapping (e.g. {description: ...})")
            else:
                meta = raw_meta
                for k in meta:
                    if k not in ("description", "name", "reward"):
                        doc.err((SUITE_META_KEY, k),
                                f"unknown field {k!r}; allowed: description, name, reward")
            if "id" in defaults:
                doc.err(("id",), "a suite cannot give a default id (ids must be unique)")
                defaults.pop("id")
    result = _SuiteDefaults(doc, defaults, meta)
    with _CACHE_LOCK:
        _SUITE_CACHE[path] = (_signature(doc.deps), result)
    return result


def _is_tasks_root(d: Path) -> bool:
    if d.name in ("tasks", "_tasks"):
        return True
    env = os.environ.get("CODEGYM_TASKS", "")
    return any(p and Path(p).expanduser().resolve() == d for p in env.split(os.pathsep))


def suite_root(task_file: Path, suite_file: Path | None = None) -> Path:
    """The suite folder of a task file: where its suite.yaml is, else the folder directly
    under a tasks root (``tasks/``, ``_tasks/`` or a CODEGYM_TASKS entry) that holds it,
    else the file's own folder."""
    task_file = task_file.resolve()
    if suite_file is not None:
        return suite_file.resolve().parent
    d = task_file.parent
    while d.parent != d:
        if _is_tasks_root(d.parent):
            return d
        if any((d / m).exists() for m in ("pyproject.toml", ".git")):
            break
        d = d.parent
    return task_file.parent


def default_task_id(task_file: Path, suite_file: Path | None) -> str:
    """``<suite folder>/<path of the file inside the suite, without .yaml>``."""
    task_file = task_file.resolve()
    root = suite_root(task_file, suite_file)
    rel = task_file.relative_to(root).with_suffix("").as_posix()
    return f"{root.name}/{rel}"


def load_task(path: str | os.PathLike) -> Task:
    """Load, merge with its suite.yaml, inline sibling files and validate one task file.

    Raises TaskValidationError listing every problem as ``file:line: path: message``.
    Results are cached until any file the task was built from changes.
    """
    path = Path(path)
    if path.is_dir():
        raise TaskValidationError([TaskError(_display(path), 1, "", "is a directory; "
                                             "use codegym.load_suite for a suite")])
    # Default ids depend on CODEGYM_TASKS (see suite_root), so it is part of the key.
    key = (path.resolve(), os.environ.get("CODEGYM_TASKS", ""))
    with _CACHE_LOCK:
        hit = _TASK_CACHE.get(key)
    if hit is not None and _same_signature(hit[0]):
        return hit[1]
    task, deps = _load_uncached(path)
    with _CACHE_LOCK:
        _TASK_CACHE[key] = (_signature(deps), task)
    return task


def _same_signature(sig: tuple) -> bool:
    return _signature(Path(p) for p, *_ in sig) == sig


def _load_uncached(path: Path) -> tuple[Task, list[Path]]:
    doc = _Doc(path.resolve(), _display(path))
    if not doc.load():
        raise TaskValidationError(doc.errors)
    if not isinstance(doc.data, dict):
        doc.err((), "a task file must be a mapping of task fields")
        raise TaskValidationError(doc.errors)
    if path.name == SUITE_FILE:
        doc.err((), "suite.yaml holds suite defaults, not a task")
        raise TaskValidationError(doc.errors)
    doc.resolve_files()

    suite_file = find_suite_file(path)
    # Candidate suite.yaml locations are dependencies too: creating one changes the task.
    deps = list(doc.deps) + [path.resolve().parent / SUITE_FILE]
    docs = [doc]
    defaults: dict = {}
    errors = list(doc.errors)
    if suite_file is not None:
        sd = read_suite_file(suite_file)
        docs.append(sd.doc)
        deps += sd.doc.deps
        errors += sd.doc.errors
        defaults = copy.deepcopy(sd.defaults)
    merged = _deep_merge(defaults, copy.deepcopy(doc.data))
    if "id" not in doc.data:
        merged["id"] = default_task_id(path, suite_file)

    def locate(loc: Loc) -> tuple[str, int]:
        best: tuple[int, _Doc] | None = None
        for dd in docs:  # longest known prefix wins; the task file wins ties
            for i in range(len(loc), -1, -1):
                if loc[:i] in dd.lines:
                    if best is None or i > best[0]:
                        best = (i, dd)
                    break
        assert best is not None
        return best[1].display, best[1].lines[loc[:best[0]]]

    for loc, msg, at in _semantic_errors(merged):
        f, line = locate(at if at is not None else loc)
        errors.append(TaskError(f, line, format_path(loc), msg))
    task = None
    try:
        task = Task.model_validate({**merged, "source_path": str(path)},
                                   context={"codegym_loader": True})
    except ValidationError as exc:
        for e in exc.errors(include_url=False):
            loc = tuple(e["loc"])
            f, line = locate(loc)
            errors.append(TaskError(f, line, format_path(loc), _pydantic_message(e)))
    if errors or task is None:
        errors.sort(key=lambda e: (e.file != doc.display, e.file, e.line))
        raise TaskValidationError(errors)
    return task, deps

