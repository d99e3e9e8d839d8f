"""JSON lines read with ``file:line`` errors (importers' sources, exported rollouts)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["json_lines"]


def json_lines(lines: Iterable[str | bytes], source: str | os.PathLike, *, error: type[Exception] = ValueError,
               message: str = "not JSON: {e}") -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line; a line that is not JSON raises
    ``error(f"{source}:{line}: " + message.format(e=...))``."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as e:
            raise error(f"{source}:{n}: " + message.format(e=e)) from None
        yield n, value
