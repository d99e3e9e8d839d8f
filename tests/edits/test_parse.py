"""Tests of codegym.edits.parse and codegym.edits.render: every action format, round trips through
render_action, exact spans, error messages, format restrictions, and hostile
inputs (which must give feedback, never an exception)."""

from __future__ import annotations

import json
import os
import random

import pytest

from codegym.edits.formats import EDIT_FORMATS, FORMATS
from codegym.edits.parse import MAX_ACTION_CHARS, apply_changes, parse_action
from codegym.edits.records import EditBlock, EditSpan, ParsedAction
from codegym.edits.render import TOOL_SCHEMAS, format_help, render_action, tool_schemas, view_file

MAIN = "def solve(x):\n    return x\n\n\nprint(solve(3))\n"
FILES = {
    "main.py": MAIN,
    "util.py": "A = 1\nB = 2\nA = 1\n",
    "nonl.py": "a\nb",
    "empty.py": "",
}


def parse(text, files=FILES, formats=None, **kw) -> ParsedAction:
    r = parse_action(text, files, "main.py", formats, **kw)
    check_invariants(text, r)
    return r


def check_invariants(text, r: ParsedAction) -> None:
    """What must hold for any result: atomic errors, exact spans."""
    if r.error is not None:
        assert isinstance(r.error, str) and r.error
        assert "internal error" not in r.error
        assert r.changes == {} and r.edit_spans == [] and r.tool_calls == [] and not r.submit
        return
    if isinstance(text, str):
        for sp in r.edit_spans:
            assert sp.path in r.changes and r.changes[sp.path] is not None
            assert text[sp.start:sp.end] == r.changes[sp.path][sp.file_start:sp.file_end], sp
            assert sp.source_start <= sp.start <= sp.end <= sp.source_end
        for b in r.edit_blocks:
            if b.text is not None:
                assert len(b.text_offset_map) == len(b.text) + 1
            else:
                assert 0 <= b.start <= b.end <= len(text)


def covered(text, r, path) -> str:
    """The part of the new content of path that spans attribute to the text."""
    return "".join(text[s.start:s.end] for s in sorted(r.edit_spans, key=lambda s: s.file_start) if s.path == path)


# ---------------------------------------------------------------------------
# code blocks
# ---------------------------------------------------------------------------


def test_code_block_without_path_replaces_main_file():
    r = parse("Here it is:\n```python\ndef solve(x):\n    return 2 * x\n```\nDone.")
    assert r.error is None
    assert r.changes == {"main.py": "def solve(x):\n    return 2 * x\n"}
    assert r.formats_used == ["code_block"]
    assert not r.submit


@pytest.mark.parametrize("opening", [
    "```python path=util.py",
    "```python file=util.py",
    "```python filename=util.py",
    '```python path="util.py"',
    "```python:util.py",
    "```python util.py",
    "```util.py",
    "```path=util.py",
])
def test_code_block_path_in_info_string(opening):
    r = parse(f"{opening}\nA = 5\n```\n")
    assert r.error is None, r.error
    assert r.changes == {"util.py": "A = 5\n"}


@pytest.mark.parametrize("label", ["util.py", "**util.py**", "`util.py`:", "### util.py", "File: util.py"])
def test_code_block_path_on_line_above(label):
    r = parse(f"{label}\n```python\nA = 5\n```\n")
    assert r.changes == {"util.py": "A = 5\n"}, r.error


def test_code_block_path_comment_first_line_is_not_written():
    r = parse("```python\n# path: util.py\nA = 6\n```\n")
    assert r.changes == {"util.py": "A = 6\n"}
    r = parse("```cpp\n// file: lib/x.cpp\nint x;\n```\n")
    assert r.changes == {"lib/x.cpp": "int x;\n"}


def test_several_blocks_several_files_and_new_file():
    text = "```python path=util.py\nA = 0\n```\n\n```python path=pkg/new.py\nN = 1\n```\n"
    r = parse(text)
    assert r.changes == {"util.py": "A = 0\n", "pkg/new.py": "N = 1\n"}


def test_last_pathless_block_wins_and_others_are_reported():
    text = ("Example usage:\n```python\nsolve(3)  # 6\n```\nThe solution:\n"
            "```python\ndef solve(x):\n    return 6\n```\n")
    r = parse(text)
    assert r.changes == {"main.py": "def solve(x):\n    return 6\n"}
    assert any("only the last one" in w for w in r.warnings)


def test_blocks_that_are_not_code_are_not_edits():
    r = parse("Output:\n```text\n6\n```\n```console\n$ python main.py\n```\n")
    assert r.error is not None and "```text" in r.error
    r = parse("```python\nprint(1)\n```\nexpected:\n```output\n1\n```\n")
    assert r.changes == {"main.py": "print(1)\n"}


def test_block_in_other_language_does_not_replace_main_file():
    r = parse("```cpp\nint main() {}\n```\n")
    assert r.error is not None
    assert any("cpp block cannot replace main.py" in w for w in r.warnings) or "cpp" in r.error
    r = parse("```cpp path=fast.cpp\nint main() {}\n```\n")
    assert r.changes == {"fast.cpp": "int main() {}\n"}


def test_fence_nesting_and_longer_fences():
    # a markdown string inside Python code: the inner ```python ... ``` is content
    text = "```python\nDOC = '''\n```python\nx = 1\n```\n'''\n```\n"
    r = parse(text)
    assert r.changes == {"main.py": "DOC = '''\n```python\nx = 1\n```\n'''\n"}
    text = "````markdown path=README.md\n# T\n```python\nx\n```\n````\n"
    r = parse(text)
    assert r.changes == {"README.md": "# T\n```python\nx\n```\n"}
    # inline ``` in a string is not a fence at all
    r = parse('```python\nprint("```")\n```\n')
    assert r.changes == {"main.py": 'print("```")\n'}


def test_indented_fence_strips_its_indentation():
    text = "1. Change it:\n   ```python\n   def solve(x):\n       return 1\n   ```\n"
    r = parse(text)
    assert r.changes == {"main.py": "def solve(x):\n    return 1\n"}


def test_unterminated_code_block_is_an_error():
    r = parse("```python\ndef solve(x):\n    return")
    assert r.error is not None and "never closed" in r.error and "line 1" in r.error
    # an unterminated block that is not code only warns
    r = parse("```python\nprint(2)\n```\nsubmit\n```text\nrunning...")
    assert r.error is None and r.submit and any("never closed" in w for w in r.warnings)


def test_rewriting_identical_content_is_not_a_change():
    r = parse(f"```python\n{MAIN}```\n")
    assert r.error is None and r.changes == {}
    assert any("unchanged" in w for w in r.warnings)


# ---------------------------------------------------------------------------
# unified diffs
# ---------------------------------------------------------------------------


def test_diff_in_fence_with_wrong_line_numbers_and_counts():
    text = ("```diff\n--- a/main.py\n+++ b/main.py\n@@ -40,7 +40,9 @@\n def solve(x):\n-    return x\n"
            "+    return x + 1\n@@ -99,1 +99,1 @@\n-print(solve(3))\n+print(solve(4))\n```\n")
    r = parse(text)
    assert r.error is None, r.error
    assert r.changes == {"main.py": "def solve(x):\n    return x + 1\n\n\nprint(solve(4))\n"}
    assert r.formats_used == ["unified_diff"]


def test_bare_diff_and_git_diff():
    text = "I changed it:\n--- main.py\n+++ main.py\n@@ -2 +2 @@\n-    return x\n+    return -x\nThat's it."
    assert parse(text).changes["main.py"].startswith("def solve(x):\n    return -x\n")
    text = ("diff --git a/util.py b/util.py\nindex 111..222 100644\n--- a/util.py\n+++ b/util.py\n"
            "@@ -1,2 +1,2 @@\n-A = 1\n+A = 10\n B = 2\n")
    assert parse(text).changes == {"util.py": "A = 10\nB = 2\nA = 1\n"}


def test_diff_hunk_placed_nearest_the_stated_line():
    files = {"a.py": "x\ny\nx\ny\nx\ny\n"}
    for line, want in ((1, "x\nY\nx\ny\nx\ny\n"), (3, "x\ny\nx\nY\nx\ny\n"), (5, "x\ny\nx\ny\nx\nY\n")):
        r = parse(f"```diff\n--- a/a.py\n+++ b/a.py\n@@ -{line},2 +{line},2 @@\n x\n-y\n+Y\n```", files)
        assert r.changes == {"a.py": want}


def test_diff_trailing_whitespace_fallback_keeps_file_context():
    files = {"a.py": "def f():   \n    return 1\n"}
    r = parse("```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1  \n+    return 2\n```", files)
    assert r.changes == {"a.py": "def f():   \n    return 2\n"}


def test_diff_new_file_delete_rename_and_multiple_files():
    text = ("```diff\n--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+X = 1\n+Y = 2\n"
            "--- a/util.py\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-A = 1\n-B = 2\n-A = 1\n"
            "diff --git a/nonl.py b/moved.py\nsimilarity index 100%\nrename from nonl.py\nrename to moved.py\n```\n")
    r = parse(text)
    assert r.error is None, r.error
    assert r.changes == {"pkg/new.py": "X = 1\nY = 2\n", "util.py": None, "nonl.py": None, "moved.py": "a\nb"}


def test_diff_no_newline_markers():
    text = ("```diff\n--- a/nonl.py\n+++ b/nonl.py\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
            "+c\n\\ No newline at end of file\n```")
    assert parse(text).changes == {"nonl.py": "a\nc"}
    # appending after a last line without newline does not glue the lines together
    text = "```diff\n--- a/nonl.py\n+++ b/nonl.py\n@@ -2 +2,2 @@\n b\n+c\n```"
    assert parse(text).changes == {"nonl.py": "a\nb\nc\n"}


def test_diff_headerless_hunk_targets_main_file_and_blank_context_lines():
    text = "```diff\n@@ -1,5 +1,5 @@\n def solve(x):\n-    return x\n+    return 0\n\n\n print(solve(3))\n```"
    r = parse(text)
    assert r.changes == {"main.py": "def solve(x):\n    return 0\n\n\nprint(solve(3))\n"}


def test_diff_hunk_that_does_not_apply_names_hunk_and_file_and_applies_nothing():
    text = ("```python path=util.py\nA = 9\n```\n"
            "```diff\n--- a/main.py\n+++ b/main.py\n@@ -1,2 +1,2 @@\n def solve(x):\n-    return x\n+    return 1\n"
            "@@ -10,4 +10,5 @@\n-print(solve(5))\n+print(solve(4))\n```\n")
    r = parse(text)
    assert r.error is not None
    assert "hunk 2 (@@ -10,4 +10,5 @@) of main.py did not apply: context not found" in r.error
    assert "print(solve(3))" in r.error  # the closest line is shown
    assert r.changes == {}


def test_diff_errors():
    r = parse("```diff\n--- a/missing.py\n+++ b/missing.py\n@@ -1 +1 @@\n-x\n+y\n```")
    assert r.error is not None and "missing.py does not exist" in r.error
    r = parse("```diff\n--- /dev/null\n+++ b/util.py\n@@ -0,0 +1 @@\n+x\n```")
    assert r.error is not None and "already exists" in r.error
    r = parse("```diff\n--- a/main.py\n+++ b/main.py\n@@ -1,2 +1,2 @@\n def solve(x):\nreturn x\n```")
    assert r.error is not None and "not part of a hunk" in r.error
    r = parse("```diff\nthis is not a diff\n```")
    assert r.error is not None and "no file headers" in r.error


# ---------------------------------------------------------------------------
# SEARCH/REPLACE
# ---------------------------------------------------------------------------


def test_search_replace_bare_and_fenced_aider_style():
    r = parse("util.py\n<<<<<<< SEARCH\nB = 2\n=======\nB = 3\n>>>>>>> REPLACE\n")
    assert r.changes == {"util.py": "A = 1\nB = 3\nA = 1\n"}
    assert r.formats_used == ["search_replace"]
    text = "util.py\n```python\n<<<<<<< SEARCH\nB = 2\n=======\nB = 4\n>>>>>>> REPLACE\n```\n"
    assert parse(text).changes == {"util.py": "A = 1\nB = 4\nA = 1\n"}


def test_search_replace_path_rules():
    # no path: main file; a later block inherits the previous block's path
    text = ("<<<<<<< SEARCH\n    return x\n=======\n    return 1\n>>>>>>> REPLACE\n"
            "util.py\n<<<<<<< SEARCH\nB = 2\n=======\nB = 3\n>>>>>>> REPLACE\n"
            "<<<<<<< SEARCH\nB = 3\nA = 1\n=======\nB = 3\nA = 7\n>>>>>>> REPLACE\n")
    r = parse(text)
    assert r.changes == {"main.py": MAIN.replace("return x", "return 1"), "util.py": "A = 1\nB = 3\nA = 7\n"}


def test_search_replace_whitespace_levels():
    # trailing whitespace
    r = parse("util.py\n<<<<<<< SEARCH\nB = 2   \n=======\nB = 3\n>>>>>>> REPLACE\n")
    assert r.changes == {"util.py": "A = 1\nB = 3\nA = 1\n"}
    # uniform indentation shift: REPLACE is re-indented the same way
    files = {"m.py": "class K:\n    def f(self):\n        return 1\n"}
    text = "m.py\n<<<<<<< SEARCH\ndef f(self):\n    return 1\n=======\ndef f(self):\n    return 2\n>>>>>>> REPLACE\n"
    r = parse(text, files)
    assert r.changes == {"m.py": "class K:\n    def f(self):\n        return 2\n"}
    assert any("indentation" in w for w in r.warnings)


def test_search_replace_errors_name_the_block():
    r = parse("util.py\n<<<<<<< SEARCH\nA = 1\n=======\nA = 5\n>>>>>>> REPLACE\n")
    assert r.error is not None
    assert "SEARCH/REPLACE block 1 (util.py, line 2)" in r.error and "matches 2 places" in r.error
    text = ("util.py\n<<<<<<< SEARCH\nB = 2\n=======\nB = 3\n>>>>>>> REPLACE\n"
            "main.py\n<<<<<<< SEARCH\n    return y\n=======\n    return 1\n>>>>>>> REPLACE\n")
    r = parse(text)
    assert r.error is not None and "SEARCH/REPLACE block 2 (main.py, line 8)" in r.error
    assert "not found" in r.error and r.changes == {}
    r = parse("util.py\n<<<<<<< SEARCH\nB = 2\n=======\nB = 3\n")
    assert r.error is not None and "missing the >>>>>>> REPLACE line" in r.error
    r = parse("util.py\n<<<<<<< SEARCH\nB = 2\n>>>>>>> REPLACE\n")
    assert r.error is not None and "missing the =======" in r.error
    r = parse("util.py\n<<<<<<< SEARCH\n=======\nB = 3\n>>>>>>> REPLACE\n")
    assert r.error is not None and "already exists" in r.error


def test_search_replace_creates_file_and_fills_empty_file():
    r = parse("pkg/mod.py\n<<<<<<< SEARCH\n=======\nX = 1\n>>>>>>> REPLACE\n"
              "empty.py\n<<<<<<< SEARCH\n=======\nE = 1\n>>>>>>> REPLACE\n")
    assert r.changes == {"pkg/mod.py": "X = 1\n", "empty.py": "E = 1\n"}


def test_search_replace_keeps_missing_final_newline():
    r = parse("nonl.py\n<<<<<<< SEARCH\nb\n=======\nc\n>>>>>>> REPLACE\n")
    assert r.changes == {"nonl.py": "a\nc"}


# ---------------------------------------------------------------------------
# tool calls
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    '{"name": "str_replace", "arguments": {"path": "util.py", "old_str": "B = 2", "new_str": "B = 3"}}',
    '{"type": "function", "function": {"name": "str_replace", "arguments": '
    '"{\\"path\\": \\"util.py\\", \\"old_str\\": \\"B = 2\\", \\"new_str\\": \\"B = 3\\"}"}}',
    '[{"name": "str_replace", "parameters": {"path": "util.py", "old_str": "B = 2", "new_str": "B = 3"}}]',
    '{"tool_calls": [{"type": "function", "function": {"name": "str_replace", "arguments": '
    '{"path": "util.py", "old_str": "B = 2", "new_str": "B = 3"}}}]}',
    '<tool_call>\n{"name": "str_replace", "arguments": {"path": "util.py", "old_str": "B = 2", "new_str": "B = 3"}}'
    '\n</tool_call>',
    'Let me fix it.\n```json\n{"name": "str_replace", "arguments": {"path": "util.py", "old_str": "B = 2", '
    '"new_str": "B = 3"}}\n```',
])
def test_tool_call_shapes(text):
    r = parse(text)
    assert r.error is None, r.error
    assert r.changes == {"util.py": "A = 1\nB = 3\nA = 1\n"}
    assert r.formats_used == ["tool_call"]


def test_tools_write_insert_view_run_submit():
    calls = [
        {"name": "write_file", "arguments": {"path": "new.py", "content": "X = \"é\"\n\tY = 1\n"}},
        {"name": "insert", "arguments": {"path": "main.py", "line": 0, "text": "import sys"}},
        {"name": "insert", "arguments": {"path": "nonl.py", "line": 2, "text": "c\n"}},
        {"name": "view_file", "arguments": {"path": "main.py", "start_line": 1, "end_line": 2}},
        {"name": "run_tests", "arguments": {}},
        {"name": "submit", "arguments": {}},
    ]
    text = json.dumps(calls)
    r = parse(text)
    assert r.error is None, r.error
    assert r.changes == {"new.py": "X = \"é\"\n\tY = 1\n", "main.py": "import sys\n" + MAIN, "nonl.py": "a\nb\nc\n"}
    assert [(t.name, t.arguments) for t in r.tool_calls] == [
        ("view_file", {"path": "main.py", "start_line": 1, "end_line": 2}), ("run_tests", {})]
    assert text[r.tool_calls[0].start:r.tool_calls[0].end].startswith('{"name": "view_file"')
    assert r.submit and r.formats_used == ["tool_call", "submit"]


@pytest.mark.parametrize("call,msg", [
    ({"name": "delete_everything", "arguments": {}}, "unknown tool 'delete_everything'"),
    ({"name": "str_replace", "arguments": {"path": "util.py", "old_str": "B = 2"}}, "missing argument 'new_str'"),
    ({"name": "str_replace", "arguments": {"file": "util.py", "old_str": "B", "new_str": "C"}},
     "unknown argument 'file'"),
    ({"name": "str_replace", "arguments": {"path": "util.py", "old_str": "A = 1", "new_str": "x"}}, "occurs 2 times"),
    ({"name": "str_replace", "arguments": {"path": "util.py", "old_str": "Q = 1", "new_str": "x"}}, "not found"),
    ({"name": "str_replace", "arguments": {"path": "nope.py", "old_str": "Q", "new_str": "x"}}, "does not exist"),
    ({"name": "insert", "arguments": {"path": "util.py", "line": 99, "text": "x"}}, "past the end"),
    ({"name": "insert", "arguments": {"path": "util.py", "line": "two", "text": "x"}}, "must be an integer"),
    ({"name": "write_file", "arguments": {"path": "../out.py", "content": "x"}}, "outside the workspace"),
    ({"name": "write_file", "arguments": {"path": "/etc/x", "content": "x"}}, "absolute"),
    ({"name": "write_file", "arguments": "{not json"}, "not valid JSON"),
    ({"name": "write_file", "arguments": {"path": "a.py", "content": 5}}, "must be a string"),
])
def test_tool_call_errors(call, msg):
    r = parse(json.dumps(call))
    assert r.error is not None and msg in r.error, r.error
    assert "tool call 1" in r.error


def test_tool_call_tag_with_bad_json_is_an_error():
    r = parse("<tool_call>\n{\"name\": \"view_file\", \"arguments\": {\"path\": }\n</tool_call>")
    assert r.error is not None and "<tool_call> at line 1" in r.error


def test_tool_schemas():
    names = [t["function"]["name"] for t in TOOL_SCHEMAS]
    assert names == ["view_file", "write_file", "str_replace", "insert", "run_tests", "submit"]
    for t in TOOL_SCHEMAS:
        assert t["type"] == "function"
        params = t["function"]["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])
    sr = next(t for t in TOOL_SCHEMAS if t["function"]["name"] == "str_replace")["function"]["parameters"]
    assert sr["required"] == ["path", "old_str", "new_str"]
    assert "submit" not in [t["function"]["name"] for t in tool_schemas({"tool_call"})]
    assert tool_schemas({"code_block"}) == []
    json.dumps(TOOL_SCHEMAS)  # serialisable as given to an API


# ---------------------------------------------------------------------------
# submit
# ---------------------------------------------------------------------------


def test_submit_forms():
    for text in ("submit", "  SUBMIT  \n", "All tests pass now.\n\nsubmit\n", "```\nsubmit\n```"):
        r = parse(text)
        assert r.error is None and r.submit and r.changes == {}, text
    # not a submit: a word in a sentence, or code that mentions it
    assert parse("I will submit later").error is not None
    r = parse("```python\nsubmit\n```\n")
    assert not r.submit and r.changes == {"main.py": "submit\n"}


def test_edit_then_submit():
    r = parse("```python\ndef solve(x):\n    return 2 * x\n```\nsubmit\n")
    assert r.submit and r.changes == {"main.py": "def solve(x):\n    return 2 * x\n"}
    assert r.formats_used == ["code_block", "submit"]
    # a failed edit does not submit
    r = parse("util.py\n<<<<<<< SEARCH\nZ\n=======\nY\n>>>>>>> REPLACE\nsubmit\n")
    assert r.error is not None and not r.submit


# ---------------------------------------------------------------------------
# restrictions
# ---------------------------------------------------------------------------


def test_disallowed_format_names_what_is_accepted():
    r = parse("```python path=main.py\nx = 1\n```\n", formats={"unified_diff", "submit"})
    assert r.error is not None and "uses code_block, which is not accepted" in r.error
    assert "Accepted action formats: unified_diff, submit" in r.error
    assert "```diff" in r.error and "<<<<<<< SEARCH" not in r.error  # examples of accepted ones only
    r = parse("submit", formats={"code_block"})
    assert r.error is not None and "submit" in r.error.split("\n")[0]
    # the submit tool needs both tool_call and submit
    r = parse('{"name": "submit", "arguments": {}}', formats={"tool_call"})
    assert r.error is not None and not r.submit
    assert parse('{"name": "submit", "arguments": {}}', formats={"tool_call", "submit"}).submit


def test_pathless_illustration_is_ignored_when_code_blocks_are_not_accepted():
    text = ("For example:\n```python\nsolve(3)\n```\n"
            "```diff\n--- a/main.py\n+++ b/main.py\n@@ -2 +2 @@\n-    return x\n+    return -x\n```\n")
    r = parse(text, formats={"unified_diff"})
    assert r.error is None and set(r.changes) == {"main.py"}
    r = parse("```python\nsolve(3)\n```\n", formats={"unified_diff"})
    assert r.error is not None and "not accepted" in r.error


def test_unknown_format_name_is_a_programming_error():
    with pytest.raises(ValueError):
        parse_action("x", FILES, "main.py", {"whole_file"})
    with pytest.raises(ValueError):
        format_help({"nope"})


# ---------------------------------------------------------------------------
# round trips: the same change in four formats
# ---------------------------------------------------------------------------

ROUND_FILES = {
    "main.py": "import sys\n\n\ndef solve(x):\n    return x\n\n\ndef helper(a, b):\n    return a + b\n\n\n"
               "if __name__ == '__main__':\n    print(solve(int(sys.stdin.readline())))\n",
    "lib/util.py": "A = 1\nB = 2\nA = 1\nB = 2\n",
    "README.md": "# Demo\n\n```python\nprint(1)\n```\n",
}
ROUND_CHANGES = {
    "main.py": "import sys\n\n\ndef solve(x):\n    return 2 * x\n\n\ndef helper(a, b):\n    return a * b\n\n\n"
               "if __name__ == '__main__':\n    print(solve(int(sys.stdin.readline())))\n    print('done')\n",
    "lib/util.py": "A = 1\nB = 3\nA = 1\nB = 2\n",  # the first of two identical pairs
    "README.md": "# Demo\n\n```python\nprint(2)\n```\n",
    "lib/new.py": "NEW = {\"k\": 'v\\n'}\n",
}


@pytest.mark.parametrize("fmt", EDIT_FORMATS)
def test_round_trip_each_format(fmt):
    text = render_action(ROUND_CHANGES, fmt, ROUND_FILES, "main.py")
    r = parse(text, ROUND_FILES)
    assert r.error is None, (text, r.error)
    assert r.changes == ROUND_CHANGES
    assert r.formats_used == [fmt]
    # every character the edits wrote that appears verbatim is covered by a span
    for path in ROUND_CHANGES:
        assert covered(text, r, path)
    text = render_action(ROUND_CHANGES, fmt, ROUND_FILES, "main.py", submit=True)
    assert parse(text, ROUND_FILES).submit


def test_round_trip_deletion_and_missing_final_newline():
    files = {"a.py": "x = 1\ny = 2", "gone.py": "z\n"}
    changes = {"a.py": "x = 1\ny = 3", "gone.py": None}
    text = render_action(changes, "unified_diff", files, "a.py")
    assert parse(text, files).changes == changes
    text = render_action({"a.py": "x = 1\ny = 3"}, "tool_call", files, "a.py")
    assert parse(text, files).changes == {"a.py": "x = 1\ny = 3"}
    text = render_action({"a.py": "x = 1\ny = 3"}, "search_replace", files, "a.py")
    assert parse(text, files).changes == {"a.py": "x = 1\ny = 3"}
    for fmt in ("code_block", "search_replace", "tool_call"):
        with pytest.raises(ValueError):
            render_action({"gone.py": None}, fmt, files, "a.py")


def test_rendered_diff_is_a_standard_patch():
    unidiff = pytest.importorskip("unidiff", reason="unidiff is not installed")
    text = render_action(ROUND_CHANGES, "unified_diff", ROUND_FILES, "main.py")
    body = text.split("\n", 1)[1].rsplit("```", 1)[0]
    patch = unidiff.PatchSet(body)
    assert {p.path for p in patch} == set(ROUND_CHANGES)
    for pf in patch:
        for h in pf:  # unidiff checks the header counts against the body
            assert h.source_length == sum(1 for l in h if not l.is_added)


def test_round_trip_random_changes():
    rnd = random.Random(1234)
    vocab = ["x = 1", "    return x", "", "def f():", "    pass", "# c", "y = 2  ", "\tz",
             "}", "{", " ```", "--- a", "+++ b", "@@ x", "  - a"]

    def rfile():
        s = "".join(rnd.choice(vocab) + "\n" for _ in range(rnd.randint(0, 10)))
        return s[:-1] if s and rnd.random() < 0.2 else s

    def mutate(s):
        lines = s.split("\n")
        for _ in range(rnd.randint(1, 4)):
            i = rnd.randint(0, len(lines))
            op = rnd.random()
            if op < 0.4:
                lines.insert(i, rnd.choice(vocab))
            elif lines:
                j = min(i, len(lines) - 1)
                if op < 0.7:
                    del lines[j]
                else:
                    lines[j] = rnd.choice(vocab)
        return "\n".join(lines)

    def strip_nl(d, files):
        # code blocks and SEARCH/REPLACE cannot change a final newline
        return {p: c.rstrip("\n") for p, c in d.items() if p not in files or c.rstrip("\n") != files[p].rstrip("\n")}

    checked = 0
    for _ in range(250):
        files = {f"f{k}.py": rfile() for k in range(rnd.randint(1, 3))}
        changes = {p: mutate(c) for p, c in files.items() if rnd.random() < 0.6}
        if rnd.random() < 0.3:
            changes["new.py"] = rfile()
        want = {p: c for p, c in changes.items() if files.get(p) != c}
        if not want:
            continue
        for fmt in EDIT_FORMATS:
            text = render_action(changes, fmt, files, "f0.py")
            r = parse(text, files)
            assert r.error is None, (fmt, files, changes, text, r.error)
            if fmt in ("unified_diff", "tool_call"):
                assert r.changes == want, (fmt, files, changes, text)
            else:
                assert strip_nl(r.changes, files) == strip_nl(want, files), (fmt, files, changes, text)
            checked += 1
    assert checked > 500


# ---------------------------------------------------------------------------
# spans
# ---------------------------------------------------------------------------


def test_spans_code_block_exact():
    text = "Sure.\n```python\ndef solve(x):\n    return 2 * x\n```\n"
    r = parse(text)
    (sp,) = r.edit_spans
    assert text[sp.start:sp.end] == "def solve(x):\n    return 2 * x\n"
    assert (sp.file_start, sp.file_end) == (0, len(r.changes["main.py"]))
    assert text[sp.source_start:sp.source_end].startswith("```python")
    path, start, end = sp  # unpacks like a (path, start, end) tuple
    assert (path, start, end) == ("main.py", sp.start, sp.end)
    (b,) = r.edit_blocks
    assert text[b.start:b.end] == r.changes["main.py"] and b.diff is False


def test_spans_diff_one_per_added_line_and_zero_length_for_removal():
    text = ("```diff\n--- a/main.py\n+++ b/main.py\n@@ -1,5 +1,6 @@\n def solve(x):\n-    return x\n"
            "+    y = x * 2\n+    return y\n \n \n-print(solve(3))\n```\n")
    r = parse(text)
    new = r.changes["main.py"]
    assert new == "def solve(x):\n    y = x * 2\n    return y\n\n\n"
    pieces = [text[s.start:s.end] for s in r.edit_spans]
    assert pieces == ["    y = x * 2\n", "    return y\n", ""]
    removal = r.edit_spans[-1]
    assert removal.start == removal.end and text[removal.source_start:removal.source_end] == "-print(solve(3))\n"
    (b,) = r.edit_blocks
    assert b.diff is True and text[b.start:b.end].startswith("@@ -1,5 +1,6 @@\n def solve(x):")


def test_spans_search_replace_and_reindent():
    text = "util.py\n<<<<<<< SEARCH\nB = 2\n=======\nB = 3\nC = 4\n>>>>>>> REPLACE\n"
    r = parse(text)
    (sp,) = r.edit_spans
    assert text[sp.start:sp.end] == "B = 3\nC = 4\n"
    assert r.changes["util.py"][sp.file_start:sp.file_end] == "B = 3\nC = 4\n"
    files = {"m.py": "class K:\n    def f(self):\n        return 1\n"}
    text = "m.py\n<<<<<<< SEARCH\ndef f(self):\n    return 1\n=======\ndef f(self):\n    return 2\n>>>>>>> REPLACE\n"
    r = parse(text, files)
    # the added indentation is not in the text, so it is not covered
    assert [text[s.start:s.end] for s in r.edit_spans] == ["def f(self):\n", "    return 2\n"]


def test_spans_json_escapes_and_nested_argument_string():
    content = 'print("hi")\n\tx = "é😀"\n'
    args = json.dumps({"path": "w.py", "content": content})
    for text in (json.dumps({"name": "write_file", "arguments": {"path": "w.py", "content": content}}),
                 json.dumps({"type": "function", "function": {"name": "write_file", "arguments": args}}),
                 json.dumps({"name": "write_file", "arguments": {"path": "w.py", "content": content}},
                            ensure_ascii=False)):
        r = parse(text)
        assert r.changes == {"w.py": content}
        assert r.edit_spans
        # escapes (\n, \", \t, \u...) are not verbatim: only literal runs are spans
        assert all("\n" not in text[s.start:s.end] for s in r.edit_spans)
        assert "print(" in covered(text, r, "w.py")
        (b,) = r.edit_blocks
        assert b.text == content and len(b.text_offset_map) == len(content) + 1
        # characters that are verbatim in the text map onto themselves
        for i, ch in enumerate(content):
            if ch in "pr":
                assert text[b.text_offset_map[i]] == ch


def test_spans_crlf_text_are_cut_at_line_ends():
    text = "```python\r\ndef solve(x):\r\n    return 3\r\n```\r\nsubmit\r\n"
    r = parse(text)
    assert r.changes == {"main.py": "def solve(x):\n    return 3\n"} and r.submit
    assert [text[s.start:s.end] for s in r.edit_spans] == ["def solve(x):", "    return 3"]
    text = "util.py\r\n<<<<<<< SEARCH\r\nB = 2\r\n=======\r\nB = 5\r\n>>>>>>> REPLACE\r\n"
    assert parse(text).changes == {"util.py": "A = 1\nB = 5\nA = 1\n"}
    text = "```diff\r\n--- a/util.py\r\n+++ b/util.py\r\n@@ -2 +2 @@\r\n-B = 2\r\n+B = 6\r\n```\r\n"
    r = parse(text)
    assert r.changes == {"util.py": "A = 1\nB = 6\nA = 1\n"}
    assert [text[s.start:s.end] for s in r.edit_spans] == ["B = 6"]


def test_crlf_offsets_of_tool_calls_and_blocks():
    text = '{"name": "view_file", "arguments": {"path": "main.py"}}\r\n\r\n```python path=util.py\r\nA = 3\r\n```\r\n'
    r = parse(text)
    (tc,) = r.tool_calls
    assert text[tc.start:tc.end] == '{"name": "view_file", "arguments": {"path": "main.py"}}'
    (b,) = r.edit_blocks
    assert text[b.start:b.end] == "A = 3\r\n"
    (sp,) = r.edit_spans
    assert text[sp.source_start:sp.source_end] == "```python path=util.py\r\nA = 3\r\n```\r\n"


def test_spans_of_one_piece_stay_one_span_when_split_and_rejoined():
    # an empty insert splits the code block's content in the file; the two parts are
    # contiguous in the text and in the file again, so they give one span
    text = ('```python path=util.py\nA = 0\nB = 0\n```\n'
            '{"name": "insert", "arguments": {"path": "util.py", "line": 1, "text": ""}}')
    r = parse(text)
    assert r.changes == {"util.py": "A = 0\nB = 0\n"}
    (sp,) = r.edit_spans
    assert text[sp.start:sp.end] == "A = 0\nB = 0\n" and (sp.file_start, sp.file_end) == (0, 12)


def test_spans_track_later_edits_to_the_same_file():
    text = ("```python path=util.py\nA = 1\nB = 2\n```\n"
            "util.py\n<<<<<<< SEARCH\nA = 1\n=======\nA = 100\nA2 = 1\n>>>>>>> REPLACE\n")
    r = parse(text)
    assert r.changes == {"util.py": "A = 100\nA2 = 1\nB = 2\n"}
    pieces = sorted((s.file_start, text[s.start:s.end], s.format) for s in r.edit_spans)
    assert pieces == [(0, "A = 100\nA2 = 1\n", "search_replace"), (15, "B = 2\n", "code_block")]


def test_spans_feed_codegym_diffs():
    try:
        from codegym.edits import units as diffs
        diffs.split_units  # noqa: B018
    except (ImportError, AttributeError) as e:
        pytest.skip(f"codegym.edits.units is not available: {e}")
    files = {"main.py": "def solve(x):\n    return x\n\n\ndef g():\n    return 1\n"}
    new = {"main.py": "def solve(x):\n    return 2 * x\n\n\ndef g():\n    return 3\n"}
    for fmt in EDIT_FORMATS:
        text = render_action(new, fmt, files, "main.py")
        r = parse(text, files)
        for spans in (r.edit_spans, [EditBlock(**b.diff_span_kwargs()) for b in r.edit_blocks]):
            units = diffs.split_units(files, apply_changes(files, r.changes), action_spans=(text, spans))
            got = sorted(text[u.span[0]:u.span[1]] for u in units if u.span)
            assert len(got) == 2, (fmt, got)
            assert "return 2 * x" in got[0] or "return 2 * x" in got[1]


# ---------------------------------------------------------------------------
# hostile input: feedback, never an exception, and it finishes
# ---------------------------------------------------------------------------

_N = MAX_ACTION_CHARS - 1000  # just under the size limit, so the parser really reads it


def _hostile_inputs():
    rnd = random.Random(7)
    yield "empty", ""
    yield "whitespace", " \n\t\r\n  "
    yield "10MB garbage", "".join(rnd.choice("ab{}[]<>=`-+@ \n\"\\") for _ in range(100_000)) * 100
    yield "binary", os.urandom(200_000).decode("latin-1")
    yield "bytes", os.urandom(5000)
    yield "nul", "\x00" * _N
    yield "surrogates", "\udc80\ud800" * (_N // 2)
    yield "unterminated", "```python\ndef solve(x):\n    return (x" + " + x" * 1000
    yield "nested fences", "```python\ns = '''\n```\n" * 300
    yield "crlf", "```python\r\n" + "x = 1\r\n" * (_N // 8) + "```\r\n"
    yield "fence lines", "```\n" * (_N // 4)
    yield "fence and info", "```\n```a\n" * (_N // 9)
    yield "search markers", "<<<<<<< SEARCH\n" * (_N // 15)
    yield "dividers", "=======\n" * (_N // 8)
    yield "diff headers", "--- a\n+++ b\n" * (_N // 12)
    yield "diff hunks", "--- a/main.py\n+++ b/main.py\n" + "@@\n-x\n+y\n" * (_N // 12)
    yield "blank hunk", "```diff\n--- a/main.py\n+++ b/main.py\n@@ -1 +1 @@\n" + "\n" * (_N - 60) + "```"
    yield "tool tags", "<tool_call>" * (_N // 11)
    yield "json lines", '{"name": "x\n' * (_N // 12)
    yield "json unterminated", '{"name": "' + "a\n" * (_N // 2)
    yield "json deep", "[" * _N
    yield "json deep object", '{"name": "write_file", "arguments": ' + '{"a": ' * 5000
    yield "submit lines", "submit\n" * (_N // 7)
    yield "long line", " " * _N + "x"
    yield "backticks", "`" * _N
    yield "at signs", "@@ " * (_N // 3)
    yield "big json write", ('{"name":"write_file","arguments":{"path":"big.py","content":"'
                             + "x = 1\\n" * 20_000 + '"}}')
    yield "long info string", "```" + "python path=a.py " * 20_000 + "\nx\n```\n"
    yield "path labels", "a.py\n" * (_N // 5)
    yield "regex bait", ("a" * 5000 + "." * 5000 + "\n") * 50
    yield "NUL in content", "```python\nx = 1\x00\n```\n"
    yield "surrogate in content", "```python\nx = '\udc80'\n```\n"
    yield "huge path", "```python path=" + "a/" * 50_000 + "x.py\nx\n```\n"
    yield "not text", 12345
    yield "None", None


@pytest.mark.timeout(20)
@pytest.mark.parametrize("name,text", list(_hostile_inputs()), ids=[n for n, _ in _hostile_inputs()])
def test_hostile_inputs_give_feedback(name, text):
    r = parse(text)
    assert isinstance(r, ParsedAction)
    if r.error is not None:
        assert "Accepted action formats" in r.error  # says what would be accepted


def test_specific_hostile_outcomes():
    assert "limit is" in parse("x" * (MAX_ACTION_CHARS + 1)).error
    assert "empty" in parse("   \n").error
    assert "NUL character" in parse("```python\nx = 1\x00\n```\n").error
    assert "lone surrogate" in parse("```python\nx = '\udc80'\n```\n").error
    assert "must be text" in parse(12345).error
    r = parse(b"```python\nprint(1)\n```\n")
    assert r.changes == {"main.py": "print(1)\n"} and r.warnings
    r = parse("submit\n" * 1000)
    assert r.submit and r.error is None
    # the size limit can be lifted; the parser still reads 10 MB of garbage
    big = "".join(random.Random(3).choice("ab{}<=`-+ \n") for _ in range(10_000)) * 1000
    assert parse(big, max_chars=None).error is not None


@pytest.mark.timeout(60)
def test_corrupted_actions_never_raise():
    rnd = random.Random(99)
    new = {"main.py": MAIN.replace("return x", "return 2 * x"), "util.py": "A = 1\n", "add.py": "Z = 0\n"}
    bases = [render_action(new, f, FILES, "main.py", submit=True) for f in EDIT_FORMATS]
    bases.append('<tool_call>{"type":"function","function":{"name":"write_file","arguments":'
                 '"{\\"path\\": \\"w.py\\", \\"content\\": '
                 '\\"a\\\\nb\\\\u00e9\\\\ud83d\\\\ude00\\\\n\\"}"}}</tool_call>')
    noise = ["\n", "`", "```", "<<<<<<< SEARCH\n", "=======\n", ">>>>>>> REPLACE\n", "{", "}", '"', "\\",
             "--- a/main.py\n+++ b/main.py\n", "@@ -1 +1 @@\n", "+", "-", " ", "\r\n", "\x00", "\udc80",
             "submit\n", "<tool_call>", "</tool_call>", "path=", "[", "]"]
    for _ in range(800):
        t = rnd.choice(bases)
        for _ in range(rnd.randint(1, 6)):
            i = rnd.randint(0, len(t))
            op = rnd.random()
            if op < 0.4:
                t = t[:i] + rnd.choice(noise) + t[i:]
            elif op < 0.7:
                t = t[:i] + t[i + rnd.randint(1, 20):]
            else:
                j = rnd.randint(0, len(t))
                t = t[:i] + t[j:j + rnd.randint(0, 30)] + t[i:]
        if rnd.random() < 0.2:
            t = t.replace("\n", "\r\n")
        formats = rnd.choice([None, {"unified_diff"}, {"tool_call", "submit"}, {"code_block", "search_replace"}])
        parse(t, formats=formats)  # check_invariants: atomic errors, exact spans, no internal error


# ---------------------------------------------------------------------------
# help and helpers
# ---------------------------------------------------------------------------


def test_format_help_mentions_each_accepted_format_with_an_example():
    text = format_help(None, main_file="main.cpp")
    for f in FORMATS:
        assert f"- {f}" in text
    assert "```cpp path=main.cpp" in text and "--- a/main.cpp" in text and "return 2 * x;" in text
    assert '"name": "str_replace"' in text and "submit()" in text
    short = format_help({"search_replace"}, brief=True)
    assert "<<<<<<< SEARCH" in short and "```diff" not in short and "tool_call" not in short


def test_error_for_text_without_any_action():
    r = parse("I think the bug is in the loop. Let me think more.")
    assert r.error is not None and r.error.startswith("no edit, tool call or submit was found")
    for f in FORMATS:
        assert f in r.error


def test_apply_changes_and_view_file():
    out = apply_changes(FILES, {"util.py": None, "main.py": "x\n", "n.py": "y\n"})
    assert out["main.py"] == "x\n" and "util.py" not in out and out["n.py"] == "y\n"
    shown = view_file(FILES, "main.py", 2, 2)
    assert "2  " in shown and "return x" in shown and "print" not in shown
    assert "no such file" in view_file(FILES, "zzz.py")
    assert "outside the file" in view_file(FILES, "main.py", 50, 60)


def test_edit_span_is_a_record():
    sp = EditSpan("a.py", 1, 3)
    assert tuple(sp) == ("a.py", 1, 3) and sp.text is None and sp.diff is False


def test_edit_block_span_kwargs_are_its_fields_but_format():
    import dataclasses

    b = EditBlock(path="m.py", start=3, end=9, text_offset_map=(1, 2), text="ab", diff=True, format="json")
    want = dataclasses.asdict(b)
    want.pop("format")
    assert b.diff_span_kwargs() == want


def test_line_starts_on_demand_equal_a_full_table():
    import random

    from codegym.edits.text import lines_and_starts as _split_lines
    rng = random.Random(0)
    for _ in range(3000):
        c = "".join(rng.choice(["a", "bb", "\n", "\n\n", "\r\n", "é"]) for _ in range(rng.randint(0, 10)))
        _split_lines.cache_clear()
        lines, starts, final_nl = _split_lines(c)
        want = [0]
        if c:
            for line in lines:
                want.append(want[-1] + len(line) + 1)
            if not final_nl:
                want[-1] -= 1
        order = list(range(len(want)))
        rng.shuffle(order)  # the first reads are summed, later ones come from the table
        got = {i: starts[i] for i in order}
        assert [got[i] for i in range(len(want))] == want and len(starts) == len(want)
