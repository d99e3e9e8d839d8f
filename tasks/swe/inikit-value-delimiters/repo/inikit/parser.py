"""Reading INI text into a `Config`."""

from __future__ import annotations

import re
from pathlib import Path

from inikit.config import Config

_SECTION_RE = re.compile(r"^\[([^\]]+)\]\s*$")
_DELIMITERS = re.compile(r"[=:]")
_INLINE_COMMENT = re.compile(r"\s[;#].*$")


class ParseError(ValueError):
    """Text that is not valid INI; the message names the line."""

    def __init__(self, lineno: int, message: str):
        super().__init__(f"line {lineno}: {message}")
        self.lineno = lineno


def _split_pair(line: str, lineno: int) -> tuple[str, str]:
    """``"key = value"`` or ``"key: value"`` -> (key, value)."""
    parts = _DELIMITERS.split(line)
    if len(parts) < 2:
        raise ParseError(lineno, f"expected 'key = value', got {line.strip()!r}")
    key, value = parts[0].strip(), parts[1].strip()
    if not key:
        raise ParseError(lineno, "empty key")
    return key.lower(), value


def loads(text: str) -> Config:
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    last_key: str | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith(("#", ";")):
            continue
        if raw[0] in " \t" and last_key is not None and current is not None:
            current[last_key] += "\n" + _INLINE_COMMENT.sub("", raw).strip()
            continue
        m = _SECTION_RE.match(raw.strip())
        if m:
            name = m.group(1).strip()
            if name in sections:
                raise ParseError(lineno, f"section [{name}] given twice")
            current = sections[name] = {}
            last_key = None
            continue
        if current is None:
            raise ParseError(lineno, "a key before any [section]")
        key, value = _split_pair(_INLINE_COMMENT.sub("", raw), lineno)
        if key in current:
            raise ParseError(lineno, f"key {key!r} given twice in this section")
        current[key] = value
        last_key = key
    return Config(sections)


def load(path: str | Path) -> Config:
    return loads(Path(path).read_text(encoding="utf-8"))
