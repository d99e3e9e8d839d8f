"""The task schema: the pydantic models of one coding task, frozen once loaded.

`Task` and its parts (`TestCase`, `TestSplits`, `CheckerSpec`, `GeneratorSpec`,
`PerfSpec`, `Solution`, `Metadata`, `RepoSpec`); `Task.limits` is a
`codegym.core.limits.Limits` (re-exported here). Reading files is
`codegym.tasks.load`'s, the checks across fields are `codegym.tasks.checks`'s;
nothing here runs a program (generators run in `codegym.judge.testgen`, checkers
in `codegym.judge.checkers`). The YAML layout is described in docs/tasks.md.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from codegym.core.limits import Limits
from codegym.core.yamldoc import dump_yaml, format_path
from codegym.tasks.checks import fill_defaults, semantic_errors
from codegym.tasks.fields import (
    SPLITS,
    CheckerType,
    ExpectedVerdict,
    Kind,
    canonical_language,
    known_languages,
    language_main_file,
)


def _canon_or_keep(name: str) -> str:
    # Unknown names are kept so that the semantic check can report them with a line.
    return canonical_language(name) or name


LangName = Annotated[str, AfterValidator(_canon_or_keep)]


# --------------------------------------------------------------------------- models


class _Model(BaseModel):
    # extra="forbid": a misspelt key is an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid", frozen=True)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """As BaseModel.model_copy, but cached hashes are recomputed for the copy
        (pydantic copies ``__dict__``, where functools.cached_property keeps them)."""
        new = super().model_copy(update=update, deep=deep)
        for name in _cached_names(type(self)):
            new.__dict__.pop(name, None)
        return new


@functools.cache
def _cached_names(cls: type) -> tuple[str, ...]:
    return tuple(n for n in dir(cls) if isinstance(getattr(cls, n, None), functools.cached_property))


class _LimitsModel(_Model):
    """The YAML form of `codegym.core.limits.Limits` (every field optional, same names)."""

    time_s: float = Field(default=Limits.time_s, gt=0)
    wall_s: float | None = Field(default=None, gt=0)
    memory_mb: int = Field(default=Limits.memory_mb, gt=0)
    output_bytes: int = Field(default=Limits.output_bytes, gt=0)
    processes: int = Field(default=Limits.processes, ge=0)
    file_size_mb: int = Field(default=Limits.file_size_mb, ge=0)
    open_files: int = Field(default=Limits.open_files, gt=0)
    disk_mb: int = Field(default=Limits.disk_mb, gt=0)
    wall_factor: float = Field(default=Limits.wall_factor, gt=0)


def _limits_in(v: Any) -> Any:
    return dataclasses.asdict(v) if isinstance(v, Limits) else v


def _limits_out(m: Any) -> Any:
    return Limits(**m.model_dump()) if isinstance(m, _LimitsModel) else m


#: validated as `_LimitsModel` (so errors name the field), held and dumped as `Limits`
#: (which is what a type checker is told the field holds)
if TYPE_CHECKING:
    LimitsField = Limits
else:
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
             decimal_lines -- LiveCodeBench's stdin rule: stripped lines, equal or equal as decimals
             evalplus -- function tasks: EvalPlus's rule (``==``, else atol/allclose; `args`:
                       [special oracle]); see docs/importers.md
    abs_tol, rel_tol  tolerances of `float` (and `evalplus`: atol, rtol)
    seq_lenient   function tasks: a list equals a tuple with the same items (default true;
                  "top": only a returned tuple equals a list, as LiveCodeBench compares)
    strict_types  function tasks: 1 != 1.0 and True != 1 (default false: Python equality)
    code     source of a `program` checker (YAML may give `file: rel/path` instead)
    language language of a `program` checker (default python)
    args     extra argv for a `program` checker

    A bare string in YAML (``checker: tokens``) means ``{type: tokens}``.
    """

    type: CheckerType = "tokens"
    abs_tol: float = Field(default=1e-6, ge=0)
    rel_tol: float = Field(default=1e-6, ge=0)
    seq_lenient: bool | Literal["top"] = True
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
    weight: float = Field(default=1.0, ge=0)
    checker: CheckerField | None = None
    time_s: float | None = Field(default=None, gt=0)
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


#: the name of the starter files as a solution: the baseline when ``perf.baseline`` names none
STARTER = "starter"


class PerfSpec(_Model):
    """Performance settings (used by codegym.timing.measurement / the timed rewards).

    baseline   name of the slow-but-correct solution; None (default) means the starter files
    reference  name of the fast (expert) solution (default "reference"); it also computes
               omitted expected outputs
    repeats    measurement repeats (timing may add more to reach its target precision)
    warmups    untimed runs before measuring
    metric     cpu (child CPU seconds) | wall | instructions (valgrind: C, C++ and Python; docs/timing.md)
    runtimes   recorded runtimes in seconds by solution name (filled by `tasks calibrate`)
    """

    baseline: str | None = None
    reference: str = "reference"
    repeats: int = Field(default=5, ge=1)
    warmups: int = Field(default=1, ge=0)
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
    expect: ExpectedVerdict = "accepted"
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
      preamble     Python source the judge runs in the program's namespace before its
                   code: a benchmark harness's import block (LiveCodeBench's, ...);
                   see docs/judge.md. None (default) is left out of dumps and hashes
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
    version: int = Field(default=1, ge=0)
    title: str = ""
    statement: str
    kind: Kind = "stdio"
    language: LangName = "python"
    languages: list[LangName] | None = Field(default=None, min_length=1)
    entry_point: str | None = None
    main_file: str | None = None
    preamble: str | None = None
    starter: dict[str, str] = Field(default_factory=dict)
    tests: TestSplits = Field(default_factory=TestSplits)
    checker: CheckerField = Field(default_factory=CheckerSpec)
    limits: LimitsField = Field(default_factory=Limits)
    perf: PerfSpec = Field(default_factory=PerfSpec)
    solutions: dict[str, Solution] = Field(default_factory=dict)
    metadata: Metadata = Field(default_factory=Metadata)
    repo: RepoSpec | None = None
    source_path: str | None = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _defaults_and_checks(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return data
        # The loader runs the same checks itself, to give each its own path and line.
        if not (info.context or {}).get("codegym_loader"):
            problems = semantic_errors(data)
            if problems:
                raise ValueError("; ".join(f"{format_path(p)}: {m}" if p else m
                                           for p, m, _ in problems))
        return fill_defaults(data)

    @model_serializer(mode="wrap")
    def _drop_unset_preamble(self, handler, info):
        # the field came after many tasks were hashed: leaving None out keeps their hashes
        d = handler(self)
        if isinstance(d, dict) and self.preamble is None:
            d.pop("preamble", None)
        return d

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
    def baseline_name(self) -> str:
        """Name of the baseline: ``perf.baseline``, or `STARTER` when it names none (the
        key of the baseline's recorded runtimes either way)."""
        return self.perf.baseline or STARTER

    @property
    def baseline_is_starter(self) -> bool:
        """Whether the baseline is the starter files (no solution of the baseline's name)."""
        return self.baseline_name == STARTER and STARTER not in self.solutions

    def baseline_files(self) -> tuple[str, dict[str, str]]:
        """(language, files) of the baseline: the named solution, else the starter."""
        if self.baseline_is_starter:
            return self.language, self.starter_files()
        sol = self.solution(self.baseline_name)
        return sol.language or self.language, dict(sol.files)

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
        key: dict[str, Any] = {"schema": "codegym.expected/1", "input": inp,
                               "reference": self.solution_hash(ref), "entry_point": self.entry_point,
                               "kind": self.kind}
        if self.preamble is not None:   # the reference runs after it
            key["preamble"] = self.preamble
        return _sha256_json(key)

    # ---- writing

    def to_yaml_dict(self) -> dict[str, Any]:
        """A mapping that `load_task` turns back into an equal task (defaults left out)."""
        d = self.model_dump(mode="json", exclude_defaults=True)
        d["id"] = self.id
        d["statement"] = self.statement
        return d

    def to_yaml(self) -> str:
        """YAML text of `to_yaml_dict()`, multi-line strings as literal blocks."""
        return dump_yaml(self.to_yaml_dict())
