"""What a repository says about itself: test dependencies, source layout, licence.

Read from a commit of its git history without running any of its code (`repo_files`:
a few blobs read with ``git cat-file``, `codegym.core.git`). `declared_requirements`: pytest plus the dependencies the
project declares (``pyproject.toml`` ``[project]`` dependencies, test extras and PEP 735
groups; ``setup.cfg``; literal lists in ``setup.py``; ``*test*requirements*.txt``);
`layout_env`: ``PYTHONPATH=src`` for a src layout; `licence_of`: the SPDX id of a
LICENSE file's text (MIT, BSD-2/3-Clause, Apache-2.0, ...). `repo_environment` puts them
together for the importers (`codegym.importers.swebench`, `codegym.importers.mine`).
"""

from __future__ import annotations

import ast
import configparser
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

from codegym.core.git import git, git_text
from codegym.sandbox.pyreqs import RequirementError, check_requirement
from codegym.tasks.repo import check_commit

#: extras / dependency groups that hold what the tests need
TEST_EXTRAS = ("test", "tests", "testing")
#: licences whose code may be redistributed in a task suite (with their notice)
PERMISSIVE = ("MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC", "PSF-2.0", "Unlicense", "0BSD")

_REQ_FILE = re.compile(r"(^|/)((test|tests|testing)[-_.]?requirements|requirements[-_./](test|tests|testing))"
                       r"\.(txt|in)$", re.I)
_META_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
#: the largest metadata file read (bytes): a bigger one is left out
MAX_FILE = 1 << 20


def list_tree(git_dir: str | os.PathLike, commit: str) -> list[str]:
    """Paths of the files of `commit`."""
    out = git_text(["ls-tree", "-r", "--name-only", "-z", "--end-of-options", check_commit(commit)], git_dir)
    return [p for p in out.split("\0") if p]


def repo_files(git_dir: str | os.PathLike, commit: str, paths: Iterable[str]) -> dict[str, str]:
    """{path: text} of the files of `commit` among `paths` (absent ones, links and files
    over `MAX_FILE` left out): the blobs as stored, no conversion of any kind."""
    check_commit(commit)
    paths = [p for p in paths if "\n" not in p]
    if not paths:
        return {}
    query = b"".join(f"{commit}:{p}\n".encode("utf-8", "surrogateescape") for p in paths)
    raw = git(["cat-file", "--batch"], git_dir, input=query).stdout
    out, pos = {}, 0
    for p in paths:
        end = raw.index(b"\n", pos)
        header = raw[pos:end].split()
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit() or len(header[0]) not in (40, 64):
            continue  # "<name> missing"
        size = int(header[2])
        if header[1] == b"blob" and size <= MAX_FILE:
            out[p] = raw[pos:pos + size].decode("utf-8", "surrogateescape")
        pos += size + 1
    return out


def _requirement_lines(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-", "git+", "http:", "https:", ".")):
            continue  # options, nested files, editable / URL installs
        out.append(line)
    return out


def _from_pyproject(text: str) -> list[str]:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    proj = doc.get("project", {}) or {}
    out = list(proj.get("dependencies", []) or [])
    extras = proj.get("optional-dependencies", {}) or {}
    groups = doc.get("dependency-groups", {}) or {}
    for name in TEST_EXTRAS:
        out += list(extras.get(name, []) or [])
        out += [g for g in groups.get(name, []) or [] if isinstance(g, str)]  # ({include-group} skipped)
    return [x for x in out if isinstance(x, str)]


def _from_setup_cfg(text: str) -> list[str]:
    cp = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        cp.read_string(text)
    except configparser.Error:
        return []
    out: list[str] = []
    if cp.has_option("options", "install_requires"):
        out += _requirement_lines(cp.get("options", "install_requires"))
    if cp.has_section("options.extras_require"):
        for name in TEST_EXTRAS:
            if cp.has_option("options.extras_require", name):
                out += _requirement_lines(cp.get("options.extras_require", name))
    return out


def _literal(node: ast.AST):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def _from_setup_py(text: str) -> list[str]:
    """Literal ``install_requires`` / ``tests_require`` / test ``extras_require`` of a setup() call."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    # x = [...]; setup(install_requires=x) -- every literal assigned to x, in either branch
    # of an `if` (an old python-slugify: Unidecode, or text-unidecode when asked): all of them
    names: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names.setdefault(t.id, []).append(node.value)
    out: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            nodes = names.get(kw.value.id, []) if isinstance(kw.value, ast.Name) else [kw.value]
            for value in map(_literal, nodes):
                if kw.arg in ("install_requires", "tests_require") and isinstance(value, (list, tuple)):
                    out += [v for v in value if isinstance(v, str)]
                elif kw.arg == "extras_require" and isinstance(value, dict):
                    for name in TEST_EXTRAS:
                        out += [v for v in value.get(name, []) if isinstance(v, str)]
    return out


def _name(req: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def declared_requirements(files: Mapping[str, str], paths: Iterable[str] = ()) -> list[str]:
    """pytest, then what the project declares it and its tests need, in that order, each
    distribution once (the first mention wins). `files`: {path: text} of the metadata
    files and test requirement files; `paths`: the tree's paths (to find those)."""
    reqs: list[str] = []
    if "pyproject.toml" in files:
        reqs += _from_pyproject(files["pyproject.toml"])
    if "setup.cfg" in files:
        reqs += _from_setup_cfg(files["setup.cfg"])
    if "setup.py" in files:
        reqs += _from_setup_py(files["setup.py"])
    for p in sorted(set(paths) | set(files)):
        if _REQ_FILE.search(p) and p in files:
            reqs += _requirement_lines(files[p])
    out, seen = [], set()
    if not any(_name(r) == "pytest" for r in reqs):
        reqs.insert(0, "pytest")
    for r in reqs:
        n = _name(r)
        if n and n not in seen:
            seen.add(n)
            out.append(r.strip())
    return out


def merge_requirements(declared: Iterable[str], added: Iterable[str]) -> list[str]:
    """`declared` with `added` appended; a distribution `added` names again replaces its
    declared line (``pytest<8`` over ``pytest``), in place."""
    out = [r.strip() for r in declared if r.strip()]
    for req in added:
        req = req.strip()
        names = [_name(r) for r in out]
        if not req:
            continue
        if _name(req) in names:
            out[names.index(_name(req))] = req
        elif req not in out:
            out.append(req)
    return out


def layout_env(paths: Iterable[str]) -> dict[str, str]:
    """``{"PYTHONPATH": "src"}`` when the packages live under ``src/`` (the tests import the
    checkout's code, never an installed copy), else nothing: ``python -m pytest`` puts the
    checkout's root first on the path."""
    paths = list(paths)
    if any(re.match(r"^src/[^/]+/__init__\.py$", p) for p in paths):
        return {"PYTHONPATH": "src"}
    return {}


_LICENCES = [  # (SPDX id, pattern of its text), most specific first
    ("Apache-2.0", r"Apache License,?\s+Version 2\.0"),
    ("BSD-3-Clause", r"Neither the name of .{0,200}? nor the names of (its|any|their)? ?\s*contributors"
                     r"|names of (its|the) contributors may not be used to endorse or promote"),
    ("BSD-2-Clause", r"Redistributions in binary form must reproduce the above copyright notice"),
    ("MIT", r"Permission is hereby granted, free of charge, to any person obtaining a copy"),
    ("ISC", r"Permission to use, copy, modify, and/or distribute this software for any purpose"),
    ("Unlicense", r"This is free and unencumbered software released into the public domain"),
    ("GPL-3.0", r"GNU GENERAL PUBLIC LICENSE\s+Version 3"),
    ("GPL-2.0", r"GNU GENERAL PUBLIC LICENSE\s+Version 2"),
    ("LGPL", r"GNU LESSER GENERAL PUBLIC LICENSE"),
    ("MPL-2.0", r"Mozilla Public License,? (v\. |Version )2\.0"),
]
_LICENCE_FILE = re.compile(r"^(LICEN[CS]E|COPYING)(\.(txt|md|rst))?$", re.I)


def licence_of(text: str) -> str | None:
    """The SPDX id of a licence text (None: not recognised)."""
    flat = re.sub(r"\s+", " ", text)
    for spdx, pattern in _LICENCES:
        if re.search(pattern, flat, re.I | re.S):
            return spdx
    return None


def _valid(req: str) -> bool:
    try:
        check_requirement(req)
    except RequirementError:
        return False
    return True


def wanted_files(paths: Iterable[str]) -> list[str]:
    """The files of a tree that `declared_requirements` reads (metadata, test requirement files)."""
    return [p for p in paths if p in _META_FILES or _REQ_FILE.search(p)]


def repo_environment(git_dir: str | os.PathLike, commit: str) -> dict:
    """{"install": [...], "env": {...}, "licence": SPDX id | None, "licence_file": path | None}
    of a repository at `commit`, read from its files; "install" holds the PEP 508 requirements
    only (`codegym.sandbox.pyreqs`: a declared URL or path is left out)."""
    paths = list_tree(git_dir, commit)
    wanted = wanted_files(paths)
    lic_files = [p for p in paths if _LICENCE_FILE.match(p)]
    files = repo_files(git_dir, commit, wanted + lic_files)
    licence = next((lic for p in lic_files if (lic := licence_of(files.get(p, "")))), None)
    declared = declared_requirements({p: files[p] for p in wanted if p in files}, paths)
    return {"install": [r for r in declared if _valid(r)],
            "env": layout_env(paths), "licence": licence,
            "licence_file": next((p for p in lic_files if p in files), None)}


def git_dir_of(path: str | os.PathLike) -> Path:
    """A repository path (working tree or bare) -> its git directory."""
    p = Path(path)
    return p / ".git" if (p / ".git").is_dir() else p
