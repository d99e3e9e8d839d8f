"""``codegym import lcb DIR``: a directory of LiveCodeBench files from a stranger.

Each data file is read alone: one that cannot be read -- a FIFO (it would hang the
reader), a device, a folder named like a file, a link to nothing, a gzip bomb, not JSON --
is one line naming it and why, and the other files import. A directory of more entries
than the cap ``files`` (10,000; ``--cap files=N``) is one error line, nothing written,
found without listing the rest. Nothing is opened that is not a regular file.
"""

from __future__ import annotations

import gzip
import json
import os
import time

import pytest
from test_importers import _lcb_records

from codegym.cli.main import main
from codegym.core.jsonl import DataCaps, DataError, data_files
from codegym.importers.common import ImportError_
from codegym.importers.lcb import lcb_records


def _folder(tmp_path):
    d = tmp_path / "lcb"
    d.mkdir()
    two_sum, mean = _lcb_records()
    (d / "a.jsonl").write_text(json.dumps(two_sum) + "\n")
    (d / "b.jsonl.gz").write_bytes(gzip.compress((json.dumps(mean) + "\n").encode()))
    os.mkfifo(d / "pipe.jsonl")                           # a reader that opened it would hang
    (d / "folder.json").mkdir()
    (d / "gone.jsonl").symlink_to(tmp_path / "nothing-here")
    (d / "bomb.jsonl.gz").write_bytes(gzip.compress(b" " * (200 << 20)))   # ~200 KB -> 200 MB
    (d / "notes.txt").write_text("not a data file: not looked at\n")
    return d


def test_every_bad_entry_is_one_line_and_the_other_files_import(tmp_path, capsys):
    d = _folder(tmp_path)
    t0 = time.monotonic()
    records, bad = lcb_records(d, DataCaps(ratio_slack=1 << 20))
    assert time.monotonic() - t0 < 60
    assert sorted(r["question_id"] for _, r in records) == ["9001", "abc900_a"]
    why = dict(bad)
    assert set(why) == {"bomb.jsonl.gz", "folder.json", "gone.jsonl", "pipe.jsonl"}, bad
    assert why["pipe.jsonl"] == "a FIFO, not a regular file"
    assert why["folder.json"] == "a directory, not a regular file"
    assert why["gone.jsonl"].startswith("cannot be read: No such file or directory")
    assert "ratio" in why["bomb.jsonl.gz"] and "\n" not in why["bomb.jsonl.gz"]
    # the command: the good files written, one line per bad entry, exit 0 as for skipped records
    code = main(["import", "lcb", str(d), "--out", str(tmp_path / "out"), "--no-verify", "--cap", "ratio_slack=1M"])
    out = capsys.readouterr()
    text = out.out + out.err
    assert sorted(p.name for p in (tmp_path / "out").glob("*.yaml") if p.name != "suite.yaml") == \
        ["9001.yaml", "abc900_a.yaml"], text
    for name in ("pipe.jsonl", "folder.json", "gone.jsonl", "bomb.jsonl.gz"):
        assert sum(name in line for line in text.splitlines()) == 1, (name, text)
    assert code in (0, 1), text


def test_a_directory_over_the_file_cap_is_one_line_and_nothing_is_written(tmp_path, capsys):
    d = tmp_path / "many"
    d.mkdir()
    for i in range(30):
        (d / f"{i}.jsonl").write_text("{}\n")
    with pytest.raises(DataError, match=r"more than 20 entries, over the cap \(files"):
        data_files(d, r"\.jsonl$", DataCaps(files=20))
    with pytest.raises(ImportError_, match="over the cap"):
        lcb_records(d, DataCaps(files=20))
    code = main(["import", "lcb", str(d), "--out", str(tmp_path / "out"), "--cap", "files=20"])
    text = "".join(capsys.readouterr())
    assert code != 0 and "more than 20 entries, over the cap (files; --cap files=N)" in text
    assert not (tmp_path / "out" / "suite.yaml").exists()
    assert len(data_files(d, r"\.jsonl$")[0]) == 30          # the default cap: 10,000


def test_an_empty_directory_says_so(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImportError_, match="no .jsonl, .json"):
        lcb_records(tmp_path / "empty")
