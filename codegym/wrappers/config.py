"""Reward wrappers declared in YAML: parse, validate, and apply them to an env.

This module owns the YAML form of the reward wrappers (`WRAPPER_TYPES`, `ALIASES`), its
validation (errors name ``file:line: reward[i].field: problem``, as task files do, through
`codegym.core.yamldoc`), and the helpers that apply a declaration:
`parse_reward_config(entries)` -> list of `RewardSpec`; `apply_reward_wrappers(env,
entries)` (the first entry innermost); `load_reward_config(path)` (a suite's ``suite:
{reward: [...]}`` block, or a YAML file's top-level ``reward`` list); `wrap_for_suite(env)`.
Each entry is ``type`` plus the keyword arguments of that wrapper's constructor;
docs/rewards.md shows a declaration and the order to give it.
"""

from __future__ import annotations

import inspect
import os
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, ValidationError, create_model

from codegym.core.yamldoc import Doc, DocError, DocValidationError, format_path, pydantic_message, suggest
from codegym.tasks.fields import SUITE_FILE
from codegym.tasks.load import find_suite_file, read_suite_file
from codegym.tasks.suite import resolve_suite
from codegym.wrappers.diff_credit import DiffCredit
from codegym.wrappers.shaping import DiffSizePenalty, FormatPenalty, ProgressShaping
from codegym.wrappers.staged import StagedReward, StageValues
from codegym.wrappers.timed import TimedReward

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
    def cls(self) -> type:
        return WRAPPER_TYPES[self.type]

    def apply(self, env):
        return self.cls(env, **self.kwargs)


def _model_for(cls: type):
    """A pydantic model of `cls.__init__`'s keyword arguments (after `env`)."""
    cached = _MODELS.get(cls)
    if cached is not None:
        return cached
    sig = inspect.signature(cls.__init__, eval_str=True)
    hints = typing.get_type_hints(cls.__init__)
    fields: dict[str, Any] = {}
    for name, p in list(sig.parameters.items())[2:]:  # self, env
        ann = hints.get(name, Any)
        default = p.default if p.default is not inspect.Parameter.empty else ...
        fields[name] = (ann, default)
    model = create_model(f"{cls.__name__}Config", __config__=ConfigDict(extra="forbid", strict=False),
                         **fields)
    _MODELS[cls] = model
    return model


_MODELS: dict[type, Any] = {}


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
    if isinstance(entries, Mapping):  # a single entry
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


def load_reward_config(path_or_suite: str | os.PathLike) -> list[RewardSpec]:
    """The reward declaration of a suite (its suite.yaml's ``suite.reward``, or a top-level
    ``reward`` key there) or of a YAML file (top-level ``reward`` or a list). [] if none."""
    p = Path(path_or_suite)
    is_yaml_file = p.is_file() and p.suffix in (".yaml", ".yml") and p.name != SUITE_FILE
    if not is_yaml_file:
        suite_file = suite_file_for(path_or_suite)
        if suite_file is None:
            return []
        sd = read_suite_file(suite_file)
        data = sd.doc.data if isinstance(sd.doc.data, Mapping) else {}
        meta = data.get("suite") if isinstance(data.get("suite"), Mapping) else {}
        in_meta, top = REWARD_KEY in meta, REWARD_KEY in data
        display = sd.doc.display
        if in_meta and top:
            raise RewardConfigError([DocError(display, sd.doc.line_of((REWARD_KEY,)), REWARD_KEY,
                                              f"declare the reward once (suite.{REWARD_KEY} or {REWARD_KEY})")])
        if in_meta:
            return parse_reward_config(meta[REWARD_KEY], display, sd.doc.line_of, ("suite", REWARD_KEY))
        if top:
            return parse_reward_config(data[REWARD_KEY], display, sd.doc.line_of, (REWARD_KEY,))
        return []
    doc = Doc(p)
    if not doc.load():  # duplicate keys alone do not fail: the last value is kept
        raise RewardConfigError(doc.errors)
    if isinstance(doc.data, Mapping):
        if REWARD_KEY not in doc.data:
            return []
        return parse_reward_config(doc.data[REWARD_KEY], doc.display, doc.line_of, (REWARD_KEY,))
    return parse_reward_config(doc.data, doc.display, doc.line_of, ())


def wrap_for_suite(env, suite: str | os.PathLike | None = None):
    """`env` wrapped in its suite's declared reward wrappers (unchanged if none).

    `suite` defaults to the suite the env was made with (``CodeEnv.suite_name``)."""
    suite = suite if suite is not None else getattr(env.unwrapped, "suite_name", None)
    if suite is None:
        return env
    return apply_reward_wrappers(env, load_reward_config(suite))


__all__ = ["WRAPPER_TYPES", "ALIASES", "RewardSpec", "RewardConfigError", "parse_reward_config",
           "apply_reward_wrappers", "load_reward_config", "wrap_for_suite", "suite_file_for", "REWARD_KEY"]
