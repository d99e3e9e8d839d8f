"""The fork server: the trusted core that runs inside every sandbox slot.

One long-lived supervisor per slot (PID 1 of the slot's namespaces under
bubblewrap, PID 1 of a container, or a plain process in the rlimits mode): it
reads a request frame, lays out the run directory, forks the program (exec'd,
or Python run in this warm interpreter), supervises it under its limits, kills
and reaps everything the run started, wipes the run's directories and answers
with one frame of raw facts.  Standard library only: it never imports codegym.
The parts (`source.PARTS`, this module first) are joined into one program that
the host sends to each slot (`source.server_source`); docs/sandbox.md explains it.

This first part notes what a fresh ``python3 -I -S`` has imported before the
server's own imports (`FRESH_MODULES`; see `pyrun.PythonPrep.shadowed`).
"""

import sys

FRESH_MODULES = frozenset(sys.modules)
