"""The documentation runs as written: every Python block marked runnable in README.md and
docs/*.md is executed, and the README's task counts are checked against the suites.

A block is marked by an HTML comment on the line before its fence (invisible on GitHub):

    <!-- runnable -->                      run it; it must exit 0
    <!-- runnable expect="accepted" -->    ... and print that text (repeatable)

Each block runs alone in a fresh interpreter (the checkout on its path, a scratch
directory as the working directory), like a reader pasting it into ``python``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import codegym
from codegym.tasks.suite import load_suite

REPO = Path(codegym.__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^<!--\s*runnable(?P<args>[^>]*?)\s*-->[ \t]*\n(?P<fence>`{3,})python[^\n]*\n"
                    r"(?P<code>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_EXPECT = re.compile(r'expect="([^"]*)"')
_MARK = re.compile(r"<!--\s*runnable")


def runnable_blocks(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, code, expected texts) of every block marked runnable in a Markdown file."""
    text = path.read_text(encoding="utf-8")
    found = [(text.count("\n", 0, m.start()) + 2, m["code"], _EXPECT.findall(m["args"]))
             for m in _BLOCK.finditer(text)]
    marks = len(_MARK.findall(text))
    assert marks == len(found), f"{path.name}: {marks} runnable mark(s) but {len(found)} marked python block(s)"
    return found


BLOCKS = [(p, line, code, expect) for p in PAGES for line, code, expect in runnable_blocks(p)]


def test_the_readme_quick_start_is_marked_runnable():
    readme = [b for b in BLOCKS if b[0].name == "README.md"]
    assert readme and any('gym.make("codegym/PerfCode-v0")' in code for _, _, code, _ in readme)


@pytest.mark.parametrize("page,line,code,expect", BLOCKS,
                         ids=[f"{p.relative_to(REPO)}:{line}" for p, line, _, _ in BLOCKS])
def test_marked_block_runs(page, line, code, expect, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    where = f"{page.relative_to(REPO)}:{line}"
    assert r.returncode == 0, f"{where} failed:\n{r.stderr[-3000:]}"
    for text in expect:
        assert text in r.stdout, f"{where} did not print {text!r}:\n{r.stdout[-3000:]}"


# --------------------------------------------------------------------------- counts

LANGUAGE_NAMES = {"python": "Python", "c": "C", "cpp": "C++", "julia": "Julia"}
_ROW = re.compile(r"^\|\s*`(?P<id>codegym/[\w-]+)`\s*\|[^|\n]*?`tasks/(?P<suite>\w+)`:? (?P<n>\d+) tasks"
                  r"(?: \((?P<langs>[^)]*)\))?", re.M)


def test_readme_task_counts_are_the_suites():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    rows = {m["suite"]: m for m in _ROW.finditer(text)}
    assert {"perfcode", "dmcoptim", "lcb", "multiple_julia", "swe", "examples"} <= set(rows), sorted(rows)
    for suite, m in rows.items():
        tasks = list(load_suite(suite))
        assert int(m["n"]) == len(tasks), f"README: {suite} has {m['n']} tasks, the suite {len(tasks)}"
        if m["langs"]:
            counts = Counter(t.language for t in tasks)
            want = ", ".join(f"{n} {LANGUAGE_NAMES[lang]}" for lang, n in counts.most_common())
            assert m["langs"] == want, f"README: {suite} ({m['langs']}), the suite ({want})"
    # the speed gaps quoted for the timed suites are runtimes.json's
    for suite in ("perfcode", "dmcoptim"):
        ratios = [t["ratio"] for t in json.loads((REPO / "tasks" / suite / "runtimes.json").read_text())
                  ["tasks"].values()]
        gap = re.search(r"`tasks/" + suite + r"`[^|]*?(\d+(?:\.\d+)?)x to (\d+(?:\.\d+)?)x", text)
        assert gap, f"README: no speed gap quoted for {suite}"
        assert (float(gap[1]), float(gap[2])) == (round(min(ratios), 1), round(max(ratios))), \
            f"README quotes {gap[1]}x to {gap[2]}x for {suite}; runtimes.json: {min(ratios)} to {max(ratios)}"


_REWARD_ROW = re.compile(r"^\|\s*`(?P<id>codegym/[\w-]+)`\s*\|[^|\n]*?`tasks/(?P<suite>\w+)`[^|\n]*"
                         r"\|(?P<cell>[^|\n]*)\|", re.M)


def test_readme_default_rewards_are_what_the_suites_declare():
    """The reward column names (in backticks, first) what the suite's suite.yaml declares, or
    the env's own default when it declares nothing; nothing else is called a default."""
    import gymnasium as gym  # noqa: PLC0415

    from codegym.wrappers.config import suite_reward  # noqa: PLC0415
    text = (REPO / "README.md").read_text(encoding="utf-8")
    rows = list(_REWARD_ROW.finditer(text))
    assert len(rows) >= 6
    for m in rows:
        decl = suite_reward(m["suite"])
        if decl is not None:
            want = [w.type for w in decl.wrappers] or [decl.base]
        else:
            env = gym.make(m["id"], **({"suite": m["suite"]} if m["id"] == "codegym/Suite-v0" else {}))
            want = [env.unwrapped.reward_mode]
            env.close()
        named = re.findall(r"`(\w+)`", m["cell"])
        if m["suite"] == "examples":  # the generic Suite-v0 row: "the suite's (`examples`: ...)"
            named = named[1:]
        assert named[:len(want)] == want, f"README: {m['id']} ({m['suite']}) says {m['cell'].strip()!r}; " \
                                          f"its suite declares {want}"
        assert "timed" not in m["cell"] or "timed" in want, m["cell"]
