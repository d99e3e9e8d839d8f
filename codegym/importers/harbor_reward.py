"""The reward of a Harbor verifier run, reported to codegym's repo grader (stdlib only).

Copied into the judge image of an imported Harbor task (`codegym.importers.harbor_env`)
and run after the task's ``tests/test.sh``::

    python3 /opt/codegym-harbor/reward_report.py /tmp/codegym-verifier

Before test.sh, ``reward_report.py --restore BASE WORKDIR`` links the working directory's
files that the imported task does not carry (binary or large files, kept in the image
under BASE) into WORKDIR where the task's files did not put a file of the same name:
read-only links, so a 200 MB data file is neither copied into the task nor into the run.

It reads the reward the way Harbor's verifier does (``reward.json`` first: a mapping of
numbers whose ``reward`` key is the reward; else ``reward.txt``: one number), writes it
as a one-test junit report (``harbor.reward``: passed when the reward is at least 1) to
``junit.xml`` in the same folder, prints the reward and the tail of test.sh's output,
and exits 0 when the task is solved, 1 when not, 3 when no reward was written.
"""

from __future__ import annotations

import json
import math
import os
import sys
from xml.sax.saxutils import quoteattr


def read_reward(folder: str) -> tuple[float | None, str]:
    """(reward or None, how it was read / why not)."""
    js, txt = os.path.join(folder, "reward.json"), os.path.join(folder, "reward.txt")
    try:
        if os.path.exists(js):
            data = json.load(open(js, encoding="utf-8"))
            value = data.get("reward") if isinstance(data, dict) else data
            src = "reward.json"
        elif os.path.exists(txt):
            value, src = float(open(txt, encoding="utf-8").read().strip()), "reward.txt"
        else:
            return None, "the verifier wrote no reward file (reward.json or reward.txt)"
    except (OSError, ValueError) as e:
        return None, f"unreadable reward file: {e}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None, f"{src}: the reward is not a finite number: {value!r}"
    return float(value), src


def restore(base: str, dest: str) -> int:
    """Link every file under `base` into `dest` where `dest` has nothing of that name; how many."""
    n = 0
    for dirpath, _dirs, names in os.walk(base):
        rel = os.path.relpath(dirpath, base)
        for name in names:
            target = os.path.normpath(os.path.join(dest, rel, name))
            if os.path.lexists(target):
                continue
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.symlink(os.path.join(dirpath, name), target)
                n += 1
            except OSError:
                continue
    return n


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] == "--restore":
        restore(argv[2], argv[3])
        return 0
    folder = argv[1] if len(argv) > 1 else "/logs/verifier"
    reward, how = read_reward(folder)
    solved = reward is not None and reward >= 1.0
    try:
        log = open(os.path.join(folder, "test-stdout.txt"), encoding="utf-8", errors="replace").read()[-2000:]
    except OSError:
        log = ""
    message = f"reward {reward:g} ({how})" if reward is not None else how
    failure = "" if solved else f"<failure message={quoteattr(message)}>{quoteattr(log)[1:-1]}</failure>"
    with open(os.path.join(folder, "junit.xml"), "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="harbor" tests="1" '
                f'failures="{0 if solved else 1}"><testcase classname="harbor" name="reward">{failure}'
                "</testcase></testsuite></testsuites>\n")
    print(f"harbor verifier: {message}\n{log}")
    return 0 if solved else (1 if reward is not None else 3)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
