"""Tests for codegym.edits.units: syntax-aware diff units, signatures, spans."""

from __future__ import annotations

import json
import random
import re

import pytest

from codegym.edits import textdiff, trees
from codegym.edits import units as diffs
from codegym.edits.records import DiffUnit, EditBlock
from codegym.edits.similarity import line_similarity, normalise_lines
from codegym.edits.spans import attach_spans
from codegym.edits.units import split_units, unit_similarity


def grammar_or_skip(language: str) -> None:
    if trees._parser(language) is None:
        pytest.skip(f"tree-sitter grammar for {language} is not installed")


def units_of(path, old, new, **kw):
    return split_units({path: old}, {path: new}, **kw)


# ---------------------------------------------------------------------------
# Two functions changed in one hunk -> two units, per language
# ---------------------------------------------------------------------------

LANG_CASES = {
    "python": ("a.py", """\
import sys

class Foo:
    def method(self, a):
        return a + 1
def solve(n):
    return n * 2
""", ("return a + 1", "return a + 100"), ("return n * 2", "return n * 3"),
        ["class:Foo.method", "function:solve"]),
    "c": ("m.c", """\
#include <stdio.h>
static int *helper(int *p) {
    return p + 1;
}
int solve(int n) {
    return n * 2;
}
""", ("return p + 1;", "return p + 2;"), ("return n * 2;", "return n * 3;"),
        ["function:helper", "function:solve"]),
    "cpp": ("m.cpp", """\
namespace ns {
struct Foo {
    int method(int a) const {
        return a + 1;
    }
};
int solve(int n) {
    return n * 2;
}
}
""", ("return a + 1;", "return a + 100;"), ("return n * 2;", "return n * 3;"),
        ["namespace:ns.Foo.method", "namespace:ns.solve"]),
    "julia": ("m.jl", """\
function helper(x::Int)
    return x + 1
end
function solve(n)
    return n * 2
end
""", ("return x + 1", "return x + 100"), ("return n * 2", "return n * 3"),
        ["function:helper", "function:solve"]),
    "javascript": ("m.js", """\
class Foo {
  method(a) {
    return a + 1;
  }
}
const solve = (n) => {
  return n * 2;
};
""", ("return a + 1;", "return a + 100;"), ("return n * 2;", "return n * 3;"),
        ["class:Foo.method", "function:solve"]),
}


@pytest.mark.parametrize("language", sorted(LANG_CASES))
def test_two_functions_in_one_hunk_give_two_units(language):
    grammar_or_skip(language)
    path, old, (a1, a2), (b1, b2), scopes = LANG_CASES[language]
    new = old.replace(a1, a2).replace(b1, b2)
    hunks = units_of(path, old, new, granularity="hunk")
    assert len(hunks) == 1  # the changes are close: one unified-diff hunk
    units = units_of(path, old, new)
    assert [u.scope for u in units] == scopes
    assert [u.kind for u in units] == ["replace", "replace"]
    assert [u.post_image for u in units] == [[a2.strip()], [b2.strip()]]
    assert all(u.hunk == 0 and u.language == language for u in units)
    # line numbers point at the changed lines
    new_lines = new.split("\n")
    old_lines = old.split("\n")
    for u in units:
        assert [new_lines[j - 1] for j in u.added] == u.post_raw
        assert [old_lines[i - 1] for i in u.removed] == u.pre_raw


@pytest.mark.parametrize("language", sorted(LANG_CASES))
def test_syntax_errors_never_raise(language):
    path, old, (a1, a2), (b1, b2), _ = LANG_CASES[language]
    broken = old.replace(a1, a2 + " ((( {{ \"").replace(b1, b2)
    for g in diffs.GRANULARITIES:
        units = units_of(path, old, broken, granularity=g)
        assert units and sum(u.n_lines for u in units) == 4
    # garbage in, units out
    assert units_of(path, "\x00\xff}{)(\n" * 3, "end end }}} def (\n" * 2)


def test_unknown_language_gives_hunk_level_units():
    units = units_of("notes.txt", "a\nb\nc\n", "a\nB\nc\nd\n")
    assert len(units) == 1 and units[0].scope == "module" and units[0].language is None
    # two change blocks of one hunk in one scope: one unit, exact changed lines
    u = units[0]
    assert (u.kind, u.pre_raw, u.post_raw, u.removed, u.added) == ("replace", ["b"], ["B", "d"], [2], [2, 4])
    assert (u.old_start, u.old_lines, u.new_start, u.new_lines) == (2, 1, 2, 3)
    # language_of overrides the extension
    code = "def f():\n    return 1\n\ndef g():\n    return 2\n"
    units = split_units({"script": code}, {"script": code.replace("1", "9").replace("2", "8")},
                        language_of={"script": "py"})
    assert [u.scope for u in units] == ["function:f", "function:g"]


# ---------------------------------------------------------------------------
# Granularities
# ---------------------------------------------------------------------------

BODY = """\
def solve(xs):
    total = 0
    for x in xs:
        total += x
    best = max(xs)
    return total, best


def other():
    return 0
"""


def test_one_function_one_unit_and_statement_split():
    new = BODY.replace("total = 0", "total = 1").replace("best = max(xs)", "best = min(xs)")
    fn = units_of("s.py", BODY, new)
    assert len(fn) == 1 and fn[0].scope == "function:solve"
    assert fn[0].pre_image == ["total = 0", "best = max(xs)"]
    assert (fn[0].old_start, fn[0].old_lines) == (2, 4)  # covers the unchanged lines between
    st = units_of("s.py", BODY, new, granularity="statement")
    assert [(u.scope, u.post_image) for u in st] == [
        ("function:solve", ["total = 1"]), ("function:solve", ["best = min(xs)"])]
    # a change inside one compound statement stays one statement unit
    new2 = BODY.replace("for x in xs:\n        total += x", "for x in sorted(xs):\n        total += x * x")
    st2 = units_of("s.py", BODY, new2, granularity="statement")
    assert len(st2) == 1 and st2[0].n_lines == 4


def test_added_and_deleted_functions():
    added = BODY.replace("\n\ndef other():", "\n\ndef helper(a):\n    # doubles\n    return 2 * a\n\n\ndef other():")
    units = units_of("s.py", BODY, added)
    assert [(u.scope, u.kind) for u in units] == [("function:helper", "add")]
    assert units[0].post_image == ["def helper(a):", "    # doubles", "    return 2 * a"]
    removed = units_of("s.py", added, BODY)
    assert [(u.scope, u.kind) for u in removed] == [("function:helper", "delete")]
    u = removed[0]
    assert u.new_lines == 0 and u.added == [] and u.post_image == []
    # whole files
    fa = split_units({}, {"n.py": "def f():\n    pass\n"})
    fd = split_units({"n.py": "def f():\n    pass\n"}, {})
    assert [(u.kind, u.scope, u.old_start, u.new_start) for u in fa] == [("add", "function:f", 0, 1)]
    assert [(u.kind, u.scope, u.old_start, u.new_start) for u in fd] == [("delete", "function:f", 1, 0)]


def test_edit_spanning_two_functions_in_one_block():
    old = "def f():\n    return 1\ndef g():\n    return 2\n"
    new = "def f():\n    return 10\ndef g():\n    return 20\n"
    # make it one contiguous replace block: change the def line of g as well
    new = new.replace("def g():", "def g(x=0):")
    units = units_of("x.py", old, new)
    assert [u.scope for u in units] == ["function:f", "function:g"]
    assert units[1].pre_image == ["def g():", "    return 2"]


def test_units_cover_exactly_the_diff():
    """Property check over random edits: whatever the granularity, units
    partition the changed lines of the unified diff."""
    rng = random.Random(3)
    pool = ["def f(x):", "    return x", "    y = x + 1", "class A:", "    def m(self):",
            "        pass", "", "# comment", "for i in range(3):", "    print(i)", "x = ("]
    for _ in range(60):
        old = "\n".join(rng.choice(pool) for _ in range(rng.randrange(0, 25))) + "\n"
        lines = old.split("\n")
        for _ in range(rng.randrange(1, 5)):
            k = rng.randrange(0, len(lines))
            op = rng.random()
            if op < 0.4:
                lines[k] = rng.choice(pool)
            elif op < 0.7:
                lines.insert(k, rng.choice(pool))
            elif len(lines) > 1:
                del lines[k]
        new = "\n".join(lines)
        diff_text = textdiff.unified_diff({"r.py": old}, {"r.py": new})
        changed = sum(1 for l in diff_text.splitlines()
                      if l[:1] in "+-" and not l.startswith(("+++", "---")))
        new_l, old_l = new.split("\n"), old.split("\n")
        for g in diffs.GRANULARITIES:
            units = units_of("r.py", old, new, granularity=g)
            assert sum(u.n_lines for u in units) == changed
            for u in units:
                assert [new_l[j - 1] for j in u.added] == u.post_raw
                assert [old_l[i - 1] for i in u.removed] == u.pre_raw
                assert u.kind == ("replace" if u.removed and u.added else "add" if u.added else "delete")
        fine = len(units_of("r.py", old, new, granularity="statement"))
        assert len(units_of("r.py", old, new, granularity="hunk")) <= len(units_of("r.py", old, new)) <= fine


# ---------------------------------------------------------------------------
# Signatures and similarity
# ---------------------------------------------------------------------------


def test_same_edit_at_different_offsets_has_same_signature():
    fix_old = "    if n < 0:\n        return 0\n"
    fix_new = "    if n <= 0:\n        return 0\n"
    a_old = "def solve(n):\n" + fix_old + "    return n\n"
    b_old = ("import os\nimport sys\n\nX = 1\n\n\ndef solve(n):\n    # same function, moved\n"
             + fix_old + "    return n\n")
    # another trajectory where the same code is nested one level deeper
    c_old = "class S:\n    def solve(self, n):\n" + fix_old.replace("    ", "        ", 1).replace(
        "        return", "            return") + "        return n\n"
    ua = units_of("a.py", a_old, a_old.replace(fix_old, fix_new))
    ub = units_of("a.py", b_old, b_old.replace(fix_old, fix_new))
    uc = units_of("a.py", c_old, c_old.replace("if n < 0", "if n <= 0"))
    assert len(ua) == len(ub) == len(uc) == 1
    assert ua[0].old_start != ub[0].old_start
    assert ua[0].signature == ub[0].signature == uc[0].signature
    assert re.fullmatch(r"[0-9a-f]{64}", ua[0].signature)
    other = units_of("a.py", a_old, a_old.replace(fix_old, fix_old.replace("0", "1")))
    assert other[0].signature != ua[0].signature
    # kind is part of the signature
    add = units_of("a.py", "x\n", "x\ny\n")[0]
    dele = units_of("a.py", "x\ny\n", "x\n")[0]
    assert add.signature != dele.signature


def test_normalisation_and_similarity():
    assert normalise_lines(["    a = 1   ", "", "        b", "   \t"]) == ["a = 1", "    b"]
    assert line_similarity(["  x = 1", "", "  y = 2"], ["x = 1", "y = 2  "]) == 1.0
    assert line_similarity(["a"], ["b"]) == 0.0
    assert line_similarity([], []) == 1.0
    assert 0.0 < line_similarity(["a", "b", "c"], ["a", "b", "d"]) < 1.0
    u1 = units_of("a.py", "x = 1\n", "x = 2\n")[0]
    u2 = units_of("a.py", "    x = 1\n", "    x = 3\n")[0]
    u3 = units_of("a.py", "x = 1\n", "")[0]
    assert 0.0 < unit_similarity(u1, u2) < 1.0
    assert unit_similarity(u1, u1) == 1.0
    assert unit_similarity(u1, u3) == 0.0  # replace vs delete


def test_json_round_trip():
    units = units_of("a.py", BODY, BODY.replace("total = 0", "total = 1"),
                     action_spans=("x", [EditBlock("a.py", 0, 1)]))
    blob = json.dumps([u.to_dict() for u in units])
    back = [DiffUnit.from_dict(d) for d in json.loads(blob)]
    assert back == units and isinstance(back[0].span, tuple)


def test_parser_for():
    grammar_or_skip("python")
    assert trees.parser_for("py") is trees.parser_for("python") is not None
    assert trees.parser_for("cobol") is None


# ---------------------------------------------------------------------------
# Spans
# ---------------------------------------------------------------------------

OLD = "def f(x):\n    return x\n\n\ndef g(x):\n    return x\n\n\ndef h(x):\n    return x\n"
NEW = OLD.replace("def g(x):\n    return x", "def g(x):\n    y = x * 2\n    return y")


def assert_contains_post(action: str, unit: DiffUnit) -> str:
    assert unit.span is not None
    s, e = unit.span
    piece = action[s:e]
    pos = 0
    for line in unit.post_raw:
        if line.strip():
            pos = piece.index(line.strip(), pos)  # in order
    return piece


def test_span_whole_file_block():
    action = f"I'll double it.\n```python\n{NEW}```\n"
    start = action.index("```python\n") + len("```python\n")
    units = split_units({"a.py": OLD}, {"a.py": NEW},
                        action_spans=(action, [EditBlock("a.py", start, start + len(NEW))]))
    assert len(units) == 1
    piece = assert_contains_post(action, units[0])
    assert piece == "    y = x * 2\n    return y"
    # the span sits inside g, not at an identical line elsewhere
    assert units[0].span[0] > action.index("def g")


def test_span_search_replace_is_placed_by_context():
    # "    return x" appears in f, g and h; the REPLACE block repeats it
    new = OLD.replace("def h(x):\n    return x", "def h(x):\n    return x\n    return x")
    action = ("a.py\n<<<<<<< SEARCH\ndef h(x):\n    return x\n=======\n"
              "def h(x):\n    return x\n    return x\n>>>>>>> REPLACE\n")
    start = action.index("=======\n") + 8
    end = action.index(">>>>>>> REPLACE")
    units = split_units({"a.py": OLD}, {"a.py": new}, action_spans=(action, [EditBlock("a.py", start, end)]))
    assert len(units) == 1 and units[0].scope == "function:h"
    s, e = units[0].span
    assert start <= s < e <= end
    assert action[s:e].strip() == "return x"


def test_span_two_search_replace_blocks_same_file():
    new = OLD.replace("def f(x):\n    return x", "def f(x):\n    return x + 1").replace(
        "def h(x):\n    return x", "def h(x):\n    return x - 1")
    action = ("first\n<<<<<<< SEARCH\ndef f(x):\n    return x\n=======\ndef f(x):\n    return x + 1\n"
              ">>>>>>> REPLACE\n"
              "second\n<<<<<<< SEARCH\ndef h(x):\n    return x\n=======\ndef h(x):\n    return x - 1\n"
              ">>>>>>> REPLACE\n")
    blocks = [m.span(1) for m in re.finditer(r"=======\n(.*?)>>>>>>> REPLACE", action, re.S)]
    edits = [EditBlock("a.py", s, e) for s, e in blocks]
    units = split_units({"a.py": OLD}, {"a.py": new}, action_spans=(action, edits))
    assert [u.scope for u in units] == ["function:f", "function:h"]
    for u, (s, e) in zip(units, blocks):
        assert s <= u.span[0] < u.span[1] <= e
        assert_contains_post(action, u)


def test_span_unified_diff_action_multi_hunk():
    old = "".join(f"line {i}\n" for i in range(40))
    new = old.replace("line 3\n", "line three\n").replace("line 30\n", "line thirty\nline 30.5\n")
    patch = textdiff.unified_diff({"t.txt": old}, {"t.txt": new})
    action = f"Patch:\n```diff\n{patch}```"
    start = action.index("```diff\n") + 8
    units = split_units({"t.txt": old}, {"t.txt": new},
                        action_spans=(action, [EditBlock("t.txt", start, action.rindex("```"))]))
    assert len(units) == 2
    for u in units:
        piece = assert_contains_post(action, u)
        # the span covers the -/+ lines of its own hunk and nothing of the other
        assert all(l in piece for l in u.pre_raw)
    assert action[units[0].span[0]:units[0].span[1]] == "line 3\n+line three"
    assert "line three" not in action[units[1].span[0]:units[1].span[1]]


def test_span_deletions():
    new = OLD.replace("\n\ndef h(x):\n    return x\n", "")
    # whole-file edit: a deletion is credited to the edit that caused it
    action = f"```python\n{new}```"
    edit = EditBlock("a.py", 10, 10 + len(new))
    (u,) = split_units({"a.py": OLD}, {"a.py": new}, action_spans=(action, [edit]))
    assert u.kind == "delete" and u.span == (edit.start, edit.end)
    # diff edit: the span is the removed lines themselves
    patch = textdiff.unified_diff({"a.py": OLD}, {"a.py": new})
    (u,) = split_units({"a.py": OLD}, {"a.py": new},
                       action_spans=(patch, [EditBlock("a.py", 0, len(patch))]))
    assert patch[u.span[0]:u.span[1]] == "def h(x):\n-    return x"
    # no edit for the path: no span
    (u,) = split_units({"a.py": OLD}, {"a.py": new}, action_spans=(patch, [EditBlock("b.py", 0, 1)]))
    assert u.span is None


def test_span_json_tool_call_with_offset_map():
    args = json.dumps({"path": "a.py", "content": NEW})
    action = '{"name": "write_file", "arguments": ' + args + "}"
    lit = action.index('"content": "') + len('"content": "')
    text, omap, i = [], [], lit
    while action[i] != '"':  # decode the JSON string, remembering where each char came from
        omap.append(i)
        step = 2 if action[i] == "\\" else 1
        text.append(json.loads('"' + action[i:i + step] + '"'))
        i += step
    omap.append(i)
    edit = EditBlock("a.py", lit, i, text_offset_map=omap, text="".join(text))
    (u,) = split_units({"a.py": OLD}, {"a.py": NEW}, action_spans=(action, [edit]))
    assert action[u.span[0]:u.span[1]] == "    y = x * 2\\n    return y"
    with pytest.raises(ValueError, match="text_offset_map"):
        attach_spans([u], action, [EditBlock("a.py", 0, 5, text="abc")])


def test_attach_spans_without_files_and_crlf():
    old = "a = 1\r\nb = 2\r\n"
    new = "a = 1\r\nb = 3\r\n"
    units = split_units({"w.py": old}, {"w.py": new})
    action = "```\r\n" + new + "```"
    attach_spans(units, action, [EditBlock("w.py", 5, 5 + len(new))])
    assert action[units[0].span[0]:units[0].span[1]] == "b = 3"


def test_edit_spans_outside_text_are_rejected():
    units = units_of("a.py", "x\n", "y\n")
    with pytest.raises(ValueError, match="outside"):
        attach_spans(units, "short", [EditBlock("a.py", 0, 99)])
