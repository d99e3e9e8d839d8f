"""Settings groups: the dataclasses a wide constructor takes whole, or field by field.

A constructor with many options takes a few settings dataclasses (`StageValues`,
`TimingSettings`, `EpisodeSettings`, `SamplingSettings` ...) and still accepts each of
their fields as a flat keyword, as configs and older callers give them:

- `with_fields(group, options, keys, who)`: one group with the fields `options` gives;
- `as_group(value, default, who, name)`: a group argument given as the dataclass, a
  mapping of its fields (a YAML config's) or None;
- `grouped(who, options, sampling=..., chat=...)`: several groups at once, a keyword that
  is no group's field refused with a `TypeError` that names it (and the closest name);
- `GroupField(group)`: a group's field read and set as an attribute of its owner
  (``agent.temperature`` is ``agent.sampling.temperature``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from codegym.core.yamldoc import suggest


def field_names(group: Any) -> tuple[str, ...]:
    """The field names of a settings dataclass (a class or an instance)."""
    cls = group if isinstance(group, type) else type(group)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # constructors ask for them on every call


def unexpected(who: str, unknown: Iterable[str], known: Iterable[str]) -> TypeError:
    """The error of keywords `who` does not take, each with the closest known name."""
    known = list(known)
    names = ", ".join(f"{k!r}{suggest(k, known, listed=())}" for k in sorted(unknown))
    return TypeError(f"{who} got unexpected keyword argument(s) {names}")


def with_fields(group: Any, options: Mapping[str, Any], keys: Sequence[str], who: str) -> Any:
    """`group` (a settings dataclass: `TimingSettings`, `StageValues`) with the fields among
    `keys` that `options` gives, each converted to the type of the group's number there;
    TypeError naming `who` for any other keyword."""
    unknown = set(options) - set(keys)
    if unknown:
        raise unexpected(who, unknown, keys)
    given = {}
    for k, v in options.items():
        cur = getattr(group, k)
        number = isinstance(cur, (int, float)) and not isinstance(cur, bool) and v is not None
        given[k] = type(cur)(v) if number else v
    return dataclasses.replace(group, **given) if given else group


def as_group(value: Any, default: Any, who: str, name: str) -> Any:
    """The settings group argument `name` of `who`: `default` for None, a group of the
    default's type as given, a mapping (a YAML config's) as its fields over `default`."""
    if value is None:
        return default
    if isinstance(value, type(default)):
        return value
    if isinstance(value, Mapping):
        return with_fields(default, value, field_names(default), f"{who} {name}=")
    raise TypeError(f"{who}: {name}= takes {type(default).__name__}(...) or a mapping of its fields, "
                    f"not {type(value).__name__}")


def grouped(who: str, options: Mapping[str, Any], also: Sequence[str] = (), **groups: Any) -> dict[str, Any]:
    """Each of `groups` (name -> settings dataclass instance) with its fields that `options`
    gives one by one. A keyword that is no group's field is a TypeError naming `who` and the
    closest of the groups' fields and `also` (the constructor's own arguments)."""
    keys = {name: field_names(g) for name, g in groups.items()}
    every = [k for ks in keys.values() for k in ks]
    unknown = set(options) - set(every)
    if unknown:
        raise unexpected(who, unknown, [*also, *every])
    out = dict(groups)
    if options:
        for name, g in groups.items():
            given = {k: v for k, v in options.items() if k in keys[name]}
            if given:
                out[name] = with_fields(g, given, keys[name], who)
    return out


class GroupField:
    """A field of the settings group held in attribute `group`, read and set through its
    owner: ``agent.temperature`` reads ``agent.sampling.temperature``; setting it replaces
    the group by a copy with that field changed (the group's checks run again)."""

    def __init__(self, group: str):
        self.group = group
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self.group), self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj, self.group, dataclasses.replace(getattr(obj, self.group), **{self.name: value}))
