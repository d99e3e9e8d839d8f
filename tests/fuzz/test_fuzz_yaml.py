"""Fuzzing the one YAML loader (`codegym.core.yamldoc`) and the task loader on top of it.

Properties, on arbitrary text, on mutated YAML (anchors, aliases, tags, merge keys,
duplicate keys, deep nesting, control characters spliced into valid documents) and on
mutated real task files that name files inside and outside their suite folder:

- no exception escapes: `parse_yaml` never raises, `load_task` raises only
  `TaskValidationError`;
- every error names where: ``file:line:`` of the file that holds the problem, with a
  line inside the file;
- the work is bounded by the caps (the line table never outgrows them), and nothing
  outside the suite folder is ever read: a secret planted next to it never shows up
  in a task or in an error.
"""

from __future__ import annotations

import itertools
import os
import random
import tempfile
from pathlib import Path

import pytest
import yaml
from _fuzz import budget
from hypothesis import given
from hypothesis import strategies as st

from codegym.core.yamlcompose import DEFAULT_CAPS
from codegym.core.yamldoc import DocError, parse_yaml
from codegym.tasks.load import TaskValidationError, load_task

REPO = Path(__file__).resolve().parents[2]
SEEDS = sorted((REPO / "tasks" / "examples").glob("*.yaml"))
SECRET = "CODEGYM-FUZZ-" + "SECRET-7f3a9c"

# --------------------------------------------------------------------------- strategies

_scalars = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False), st.booleans(), st.none(),
                     st.text(max_size=20), st.sampled_from(["yes", "no", "1e-6", "2026-13-01", "0x1F", "~", "",
                                                            "null", ".inf", "012", "1_000"]))
_docs = st.recursive(_scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=5), st.dictionaries(st.text(max_size=8), kids, max_size=5)), max_leaves=30)

_SPLICES = ["&a ", "*a", "&b ", "*b", "*nope", "!!python/object/apply:os.system [id]", "!!str ", "!!int ",
            "!!bool ", "!!timestamp ", "!!binary ", "!!set ", "!!omap ", "!foo ", "<<: *a", "? ", "- ", ": ",
            "{", "}", "[", "]", "'", '"', "\\x00", "\x00", "\x07", "\x1b", "\ufeff", "\t", "\n---\n", "\n...\n",
            "%YAML 1.2\n", "a: 1\na: 2\n", "|", ">", "#", "@", "`", "\u2028", "\x85", "&a [*a]"]


@st.composite
def mutated_yaml(draw) -> str:
    """A YAML dump of random data with spliced fragments (anchors, aliases, tags, junk)."""
    text = yaml.safe_dump(draw(_docs), default_flow_style=draw(st.sampled_from([None, True, False])))
    for _ in range(draw(st.integers(0, 6))):
        pos = draw(st.integers(0, len(text)))
        piece = draw(st.one_of(st.sampled_from(_SPLICES), st.text(max_size=6)))
        text = text[:pos] + piece + text[pos:]
    return text


@st.composite
def bombs(draw) -> str:
    """Alias bombs, merge-key bombs and deep nesting of random shape."""
    kind = draw(st.sampled_from(["alias", "merge", "flow", "block", "map"]))
    depth = draw(st.integers(2, 14))
    width = draw(st.integers(2, 12))
    if kind == "alias":
        lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
        lines += [f"a{d}: &a{d} [{', '.join([f'*a{d - 1}'] * width)}]" for d in range(1, depth)]
        return "\n".join(lines) + "\n"
    if kind == "merge":
        lines = ["m0: &m0 {a: 1, b: 2}"]
        lines += [f"m{d}: &m{d} {{<<: [{', '.join([f'*m{d - 1}'] * width)}], k{d}: 1}}" for d in range(1, depth)]
        return "\n".join(lines) + "\n"
    n = depth * width * 50
    if kind == "flow":
        return "a: " + "[" * n + "]" * n
    if kind == "map":
        return "a: " + "{a: " * n + "1" + "}" * n
    return "".join("  " * i + "- \n" for i in range(min(n, 3000)))


def check_errors(errors: list[DocError], display: str, text: str) -> None:
    """Every error names the file and a line inside it, and says something."""
    # (YAML's line breaks: \n, \r, \r\n, NEL, LS, PS)
    last = sum(text.count(c) for c in ("\n", "\r", "\x85", "\u2028", "\u2029")) + 2
    for e in errors:
        assert e.file == display, e
        assert 1 <= e.line <= last, (e, last)
        assert e.message.strip(), e
        assert str(e).startswith(f"{display}:{e.line}:"), e


# --------------------------------------------------------------------------- parse_yaml


@budget(150)
@given(st.text(max_size=400))
def test_any_text(text):
    p = parse_yaml(text, "f.yaml")
    check_errors(p.errors, "f.yaml", text)
    assert p.ok or p.errors


@budget(100)
@given(mutated_yaml())
def test_mutated_yaml(text):
    p = parse_yaml(text, "f.yaml")
    check_errors(p.errors, "f.yaml", text)
    assert p.ok or p.errors
    assert len(p.lines) <= DEFAULT_CAPS.nodes + 1


@budget(60)
@given(bombs())
def test_bombs_end_in_bounded_work_with_a_line(text):
    p = parse_yaml(text, "bomb.yaml")
    check_errors(p.errors, "bomb.yaml", text)
    assert len(p.lines) <= DEFAULT_CAPS.nodes + 1
    if not p.ok:
        assert p.errors
    if "*a" in text and text.count("\n") >= 5 and text.count("*a0") >= 9:  # 9+ aliases, 5+ levels
        assert not p.ok and "alias bomb" in p.errors[0].message


@budget(80)
@given(st.binary(max_size=300))
def test_binary_junk_as_a_file(tmp_path_factory, data):
    d = tmp_path_factory.mktemp("junk")
    f = d / "t.yaml"
    f.write_bytes(data)
    try:
        load_task(f)
    except TaskValidationError as e:
        assert e.errors
        for err in e.errors:
            assert err.file.endswith("t.yaml") and err.line >= 1 and err.message


# --------------------------------------------------------------------------- load_task, confined

_REFS = ["../secret.txt", "../../secret.txt", "sub/../../secret.txt", "link_out", "link_dir/secret.txt",
         "/etc/hostname", "ok.txt", "sub/ok.txt", "missing.txt", "", ".", "sub", "fifo", "../suite/ok.txt",
         "./ok.txt", "ok.txt\x00", "a" * 300]
_FIELDS = ["statement: {file: %s}", "starter: {main.py: {file: %s}}",
           "tests: {hidden: [{stdin_file: %s, expected: '1'}]}",
           "tests: {hidden: [{stdin: '1', expected_file: %s}]}",
           "tests: {hidden: [{generator: {file: %s, language: python}}]}",
           "checker: {type: program, file: %s}", "tests: {hidden: {glob: '%s'}}"]


@pytest.fixture(scope="module")
def suite_dir():
    """A suite folder (with symlinks out of it, a FIFO, a nested folder) next to a secret."""
    root = Path(tempfile.mkdtemp(prefix="codegym-fuzz-"))
    (root / "secret.txt").write_text(SECRET + "\n")
    (root / "outside").mkdir()
    (root / "outside" / "secret.txt").write_text(SECRET + "\n")
    s = root / "suite"
    (s / "sub").mkdir(parents=True)
    (s / "ok.txt").write_text("fine\n")
    (s / "sub" / "ok.txt").write_text("fine\n")
    (s / "suite.yaml").write_text("suite: {description: fuzz}\nlimits: {time_s: 1}\n")
    os.symlink(root / "secret.txt", s / "link_out")
    os.symlink(root / "outside", s / "link_dir")
    os.mkfifo(s / "fifo")
    yield s
    for p in sorted(root.rglob("*"), reverse=True):
        if p.is_symlink() or not p.is_dir():
            p.unlink()
        else:
            p.rmdir()
    root.rmdir()


_counter = itertools.count()


@budget(120)
@given(st.sampled_from(SEEDS), st.lists(st.tuples(st.sampled_from(_FIELDS), st.sampled_from(_REFS)), max_size=3),
       st.randoms(use_true_random=False), st.integers(0, 4))
def test_task_files_never_read_outside_their_suite(suite_dir, seed, refs, rnd, cuts):
    text = seed.read_text()
    lines = text.splitlines()
    for _ in range(cuts):  # drop, duplicate or shuffle lines: broken structure
        if not lines:
            break
        i = rnd.randrange(len(lines))
        op = rnd.choice(["drop", "dup", "swap"])
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        else:
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
    for field, ref in refs:
        lines.append(field % (repr(ref) if ref else "''"))
    f = suite_dir / f"t{next(_counter)}.yaml"
    f.write_text("\n".join(lines) + "\n")
    try:
        task = load_task(f)
    except TaskValidationError as e:
        assert e.errors
        for err in e.errors:
            assert err.file.endswith((f.name, "suite.yaml")) and err.line >= 1 and err.message.strip(), err
            assert SECRET not in str(err)
    else:
        assert SECRET not in task.model_dump_json()
    finally:
        f.unlink()


def test_budget_examples_are_reproducible():
    """The CI budget draws the same examples every run (derandomized)."""
    from _fuzz import LONG
    assert LONG or budget(1).derandomize
    random.seed(0)
