"""Reward wrappers declared in YAML: parse, validate, and apply them to an env.

This module owns the YAML form of a reward (`WRAPPER_TYPES`, `ALIASES`, the base rewards
`BASE_REWARDS`), its validation (errors name ``file:line: reward[i].field: problem``, as
task files do, through `codegym.core.yamldoc`), and applying it:
`parse_reward_config(entries)` -> list of `RewardSpec`; `parse_reward(value)` -> a
`RewardDeclaration` (a base reward and/or wrappers); `apply_reward_wrappers(env,
entries)` (the first entry innermost); `load_reward_config(path)` (a suite's ``suite:
{reward: ...}`` block, or a YAML file's top-level ``reward``); `suite_reward` (a suite's
declared default) and `resolve_reward` (what ``gym.make(id, reward=...)`` builds);
`wrap_for_suite(env)`. docs/rewards.md shows a declaration and the order to give it.
"""

from __future__ import annotations

import builtins
import inspect
import os
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError, create_model

from codegym.core.groups import field_names
from codegym.core.paths import display_path
from codegym.core.yamldoc import Doc, DocError, DocValidationError, format_path, pydantic_message, suggest
from codegym.tasks.fields import SUITE_FILE
from codegym.tasks.load import find_suite_file, read_suite_file
from codegym.tasks.suite import Suite, resolve_suite
from codegym.wrappers.base import env_attr
from codegym.wrappers.diff_credit import DiffCredit
from codegym.wrappers.shaping import DiffSizePenalty, FormatPenalty, ProgressShaping
from codegym.wrappers.staged import StagedReward, StageValues
from codegym.wrappers.timed import SpeedScoring, TimedReward

#: YAML type name -> wrapper class
WRAPPER_TYPES: dict[str, type] = {
    "staged": StagedReward,
    "timed": TimedReward,
    "diff_credit": DiffCredit,
    "progress_shaping": ProgressShaping,
    "format_penalty": FormatPenalty,
    "diff_size_penalty": DiffSizePenalty,
}
ALIASES = {"rlpf": "staged", "dmc_optim": "timed", "didpo": "diff_credit", "progress": "progress_shaping",
           "protected_paths": "diff_size_penalty"}
#: key of the reward declaration (inside the `suite:` block of suite.yaml, or top level)
REWARD_KEY = "reward"
#: the env's own rewards, given without a wrapper: hidden tests passed / total, or 0/1
BASE_REWARDS = ("pass_fraction", "binary")
#: ``reward=`` of the registered ids: the suite's declared default (`suite_reward`)
SUITE_DEFAULT = "suite"


class RewardConfigError(DocValidationError):
    """Every problem of a reward declaration (`errors`), one ``file:line: path: message`` per line."""

    @property
    def problems(self) -> list[str]:
        """The problems as text, one ``file:line: path: message`` each."""
        return [str(e) for e in self.errors]


@dataclass
class RewardSpec:
    """One declared wrapper: its type name and the constructor's keyword arguments."""

    type: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def cls(self) -> builtins.type:  # (`type` is the field above)
        return WRAPPER_TYPES[self.type]

    def apply(self, env):
        return self.cls(env, **self.kwargs)


def _model_for(cls: type[Any]):
    """A pydantic model of `cls.__init__`'s keyword arguments (after `env`)."""
    cached = _MODELS.get(cls)
    if cached is not None:
        return cached
    sig = inspect.signature(cls.__init__, eval_str=True)
    hints = typing.get_type_hints(cls.__init__)
    fields: dict[str, Any] = {}
    flat = cls.flat_options() if hasattr(cls, "flat_options") else {}
    for name, p in list(sig.parameters.items())[2:]:  # self, env
        if p.kind is inspect.Parameter.VAR_KEYWORD or (flat and name in GROUPED):
            continue  # a config gives the groups' fields one by one (`flat_options`)
        ann = hints.get(name, Any)
        default = p.default if p.default is not inspect.Parameter.empty else ...
        fields[name] = (ann, default)
    for name, (ann, default) in flat.items():
        fields.setdefault(name, (ann, default))
    model = create_model(f"{cls.__name__}Config", __config__=ConfigDict(extra="forbid", strict=False),
                         **fields)
    _MODELS[cls] = model
    return model


_MODELS: dict[type, Any] = {}
#: constructor arguments that group settings (`StageValues`, `TimedValues`, `SpeedScoring`,
#: `TimingSettings`): a config gives their fields one by one instead
GROUPED = ("values", "scoring", "timing")


def parse_reward_config(entries: Any, source: str = "<reward config>",
                        line_of: Callable[[tuple], int] | None = None,
                        prefix: tuple = (REWARD_KEY,)) -> list[RewardSpec]:
    """Validate a reward declaration (a list of ``{type: ..., **kwargs}``) into specs.

    Raises `RewardConfigError` listing every problem as ``source:line: path: message``
    (`line_of(loc)` maps a path in the document to its line; `prefix` is the path of the
    list in it)."""
    problems: list[DocError] = []

    def err(loc: tuple, msg: str) -> None:
        line = line_of(prefix + loc) if line_of else 1
        problems.append(DocError(source, line, format_path(prefix + loc), msg))

    if entries is None:
        return []
    if isinstance(entries, (Mapping, str)):  # a single entry
        entries = [entries]
    if not isinstance(entries, list):
        err((), "expected a list of wrappers ({type: ..., options...})")
        raise RewardConfigError(problems)
    specs: list[RewardSpec] = []
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            entry = {"type": entry}
        if not isinstance(entry, Mapping):
            err((i,), "expected a mapping with a `type`")
            continue
        kind = entry.get("type")
        if not isinstance(kind, str):
            err((i,), "needs `type` (one of " + ", ".join(WRAPPER_TYPES) + ")")
            continue
        name = ALIASES.get(kind, kind)
        cls = WRAPPER_TYPES.get(name)
        if cls is None:
            hint = suggest(kind, list(WRAPPER_TYPES) + list(ALIASES), listed=WRAPPER_TYPES)
            err((i, "type"), f"unknown reward wrapper {kind!r}{hint}")
            continue
        kwargs = {k: v for k, v in entry.items() if k != "type"}
        model = _model_for(cls)
        try:
            model.model_validate(kwargs)
        except ValidationError as exc:
            for e in exc.errors(include_url=False):
                err((i, *e["loc"]), pydantic_message(e, model))
            continue
        try:  # the constructors check relations between values (e.g. stage order)
            _check_values(cls, kwargs)
        except ValueError as e:
            err((i,), str(e))
            continue
        specs.append(RewardSpec(name, kwargs))
    if problems:
        raise RewardConfigError(problems)
    return specs


def _check_values(cls: type, kwargs: dict) -> None:
    if cls is StagedReward:
        names = set(inspect.signature(StageValues).parameters)
        StageValues(**{k: v for k, v in kwargs.items() if k in names})
    elif cls is TimedReward:
        SpeedScoring(**{k: v for k, v in kwargs.items() if k in field_names(SpeedScoring)})


def apply_reward_wrappers(env, entries: Any, source: str = "<reward config>"):
    """`env` wrapped in the declared wrappers (first entry innermost)."""
    specs = entries if (isinstance(entries, list) and all(isinstance(s, RewardSpec) for s in entries)) \
        else parse_reward_config(entries, source)
    for spec in specs:
        env = spec.apply(env)
    return env


# --------------------------------------------------------------------------- YAML files


def suite_file_for(suite: str | os.PathLike) -> Path | None:
    """The suite.yaml of a suite name, suite directory, task file or suite.yaml path."""
    p = Path(suite)
    if p.name == SUITE_FILE and p.is_file():
        return p
    target = resolve_suite(suite)
    if target.is_dir():
        cand = target / SUITE_FILE
        return cand if cand.is_file() else None
    return find_suite_file(target)


@dataclass
class RewardDeclaration:
    """A reward as declared: the env's `base` reward (one of `BASE_REWARDS`; None: the
    env's own default) and the `wrappers` applied over it, the first innermost."""

    base: str | None = None
    wrappers: list[RewardSpec] = field(default_factory=list)
    source: str = ""

    def apply(self, env, suite_default: bool = False):
        """`env` wrapped in the declared wrappers (marked as the suite's default reward
        with `suite_default`: an episode-deciding reward stacked on them replaces them)."""
        for spec in self.wrappers:
            env = spec.apply(env)
            if suite_default:
                env.suite_default = True
        return env

    def describe(self) -> str:
        """One line: the base and the wrappers with their non-default arguments."""
        parts = [self.base or "env default"]
        parts += [s.type + (f"({', '.join(f'{k}={v!r}' for k, v in s.kwargs.items())})" if s.kwargs else "")
                  for s in self.wrappers]
        return " -> ".join(parts)


def parse_reward(value: Any, source: str = "<reward config>", line_of: Callable[[tuple], int] | None = None,
                 prefix: tuple = (REWARD_KEY,)) -> RewardDeclaration:
    """A reward declaration: a base reward name (``pass_fraction``, ``binary``), or wrapper
    entries (`parse_reward_config`: a list, one entry, or one wrapper type name)."""
    if isinstance(value, str) and value in BASE_REWARDS:
        return RewardDeclaration(base=value, source=source)
    if isinstance(value, str) and ALIASES.get(value, value) not in WRAPPER_TYPES:
        line = line_of(prefix) if line_of else 1
        hint = suggest(value, [*BASE_REWARDS, *WRAPPER_TYPES, *ALIASES], listed=[*BASE_REWARDS, *WRAPPER_TYPES])
        raise RewardConfigError([DocError(source, line, format_path(prefix),
                                          f"unknown reward {value!r}{hint}: a base reward ("
                                          + ", ".join(BASE_REWARDS) + "), a wrapper type or a list of wrappers")])
    return RewardDeclaration(wrappers=parse_reward_config(value, source, line_of, prefix), source=source)


def load_reward_declaration(path_or_suite: str | os.PathLike) -> RewardDeclaration | None:
    """The reward declared by a suite (its suite.yaml's ``suite.reward``, or a top-level
    ``reward`` key there) or by a YAML file (top-level ``reward``, or a list); None when
    nothing is declared."""
    p = Path(path_or_suite)
    is_yaml_file = p.is_file() and p.suffix in (".yaml", ".yml") and p.name != SUITE_FILE
    if not is_yaml_file:
        suite_file = suite_file_for(path_or_suite)
        return None if suite_file is None else _suite_file_reward(suite_file)
    doc = Doc(p)
    if not doc.load():  # duplicate keys alone do not fail: the last value is kept
        raise RewardConfigError(doc.errors)
    if isinstance(doc.data, Mapping):
        if REWARD_KEY not in doc.data:
            return None
        return parse_reward(doc.data[REWARD_KEY], doc.display, doc.line_of, (REWARD_KEY,))
    return parse_reward(doc.data, doc.display, doc.line_of, ())


def _suite_file_reward(suite_file: Path) -> RewardDeclaration | None:
    sd = read_suite_file(suite_file)
    data = sd.doc.data if isinstance(sd.doc.data, Mapping) else {}
    meta = data.get("suite")
    if not isinstance(meta, Mapping):
        meta = {}
    in_meta, top = REWARD_KEY in meta, REWARD_KEY in data
    display = sd.doc.display
    if in_meta and top:
        raise RewardConfigError([DocError(display, sd.doc.line_of((REWARD_KEY,)), REWARD_KEY,
                                          f"declare the reward once (suite.{REWARD_KEY} or {REWARD_KEY})")])
    if in_meta:
        return parse_reward(meta[REWARD_KEY], display, sd.doc.line_of, ("suite", REWARD_KEY))
    if top:
        return parse_reward(data[REWARD_KEY], display, sd.doc.line_of, (REWARD_KEY,))
    return None


def load_reward_config(path_or_suite: str | os.PathLike) -> list[RewardSpec]:
    """The wrappers a suite or a YAML file declares (`load_reward_declaration`); [] if none."""
    decl = load_reward_declaration(path_or_suite)
    return list(decl.wrappers) if decl is not None else []


def suite_reward(suite: Any = None, tasks: Sequence[Any] | None = None) -> RewardDeclaration | None:
    """The default reward a suite declares: of `suite` (a name, a path, or a
    `codegym.tasks.suite.Suite`), else of the suite the `tasks` were loaded from (their
    ``source_path``). None: no declaration, or tasks of suites that declare different
    ones (with a warning: the env's own reward is used then; pass ``reward=``)."""
    if suite is not None:
        where = suite.root if isinstance(suite, Suite) else suite
        if where is None:  # a suite made in memory: it has no suite file
            return None
        try:
            suite_file = suite_file_for(where)
        except FileNotFoundError:
            return None
        return None if suite_file is None else _suite_file_reward(suite_file)
    files = {find_suite_file(Path(t.source_path)) for t in tasks or () if getattr(t, "source_path", None)}
    decls = {f: _suite_file_reward(f) for f in files if f is not None}
    found = {d.describe() if d is not None else None for d in decls.values()}
    if len(found) > 1:
        warnings.warn("the tasks come from suites with different default rewards ("
                      + "; ".join(f"{display_path(f)}: {d.describe() if d else 'none'}" for f, d in decls.items())
                      + "): the env's own reward is used; pass reward= to choose", UserWarning, stacklevel=3)
        return None
    return next(iter(decls.values()), None)


def resolve_reward(reward: Any = SUITE_DEFAULT, suite: Any = None,
                   tasks: Sequence[Any] | None = None) -> tuple[RewardDeclaration, bool]:
    """(what to build, whether it is the suite's default) for ``reward=`` of a registered id:
    `SUITE_DEFAULT` (the suite's declaration, else the env's own default), a base reward,
    a wrapper type, or a list of wrapper entries (over the env's default base)."""
    if isinstance(reward, str) and reward == SUITE_DEFAULT:
        return (suite_reward(suite, tasks) or RewardDeclaration(source="(none declared)")), True
    if isinstance(reward, RewardDeclaration):
        return reward, False
    return parse_reward(reward, "reward="), False


def wrap_for_suite(env, suite: str | os.PathLike | None = None):
    """`env` wrapped in its suite's declared reward wrappers (unchanged if none).

    `suite` defaults to the suite the env was made with (``CodeEnv.suite_name``). The
    registered ids do this themselves (``gym.make(id)``, `resolve_reward`)."""
    suite = suite if suite is not None else env_attr(env, "suite_name")
    if suite is None:
        return env
    return apply_reward_wrappers(env, load_reward_config(suite))


