"""The windowed parse of Python (codegym.edits.trees._parse_pair_windowed) gives the
same diff units as whole-file parses, on random edit chains over real code."""

from __future__ import annotations

import glob
import os
import random
import sysconfig

import pytest

from codegym.edits import spans, trees
from codegym.edits.units import split_units

pytest.importorskip("tree_sitter_python")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: lines an edit may bring in that change how what follows them lexes or attaches
TRICKY = ['"""', "'''", "x = (", ")", "else:", "elif y:", "    else:", "@decorator", "@property",
          "# a comment", "    # an indented comment", "if x:", "def g():", "class K:", "    return 1",
          "y = 1 + \\", "", "        deep = 2", "try:", "except Exception:", "finally:", "    pass",
          "s = '''open", "]", "}", "lambda: (", "async def h():", "match v:", "    case 1:"]


def _corpus() -> list[str]:
    std = sysconfig.get_paths()["stdlib"]
    names = ["textwrap.py", "difflib.py", "heapq.py", "bisect.py", "fractions.py", "shlex.py",
             "string.py", "dataclasses.py", "functools.py", "ast.py", "argparse.py", "json/decoder.py"]
    files = [os.path.join(std, n) for n in names]
    files += sorted(glob.glob(os.path.join(ROOT, "codegym", "*.py")))[:8]
    # CRLF line ends, tabs, non-ASCII text and a form feed: byte and char offsets differ
    out = ["".join(f"def fünf_{k}(x):\r\n\ty = x + {k}  # größer\r\n\treturn 'é' * y\n\n\x0c\n"
                   f'class K{k}:\n    """Doc ∑."""\n    def m(self):\n        return {k}\n\n' for k in range(40))]
    for f in files:
        try:
            with open(f, encoding="utf-8") as fh:
                out.append(fh.read())
        except OSError:
            continue
    return out


def _edit(rng: random.Random, text: str, valid_only: bool = False) -> str:
    lines = text.split("\n")
    n = len(lines)
    a = rng.randrange(n + 1)
    b = min(n, a + rng.choice([0, 0, 1, 1, 2, 3, 8]))
    kind = rng.random() * (0.35 if valid_only else 1.0)
    if kind < 0.35:  # a statement with the indentation of the line it goes before (mostly valid)
        nxt = next((ln for ln in lines[a:] if ln.strip()), "")
        indent = nxt[: len(nxt) - len(nxt.lstrip())]
        new, b = [f"{indent}z_{rng.randrange(99)} = {rng.randrange(99)}"], a
    elif kind < 0.6:  # lines from elsewhere in the file
        s = rng.randrange(n)
        new = lines[s:s + rng.randint(1, 12)]
    elif kind < 0.75:  # tricky lines (often leave the file with syntax errors)
        new = [rng.choice(TRICKY) for _ in range(rng.randint(1, 3))]
    elif kind < 0.85:  # a pure deletion
        new = []
        b = max(b, min(n, a + 1))
    else:  # change inside a line
        new = [ln.replace("a", "b", 1) + rng.choice(["", " # x", ":"]) for ln in lines[a:b] or [""]]
    return "\n".join(lines[:a] + new + lines[b:])


def _units(old: str, new: str, granularity: str) -> list[dict]:
    us = split_units({"m.py": old}, {"m.py": new}, granularity=granularity)
    return [u.to_dict() for u in us]


def _reset_caches() -> None:
    for name in ("trees", "bounds"):
        if hasattr(trees._local, name):
            delattr(trees._local, name)


@pytest.mark.parametrize("seed,valid_only", [(s, s % 2 == 0) for s in range(6)])
def test_windowed_units_equal_whole_file_units(seed, valid_only, monkeypatch):
    rng = random.Random(seed)
    corpus = _corpus()
    assert len(corpus) >= 10
    windowed_steps = 0
    for text in rng.sample(corpus, 6):
        chain = [text]
        for _ in range(12):
            chain.append(_edit(rng, chain[-1], valid_only))
        for granularity in ("function", "statement"):
            _reset_caches()
            monkeypatch.setattr(trees, "WINDOWED_PARSE", True)
            got = [_units(x, y, granularity) for x, y in zip(chain, chain[1:])]
            windowed_steps += sum(1 for x in chain[:-1]
                                  if trees._bounds_cache().get(("python", x)) is not None)
            _reset_caches()
            monkeypatch.setattr(trees, "WINDOWED_PARSE", False)
            want = [_units(x, y, granularity) for x, y in zip(chain, chain[1:])]
            for k, (g, w) in enumerate(zip(got, want)):
                assert g == w, f"step {k} of a chain on a {len(text)}-char file ({granularity})"
    # the windowed path was taken (it is only for texts without syntax errors)
    assert windowed_steps >= (40 if valid_only else 15)


@pytest.mark.parametrize("seed", range(4))
def test_carried_boundaries_match_a_fresh_parse(seed):
    rng = random.Random(100 + seed)
    parser = trees._parser("python")
    for text in rng.sample(_corpus(), 5):
        _reset_caches()
        cur = text
        for _ in range(15):
            nxt = _edit(rng, cur)
            split_units({"m.py": cur}, {"m.py": nxt})
            carried = trees._bounds_cache().get(("python", nxt), "absent")
            if carried != "absent":
                fresh = trees._boundaries(parser.parse(nxt.encode("utf-8", "surrogateescape")).root_node)
                assert carried == fresh
            cur = nxt


def test_window_is_small_and_step_parses_no_whole_file(monkeypatch):
    """After the first step of an episode, a step parses windows, not the file."""
    body = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y\n\n\n" for i in range(200))
    calls = []
    real = trees._full_tree

    def spy(language, text, data=None):
        calls.append(len(text))
        return real(language, text, data)

    monkeypatch.setattr(trees, "_full_tree", spy)
    _reset_caches()
    cur = body
    for i in range(0, 200, 20):
        nxt = cur.replace(f"    y = x + {i}\n", f"    y = x + {i}\n    y *= 2\n")
        us = split_units({"m.py": cur}, {"m.py": nxt})
        assert [u.scope for u in us] == [f"function:f{i}"]
        cur = nxt
    assert len(calls) == 1  # the episode's first text only


def test_find_lines_matches_split_and_strip():
    """The span locator's per-key line search equals a scan of every stripped line."""
    rng = random.Random(7)
    pool = ["}", "  }", "return x", "    return x  ", "x", "", "\t}\t", "}}", "a}", "\x0c}", "return xy", " \r"]
    for _ in range(3000):
        text = "\n".join(rng.choice(pool) for _ in range(rng.randint(0, 12))) + rng.choice(["", "\n"])
        for key in ("}", "return x", "x", "}}"):
            want = [i for i, line in enumerate(text.split("\n")) if line.strip() == key]
            assert spans._find_lines(text, key) == want, (text, key)
