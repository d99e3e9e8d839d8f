"""The one-pass base commit (`codegym.tasks.basecommit.commit_base`) is the commit the three
passes ``add -A --force``, ``commit``, ``repack -a -d`` make: the same object id, a clean
status, one pack -- also where ``add`` stores other bytes than the file's (line ends it
converts) or a path fast-import cannot name (then it takes the three passes itself)."""

from __future__ import annotations

import os
import shutil

import pytest

from codegym.core.git import GIT_IDENTITY, git
from codegym.tasks.basecommit import commit_base


def _three_passes(root) -> None:
    for args in (["init", "-q", "--template=", "-b", "base"], ["add", "-A", "--force"],
                 ["commit", "-q", "--allow-empty", "--no-verify", "-m", "base"],
                 ["repack", "-a", "-d", "-q"], ["prune-packed"]):
        git(args, root, env=GIT_IDENTITY)


def _tree(top, extra=None) -> None:
    (top / "pkg" / "sub dir").mkdir(parents=True)
    (top / "pkg" / "__init__.py").write_text("x = 1\n")
    (top / "pkg" / "sub dir" / "a file.txt").write_bytes(b"\x00\x01binary\r\n")
    (top / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (top / "run.sh").chmod(0o755)
    (top / "empty").write_bytes(b"")
    (top / ".gitignore").write_text("*.log\nbuild/\n")
    (top / "kept.log").write_text("ignored, committed all the same\n")
    (top / "build").mkdir()
    (top / "build" / "out.txt").write_text("also\n")
    os.symlink("pkg/__init__.py", top / "link.py")
    os.symlink("pkg", top / "pkglink")
    for name, data in (extra or {}).items():
        (top / name).write_bytes(data)


@pytest.mark.parametrize("extra", [
    None,
    {".gitattributes": b"*.bat text eol=crlf\n", "make.bat": b"@echo off\n"},
    # add stores LF: three passes
    {".gitattributes": b"* text=auto\n", "dos.txt": b"line one\r\nline two\r\n"},
    {".gitattributes": b"*.txt eol=lf text\n", "dos.txt": b"line one\r\nline two\r\n"},
    {".gitattributes": b"*.txt filter=x\n", "dos.txt": b"text\n"},
    {"new\nline.txt": b"a name fast-import cannot take unquoted\n"},
    {'"quoted.txt': b"neither\n"},
], ids=["plain", "attributes", "crlf-auto", "crlf-text", "filter", "newline-name", "quote-name"])
def test_one_pass_makes_the_three_passes_commit(tmp_path, extra):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    _tree(a, extra)
    shutil.copytree(a, b, symlinks=True)
    _three_passes(a)
    commit_base(b, RuntimeError)
    assert git(["rev-parse", "base"], b).stdout == git(["rev-parse", "base"], a).stdout
    ignored = ["status", "--porcelain", "--ignored"]
    assert git(ignored, b).stdout == git(ignored, a).stdout
    assert git(["status", "--porcelain"], b).stdout == b""
    assert git(["symbolic-ref", "HEAD"], b).stdout.strip() == b"refs/heads/base"
    listing = os.listdir(b / ".git" / "objects" / "pack")
    assert sum(n.endswith(".pack") for n in listing) <= 1


def test_an_empty_tree(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _three_passes(a)
    commit_base(b, RuntimeError)
    assert git(["rev-parse", "base"], b).stdout == git(["rev-parse", "base"], a).stdout
