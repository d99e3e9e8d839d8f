"""The one reader of untrusted JSON, JSON lines, gzip and zlib (`codegym.core.jsonl`, issue 28 item 3).

Only regular files are opened (a FIFO, a device, a directory is a `DataError` naming it, and
opening never waits); decompression stops at an absolute size and, past a slack, at a ratio
(a 0.5 MB file that expands to 500 MB ends at the slack, its memory with it); a line over
its cap is dropped as it streams past; nesting is bounded below the parser's recursion;
gzip members follow each other; caps are data, overridden by ``NAME=VALUE``.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
import zlib

import pytest

from codegym.core.jsonl import (
    DEFAULT_DATA_CAPS,
    DataCaps,
    DataError,
    chunks,
    inflate,
    json_lines,
    loads,
    read_json,
    read_regular,
    split_lines,
    too_deep,
)


def test_only_regular_files_are_read(tmp_path):
    os.mkfifo(tmp_path / "pipe.jsonl")
    for path, what in ((tmp_path / "pipe.jsonl", "a FIFO"), ("/dev/zero", "a device"), (tmp_path, "a directory"),
                       (tmp_path / "absent.jsonl", "no such file")):
        for read in (lambda p: list(json_lines(p)), read_json, lambda p: read_regular(p, 100)):
            with pytest.raises(DataError, match=what):
                read(path)
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path / "pipe.jsonl")
    with pytest.raises(DataError, match="a FIFO"):
        list(json_lines(link))
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"1," * 100 + b"1]")
    with pytest.raises(DataError, match="over the cap"):
        read_regular(big, 100)
    with pytest.raises(DataError, match="file_bytes"):
        read_json(big, DEFAULT_DATA_CAPS.replace(file_bytes=100))


def _bomb(mb: int) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)     # gzip
    return b"".join([c.compress(b" " * (1 << 20)) for _ in range(mb)] + [c.flush()])


def test_decompression_is_bounded_in_size_and_ratio(tmp_path):
    caps = DEFAULT_DATA_CAPS.replace(ratio_slack=8 << 20)
    (tmp_path / "bomb.gz").write_bytes(_bomb(64))
    with pytest.raises(DataError, match=r"decompresses more than 100 times its size.*\(ratio\)"):
        for _ in chunks(tmp_path / "bomb.gz", caps):
            pass
    with pytest.raises(DataError, match=r"more than 4 MB \(text_bytes\)"):
        list(chunks(tmp_path / "bomb.gz", caps.replace(text_bytes=4 << 20, ratio=10**6)))
    assert sum(map(len, chunks(tmp_path / "bomb.gz", caps.replace(ratio=10**6)))) == 64 << 20
    field = zlib.compress(b"x" * (32 << 20), 9)
    with pytest.raises(DataError, match=r"field: decompresses more than 100 times"):
        inflate(field, caps)
    with pytest.raises(DataError, match=r"more than 1 MB \(field_bytes\)"):
        inflate(field, caps.replace(field_bytes=1 << 20))
    assert inflate(zlib.compress(b"abc")) == b"abc" and inflate(gzip.compress(b"abc")) == b"abc"
    with pytest.raises(DataError, match="not readable compressed data"):
        inflate(b"not zlib at all")
    with pytest.raises(DataError, match="cut short"):
        inflate(zlib.compress(b"abc" * 1000)[:20])


def test_a_bomb_costs_its_slack_not_its_size(tmp_path):
    """A 0.5 MB gzip file expanding to 500 MB: the reading process's peak memory stays near
    the slack (64 MB), far from the 1.1 GB it took before (a child process, measured)."""
    (tmp_path / "bomb.jsonl.gz").write_bytes(_bomb(500))
    prog = ("import resource, sys\nfrom codegym.core.jsonl import json_lines, DataError\n"
            "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "try:\n    list(json_lines(sys.argv[1]))\nexcept DataError as e:\n    print('refused:', e)\n"
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)\n")
    p = subprocess.run([sys.executable, "-c", prog, str(tmp_path / "bomb.jsonl.gz")], capture_output=True, text=True,
                       timeout=120, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)))
    lines = p.stdout.splitlines()
    assert p.returncode == 0 and "compression bomb" in lines[0], p.stdout + p.stderr
    assert int(lines[-1]) < 200, f"{lines[-1]} MB more than before reading"


def test_gzip_members_padding_and_plain_files(tmp_path):
    two = gzip.compress(b'{"a": 1}\n') + gzip.compress(b'{"a": 2}\n') + b"\0" * 10
    (tmp_path / "two.jsonl.gz").write_bytes(two)
    assert [v for _, v in json_lines(tmp_path / "two.jsonl.gz")] == [{"a": 1}, {"a": 2}]
    (tmp_path / "trail.gz").write_bytes(gzip.compress(b"[1]") + b"junk")
    with pytest.raises(DataError, match="not readable compressed data"):
        read_json(tmp_path / "trail.gz")
    (tmp_path / "plain.jsonl").write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\n  \n{"b": "\xe2\x80\xa8"}\n{"c"')
    got = list(json_lines(tmp_path / "plain.jsonl"))
    assert got[:2] == [(1, {"a": 1}), (4, {"b": "\u2028"})]    # a line separator inside a string is no line end
    assert got[2][0] == 5 and isinstance(got[2][1], DataError) and "not valid JSON" in str(got[2][1])
    with pytest.raises(ValueError, match=r"plain.jsonl:5: not valid JSON"):
        list(json_lines(tmp_path / "plain.jsonl", error=ValueError))


def test_a_long_line_is_dropped_as_it_streams_past(tmp_path):
    assert list(split_lines([b"ab", b"c\nde", b"fgh\n", b"i"], 4)) == [(1, b"abc"), (2, None), (3, b"i")]
    assert list(split_lines([b"abcdef", b"gh\n"], 4)) == [(1, None)]
    assert list(split_lines([b"\n\n"], 4)) == [(1, b""), (2, b"")]
    (tmp_path / "long.jsonl").write_text('{"a": 1}\n' + json.dumps({"b": "x" * 5000}) + '\n{"c": 3}\n')
    got = list(json_lines(tmp_path / "long.jsonl", DEFAULT_DATA_CAPS.replace(doc_bytes=1000)))
    assert got[0] == (1, {"a": 1}) and got[2] == (3, {"c": 3})
    assert "a line longer than 1,000 bytes (doc_bytes)" in str(got[1][1])
    with pytest.raises(DataError, match=r"more than 2 records \(records\)"):
        list(json_lines(tmp_path / "long.jsonl", DEFAULT_DATA_CAPS.replace(records=2)))


def test_nesting_is_bounded():
    for n in (101, 500, 5000, 100_000):
        with pytest.raises(DataError, match=r"JSON nested too deeply \(more than 100 levels\)"):
            loads("[" * n + "]" * n)
        with pytest.raises(DataError, match="nested too deeply"):
            loads('{"a": ' * n + "1" + "}" * n)
    assert loads("[" * 100 + "]" * 100) is not None
    assert loads('["[[[[[[", "]]]"]', DataCaps(depth=2)) == ["[[[[[[", "]]]"]   # brackets in strings
    assert too_deep([[[]]], 2) and not too_deep([[], [[]]], 3) and not too_deep(5, 0)
    with pytest.raises(DataError, match=r"where: not valid JSON"):
        loads("{", what="where")
    with pytest.raises(DataError, match="not valid JSON"):
        loads("1" * 5000)     # over Python's int digits limit
    assert loads("[NaN, Infinity]")[1] == float("inf")   # values; fields check their numbers


def test_strings_are_unicode_text():
    assert loads(r'["\ud83d\ude00", {"k": "\u00e9"}]') == ["\U0001f600", {"k": "\u00e9"}]   # a pair is one character
    for text in (r'["\ud800"]', r'{"\udfff": 1}', r'[["x\uDC00y"]]'):
        for data in (text, text.encode()):
            with pytest.raises(DataError, match="lone surrogate"):
                loads(data)


def test_caps_are_data():
    caps = DEFAULT_DATA_CAPS.with_overrides(["ratio=1000", "doc-bytes=2M", "field_bytes=1.5G", "depth=20"])
    assert (caps.ratio, caps.doc_bytes, caps.field_bytes, caps.depth) == (1000, 2 << 20, 3 << 29, 20)
    assert DEFAULT_DATA_CAPS.ratio == 100
    for bad in ("ratio", "nope=1", "ratio=x", "ratio=-1", "ratio=0"):
        with pytest.raises(ValueError, match="--cap"):
            DEFAULT_DATA_CAPS.with_overrides([bad])
