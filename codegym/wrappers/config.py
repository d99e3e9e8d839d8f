"""Reward wrappers declared in YAML: parse, validate, and apply them to an env.

This module owns the YAML form of the reward wrappers (`WRAPPER_TYPES`), its validation
(errors name ``file:line: reward[i].field: problem``, like task files), and the helpers
that apply a declaration:

- `parse_reward_config(entries, source=...)` -> list of `RewardSpec` (type, kwargs);
- `apply_reward_wrappers(env, entries)`: wrap `env` in the declared order (the first
  entry is innermost: put replacing rewards -- staged, timed -- first, additive terms
  after them, diff_credit last so it records the final rewards);
- `load_reward_config(path)`: the declaration of a suite (a suite name, directory or
  ``suite.yaml``: its ``suite: {reward: [...]}`` block) or of any YAML file whose top
  level is ``reward: [...]`` (e.g. an eval config) or a list;
- `wrap_for_suite(env, suite=None)`: apply the env's suite declaration, if any.

In a suite::

    # tasks/perfcode/suite.yaml
    suite:
      description: ...
      reward:
        - {type: staged, speed_weight: 0.4}
        - {type: format_penalty, penalty: 0.1}
        - {type: diff_credit, gamma: 1.0}

Each entry is ``type`` plus the keyword arguments of that wrapper's constructor
(aliases: rlpf -> staged, dmc_optim -> timed, didpo -> diff_credit, progress ->
progress_shaping, protected_paths -> diff_size_penalty).
"""

from __future__ import annotations

import difflib
import inspect
import os
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml
from pydantic import ConfigDict, ValidationError, create_model

from codegym.wrappers.diff_credit import DiffCredit
from codegym.wrappers.shaping import DiffSizePenalty, FormatPenalty, ProgressShaping
from codegym.wrappers.staged import StagedReward
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


class RewardConfigError(ValueError):
    """Every problem of a reward declaration, one ``file:line: path: message`` per line."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


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

_MESSAGES = {"float_parsing": "expected number", "float_type": "expected number",
             "int_parsing": "expected integer", "int_type": "expected integer",
             "int_from_float": "expected integer", "bool_parsing": "expected boolean (true/false)",
             "bool_type": "expected boolean (true/false)", "string_type": "expected string",
             "list_type": "expected list", "tuple_type": "expected list", "dict_type": "expected mapping"}


def _message(e: dict, model) -> str:
    if e["type"] == "extra_forbidden":
        key = str(e["loc"][-1])
        names = list(model.model_fields)
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
        return f"unknown field {key!r}" + (f" (did you mean {close[0]!r}?)" if close
                                           else f"; allowed: {', '.join(names)}")
    return _MESSAGES.get(e["type"], e["msg"])


def _fmt_loc(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def parse_reward_config(entries: Any, source: str = "<reward config>",
                        line_of: Callable[[tuple], int] | None = None,
                        prefix: tuple = (REWARD_KEY,)) -> list[RewardSpec]:
    """Validate a reward declaration (a list of ``{type: ..., **kwargs}``) into specs.

    Raises `RewardConfigError` listing every problem as ``source:line: path: message``
    (`line_of(loc)` maps a path in the document to its line; `prefix` is the path of the
    list in it)."""
    problems: list[str] = []

    def err(loc: tuple, msg: str) -> None:
        line = line_of(prefix + loc) if line_of else 1
        problems.append(f"{source}:{line}: {_fmt_loc(prefix + loc)}: {msg}")

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
            close = difflib.get_close_matches(kind, list(WRAPPER_TYPES) + list(ALIASES), n=1)
            err((i, "type"), f"unknown reward wrapper {kind!r}" + (f" (did you mean {close[0]!r}?)" if close
                                                                  else f"; known: {', '.join(WRAPPER_TYPES)}"))
            continue
        kwargs = {k: v for k, v in entry.items() if k != "type"}
        model = _model_for(cls)
        try:
            model.model_validate(kwargs)
        except ValidationError as exc:
            for e in exc.errors(include_url=False):
                err((i, *e["loc"]), _message(e, model))
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
        from codegym.wrappers.staged import StageValues
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


def _yaml_lines(path: Path) -> tuple[Any, dict[tuple, int]]:
    """Parse a YAML file keeping the line of every key and item."""
    text = path.read_text(encoding="utf-8")
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    lines: dict[tuple, int] = {(): 1}

    def walk(n, loc):
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else str(k.start_mark)
                lines[loc + (key,)] = k.start_mark.line + 1
                walk(v, loc + (key,))
        elif isinstance(n, yaml.SequenceNode):
            for i, item in enumerate(n.value):
                lines[loc + (i,)] = item.start_mark.line + 1
                walk(item, loc + (i,))

    if node is not None:
        walk(node, ())
    data = yaml.safe_load(text)
    return data, lines


def _line_lookup(lines: Mapping[tuple, int]) -> Callable[[tuple], int]:
    def line_of(loc: tuple) -> int:
        for i in range(len(loc), -1, -1):
            if tuple(loc[:i]) in lines:
                return lines[tuple(loc[:i])]
        return 1
    return line_of


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


def suite_file_for(suite: str | os.PathLike) -> Path | None:
    """The suite.yaml of a suite name, suite directory, task file or suite.yaml path."""
    from codegym.tasks.suite import resolve_suite
    from codegym.tasks.schema import SUITE_FILE, find_suite_file
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
    from codegym.tasks.schema import SUITE_FILE, read_suite_file
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
            raise RewardConfigError([f"{display}:{sd.doc.line_of((REWARD_KEY,))}: {REWARD_KEY}: "
                                     f"declare the reward once (suite.{REWARD_KEY} or {REWARD_KEY})"])
        if in_meta:
            return parse_reward_config(meta[REWARD_KEY], display, sd.doc.line_of, ("suite", REWARD_KEY))
        if top:
            return parse_reward_config(data[REWARD_KEY], display, sd.doc.line_of, (REWARD_KEY,))
        return []
    try:
        data, lines = _yaml_lines(p)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise RewardConfigError([f"{_display(p)}:{mark.line + 1 if mark else 1}: YAML syntax error: "
                                 f"{getattr(e, 'problem', e)}"]) from None
    if isinstance(data, Mapping):
        if REWARD_KEY not in data:
            return []
        return parse_reward_config(data[REWARD_KEY], _display(p), _line_lookup(lines), (REWARD_KEY,))
    return parse_reward_config(data, _display(p), _line_lookup(lines), ())


def wrap_for_suite(env, suite: str | os.PathLike | None = None):
    """`env` wrapped in its suite's declared reward wrappers (unchanged if none).

    `suite` defaults to the suite the env was made with (``CodeEnv.suite_name``)."""
    suite = suite if suite is not None else getattr(env.unwrapped, "suite_name", None)
    if suite is None:
        return env
    return apply_reward_wrappers(env, load_reward_config(suite))


__all__ = ["WRAPPER_TYPES", "ALIASES", "RewardSpec", "RewardConfigError", "parse_reward_config",
           "apply_reward_wrappers", "load_reward_config", "wrap_for_suite", "suite_file_for", "REWARD_KEY"]
