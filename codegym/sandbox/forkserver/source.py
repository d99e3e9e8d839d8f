"""The fork server as one program: its parts joined, for a slot whose Python has only the stdlib.

Host side only (not a part itself).  Each part is a module of this package; the
program is their text in `PARTS` order under one ``from __future__`` line, with the
imports of sibling parts left out (the names they bring are the program's own
globals, so no two parts may define the same top-level name).  A local slot
reads it on stdin (`codegym.sandbox.local`); a container gets it as one file.
"""

from __future__ import annotations

import functools
from pathlib import Path

#: the program's parts, in order: a part uses only names of the parts before it
#: (at import time; functions may call forward)
PARTS = ("__init__", "protocol", "confine", "rundir", "pyrun", "supervise", "server")
HERE = Path(__file__).resolve().parent
#: the line that starts the program
FUTURE = "from __future__ import annotations"
SIBLING = "from codegym.sandbox.forkserver"


def part_lines(name: str) -> list[str]:
    """The lines of part `name` as the joined program holds them."""
    out: list[str] = []
    skipping = False
    for line in (HERE / f"{name}.py").read_text().splitlines():
        if skipping:  # (the rest of a parenthesised sibling import)
            skipping = not line.rstrip().endswith(")")
            continue
        if line.startswith((FUTURE, SIBLING)):
            skipping = line.rstrip().endswith("(")
            continue
        out.append(line)
    return out


@functools.cache
def server_source() -> bytes:
    """The whole program (``python3 -I -S`` runs it as ``__main__``)."""
    lines = [FUTURE]
    for name in PARTS:
        lines += ["", f"# ---------------------------------------------------------------- {name}.py", ""]
        lines += part_lines(name)
    return ("\n".join(lines) + "\n").encode()
