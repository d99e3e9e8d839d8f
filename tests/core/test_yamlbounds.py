"""The bounds of the one YAML loader (`codegym.core.yamlcompose` under `parse_yaml`, `Doc`).

Each attack of issue 21 ends in a ``file:line`` error, with work linear in the text:
alias bombs of depth 5-12 (refused at the alias that crosses the budget, long before
any expansion), merge-key bombs, recursive aliases, nesting past the cap (a C-stack
overflow in libyaml's own composer), too many values, tags outside the safe set,
binary junk and control characters, files over the size caps, FIFOs and devices.
The time and memory of each attack are measured by benchmarks/untrusted_tasks.py,
not asserted here; the assertions bound the work by counting (lines recorded).
"""

from __future__ import annotations

import os
import tracemalloc

import pytest

from codegym.core.yamlcompose import DEFAULT_CAPS, Caps
from codegym.core.yamldoc import Doc, parse_yaml


def bomb(depth: int, width: int = 9) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{d}: &a{d} [{', '.join([f'*a{d - 1}'] * width)}]" for d in range(1, depth)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("depth", range(5, 13))
def test_alias_bombs_are_refused_at_the_alias_with_its_line(depth):
    tracemalloc.start()
    p = parse_yaml(bomb(depth), "b.yaml")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert not p.ok and len(p.errors) == 1
    e = p.errors[0]
    assert e.file == "b.yaml" and e.line == 5 and e.path == "a4[0]", str(e)
    assert "alias *a3" in e.message and "alias bomb" in e.message
    assert len(p.lines) < 100 and peak < 5 << 20  # nothing was expanded


def test_shared_values_through_aliases_are_fine():
    text = "lim: &lim {time_s: 2, memory_mb: 64}\n" + "".join(f"t{i}: {{limits: *lim}}\n" for i in range(50))
    p = parse_yaml(text, "ok.yaml")
    assert p.ok and p.errors == [] and p.data["t49"]["limits"] == {"time_s": 2, "memory_mb": 64}
    assert p.lines[("t49", "limits")] == 51  # a path through an alias stops at the alias's line


def test_merge_key_bombs_and_recursive_aliases():
    merge = "m0: &m0 {a: 1}\n" + "".join(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: {i}}}\n"
                                         for i in range(1, 40))
    p = parse_yaml(merge, "m.yaml")
    assert not p.ok and "alias bomb" in p.errors[0].message and p.errors[0].line > 1
    p = parse_yaml("x: 1\na: &a [1, *a]\n", "r.yaml")
    assert [str(e) for e in p.errors] == ["r.yaml:2: a[1]: recursive alias *a: a value cannot contain itself"]
    p = parse_yaml("a: *nope\n", "u.yaml")
    assert str(p.errors[0]) == "u.yaml:1: a: alias *nope names no anchor defined before it"


@pytest.mark.parametrize("text, line", [
    ("a: " + "[" * 100_000 + "]" * 100_000, 1),              # libyaml's composer overflows the C stack
    ("a: " + "{a: " * 50_000 + "1" + "}" * 50_000, 1),
    ("".join("  " * i + "-\n" for i in range(100)), 65),     # block nesting: the line of level 65
])
def test_deep_nesting_is_refused_at_the_cap(text, line):
    p = parse_yaml(text, "n.yaml")
    assert not p.ok and p.errors[0].line == line
    assert p.errors[0].message == f"nested deeper than {DEFAULT_CAPS.depth} levels"


def test_too_many_values_and_an_override():
    text = "[" + ",".join(["0"] * 2_000) + "]"
    p = parse_yaml(text, "v.yaml", Caps(nodes=1_000))
    assert not p.ok and "more than 1,000 YAML values" in p.errors[0].message
    assert parse_yaml(text, "v.yaml", Caps(nodes=5_000)).ok


@pytest.mark.parametrize("text, message", [
    ("a: !!python/object/apply:os.system [id]\n", "YAML tag !!python/object/apply:os.system is not allowed"),
    ("a: !custom 1\n", "YAML tag !custom is not allowed"),
    ("a: !!bool maybe\n", "invalid value 'maybe': not a valid !!bool"),
    ("a: !!timestamp soon\n", "invalid value 'soon': not a valid !!timestamp"),
    ("a: !!int ''\n", "invalid value '': not a valid !!int"),
    ("a: !!binary 'a'\n", "YAML error"),
    ("a: 1\nb: \x00\n", "control characters are not allowed"),
    ("a: 1\n---\nb: 2\n", "expected a single document"),
])
def test_tags_and_junk_name_their_line(text, message):
    p = parse_yaml(text, "t.yaml")
    assert not p.ok and message in p.errors[0].message, p.errors
    assert p.errors[0].line == (2 if "\n---" in text or "\x00" in text else 1)


def test_duplicate_keys_still_name_both_lines():
    p = parse_yaml("a: 1\nb: {c: 1, c: 2}\na: 3\n", "d.yaml")
    assert p.ok and [str(e) for e in p.errors] == ["d.yaml:2: b.c: duplicate key (first given on line 2)",
                                                   "d.yaml:3: a: duplicate key (first given on line 1)"]


def test_files_over_the_cap_devices_and_binary_are_refused_before_reading(tmp_path):
    big = tmp_path / "big.yaml"
    with open(big, "wb") as f:
        f.truncate(100 << 20)  # a sparse 100 MB file: refused by its size, never read
    d = Doc(big, "big.yaml")
    assert not d.load()
    assert str(d.errors[0]) == "big.yaml:1: the file is 100.0 MB, over the cap of 4.0 MB for a YAML file"
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    d = Doc(fifo, "fifo.yaml")
    assert not d.load() and "not a regular file" in d.errors[0].message  # (and no hang)
    junk = tmp_path / "junk.yaml"
    junk.write_bytes(b"a: 1\nb: 2\n\xff\xfe\x00")
    d = Doc(junk, "junk.yaml")
    assert not d.load() and d.errors[0].line == 3 and "not UTF-8" in d.errors[0].message


def test_caps_of_the_files_a_document_names(tmp_path):
    (tmp_path / "a.txt").write_text("x" * 3000)
    (tmp_path / "y.yaml").write_text("k: 1\n")
    doc = Doc(tmp_path / "y.yaml", "y.yaml", caps=Caps(inlined_bytes=2000, total_bytes=5000), cap_hint="hint")
    assert doc.load()
    assert doc.read_rel("a.txt", ("k",)) is None
    assert str(doc.errors[-1]) == "y.yaml:1: k: a.txt is 3,000 bytes, over the cap of 2,000 bytes for a file " \
                                  "a task names (hint)"
    doc = Doc(tmp_path / "y.yaml", "y.yaml", caps=Caps(inlined_bytes=4000, total_bytes=5000))
    assert doc.load() and doc.read_rel("a.txt", ("k",)) == "x" * 3000
    assert doc.read_rel("a.txt", ("k",)) is None and "total cap" in doc.errors[-1].message
