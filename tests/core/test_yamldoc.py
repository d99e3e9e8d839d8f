"""Tests of codegym.core.yamldoc (the one YAML + pydantic loader) and codegym.core.paths."""

from __future__ import annotations

import os
import stat

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from codegym.core.paths import display_path, write_atomic
from codegym.core.yamldoc import Doc, DocError, DocValidationError, format_path, parse_yaml, pydantic_message, suggest


def test_parse_keeps_lines_reads_yaml12_floats_and_reports_duplicates():
    text = "a: 1\nb:\n  - x\n  - {c: 1e-6}\na: 2\n"
    p = parse_yaml(text, "f.yaml")
    assert p.ok and p.data == {"a": 2, "b": ["x", {"c": 1e-6}]}
    assert isinstance(p.data["b"][1]["c"], float)
    assert p.lines[("b", 1)] == 4 and p.lines[("b", 1, "c")] == 4
    assert [str(e) for e in p.errors] == ["f.yaml:5: a: duplicate key (first given on line 1)"]


def test_parse_errors_name_the_line():
    p = parse_yaml("a: [1, 2\nb: 3\n", "f.yaml")
    assert not p.ok and p.errors[0].file == "f.yaml" and p.errors[0].message.startswith("YAML syntax error")
    p = parse_yaml("a: 1\nwhen: 2026-13-01\n", "f.yaml")
    assert not p.ok and p.errors[0].line == 2 and p.errors[0].path == "when"
    assert parse_yaml("", "f.yaml") == (True, None, {(): 1}, [])


def test_doc_reads_files_relative_to_itself(tmp_path):
    (tmp_path / "data.txt").write_text("hello")
    (tmp_path / "x.yaml").write_text("k:\n  file: data.txt\nmissing: {file: nope.txt}\n")
    doc = Doc(tmp_path / "x.yaml", "x.yaml")
    assert doc.load() and doc.data["k"] == {"file": "data.txt"}
    assert doc.read_rel("data.txt", ("k", "file")) == "hello"
    assert doc.read_rel("nope.txt", ("missing", "file")) is None
    assert [str(e) for e in doc.errors] == ["x.yaml:3: missing.file: file not found: nope.txt (relative to x.yaml)"]
    assert doc.line_of(("k", "file", "deeper")) == 2
    assert not Doc(tmp_path / "absent.yaml", "absent.yaml").load()


def test_pydantic_messages_and_suggestions():
    class Inner(BaseModel):
        model_config = ConfigDict(extra="forbid")
        size: int = Field(1, gt=0)

    class Outer(BaseModel):
        model_config = ConfigDict(extra="forbid")
        items: list[Inner] = []

    try:
        Outer.model_validate({"items": [{"sise": 1}, {"size": 0}, {"size": "x"}]})
    except ValidationError as exc:
        got = {format_path(e["loc"]): pydantic_message(e, Outer) for e in exc.errors()}
    assert got == {"items[0].sise": "unknown field 'sise' (did you mean 'size'?)",
                   "items[1].size": "must be > 0", "items[2].size": "expected integer"}
    assert suggest("stagd", ["staged", "timed"]) == " (did you mean 'staged'?)"
    assert suggest("zzz", ["staged", "timed"]) == "; known: staged, timed"
    assert suggest("zzz", []) == ""
    err = DocValidationError([DocError("f", 1, "", "m"), DocError("f", 1, "", "m")])
    assert str(err) == "f:1: m" and len(err.errors) == 1


def test_display_path_and_write_atomic(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "a" / "b.yaml") == os.path.join("a", "b.yaml")
    assert display_path("/") == "/"
    target = tmp_path / "sub" / "out.json"
    write_atomic(target, "é\n", mode=0o644)
    assert target.read_text(encoding="utf-8") == "é\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    write_atomic(target, b"x")
    assert target.read_bytes() == b"x" and os.listdir(target.parent) == ["out.json"]
