"""`Config` (sections by name) and `Section` (a mapping of keys to string values)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Iterator

_TRUE = {"1", "yes", "true", "on"}
_FALSE = {"0", "no", "false", "off"}


class Section(Mapping):
    """Keys of one section, falling back to the DEFAULT section."""

    def __init__(self, name: str, values: dict[str, str], defaults: dict[str, str] | None = None):
        self.name = name
        self._values = values
        self._defaults = defaults or {}

    def __getitem__(self, key: str) -> str:
        key = key.lower()
        if key in self._values:
            return self._values[key]
        return self._defaults[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._values
        yield from (k for k in self._defaults if k not in self._values)

    def __len__(self) -> int:
        return len(set(self._values) | set(self._defaults))

    def get_int(self, key: str, default: int | None = None) -> int | None:
        if key not in self:
            return default
        return int(self[key])

    def get_bool(self, key: str, default: bool | None = None) -> bool | None:
        if key not in self:
            return default
        v = self[key].strip().lower()
        if v in _TRUE:
            return True
        if v in _FALSE:
            return False
        raise ValueError(f"[{self.name}] {key}: not a boolean: {self[key]!r}")

    def get_list(self, key: str, default: list[str] | None = None) -> list[str] | None:
        """Comma- or newline-separated items, stripped, empty items dropped."""
        if key not in self:
            return default
        items = self[key].replace("\n", ",").split(",")
        return [x.strip() for x in items if x.strip()]


class Config(Mapping):
    def __init__(self, sections: dict[str, dict[str, str]]):
        defaults = sections.get("DEFAULT", {})
        self._sections = {name: Section(name, values, defaults)
                          for name, values in sections.items() if name != "DEFAULT"}

    def __getitem__(self, name: str) -> Section:
        return self._sections[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sections)

    def __len__(self) -> int:
        return len(self._sections)
