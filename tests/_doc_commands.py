"""The shell commands the documentation shows, as argument lists (for tests that run them as written).

`documented_commands(page, program)` reads a Markdown page's code blocks (fenced ones that
are not Python, and indented ones) and returns every command line that starts with
`program` (``codegym``, ``vf-eval``): continuation lines joined, comments dropped, split
like a shell would (`shlex`), with the page line it starts on.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

_FENCE = re.compile(r"^(`{3,})\s*(\w*)")


def _shell_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of the lines in shell-ish code blocks."""
    out: list[tuple[int, str]] = []
    fence, lang, prev_blank = None, "", True
    for n, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if fence is None and m:
            fence, lang = m.group(1), m.group(2).lower()
        elif fence is not None and line.startswith(fence):
            fence = None
        elif fence is not None:
            if lang not in ("python", "py", "yaml", "yml", "json", "toml"):
                out.append((n, line))
        elif line.startswith("    ") and (prev_blank or (out and out[-1][0] == n - 1)):
            out.append((n, line[4:]))
        prev_blank = not line.strip()
    return out


def documented_commands(page: Path, program: str) -> list[tuple[int, list[str]]]:
    """(line, argv) of every `program ...` command in the page's code blocks."""
    found: list[tuple[int, list[str]]] = []
    pending: tuple[int, str] | None = None
    for n, line in _shell_lines(page.read_text(encoding="utf-8")):
        stripped = line.strip().removeprefix("$ ")
        if pending is not None:
            start, text = pending
            text += " " + stripped
        elif stripped.startswith(program + " "):
            start, text = n, stripped
        else:
            continue
        if text.endswith("\\"):
            pending = (start, text[:-1])
            continue
        pending = None
        found.append((start, shlex.split(text, comments=True)))
    return found
