"""`make demo`: the main job on the bundled default suite.

Validates the bundled task suites, then plays every PerfCode task with the
oracle (expert reference) and the baseline (the slow starter) side by side, with
the perf tests timed, and writes the episode records to ``out/demo.jsonl``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codegym.cli.main import main as cli


def main() -> int:
    rc = cli(["tasks", "validate", "-q"])
    if rc != 0:
        return rc
    out = Path("out")
    out.mkdir(exist_ok=True)
    target = out / "demo.jsonl"
    if target.exists():
        target.unlink()
    return cli(["run", "codegym/PerfCode-v0", "--agent", "oracle", "--agent", "baseline",
                "--all-tasks", "--timing", "--out", str(target)])


if __name__ == "__main__":
    sys.exit(main())
