"""Python requirements an environment may install: PEP 508 specifiers, nothing else.

A requirement reaches pip inside the build sandbox (`codegym.sandbox.envbuild`), but it is
still data from strangers (a task file, a benchmark record, a repository's requirement
files), so it is checked before anything runs: `check_requirement` accepts a PEP 508
specifier (``pytest>=7``, ``numpy==1.25.2; python_version < "3.12"``, ``pkg[extra]``) and
refuses pip options (``-r/etc/shadow``, ``--index-url ...``) and, unless the user gave it
on the command line (`trusted`), URLs and local paths (``pkg @ file:///...``, ``git+https``,
``./dir``). `requirements_file` reads a requirements file of a repository: each line
checked, ``-r`` includes resolved inside the repository only, the repository itself
(``-e .``) left to its own install step, every other option refused with one line.
docs/swe.md, "Environments", says where each rule applies.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable

from packaging.requirements import InvalidRequirement, Requirement

#: packages yanked from PyPI that SWE-bench's harness replaces (its REPLACE_REQ_PACKAGES)
REPLACED = {"types-pkg-resources": "types-setuptools"}
#: what one requirement string or file may be
MAX_REQUIREMENT = 1000
MAX_FILE = 1 << 20
MAX_DEPTH = 5
MAX_LINES = 5000

_REPO_ITSELF = re.compile(r"^(-e\s+|--editable[=\s]+)?\.(\[[^\]]*\])?/?$|^\.\[")


class RequirementError(ValueError):
    """A requirement that is not a PEP 508 specifier, or one that is not allowed here."""


def _show(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def check_requirement(text: str, trusted: bool = False) -> str:
    """`text` as a normalised PEP 508 requirement (``pytest >= 7`` -> ``pytest>=7``).

    RequirementError for a pip option (anything starting with ``-``), text that is not a
    PEP 508 specifier, and -- unless `trusted` (the user's own command line) -- a URL or a
    local path (``pkg @ file:///x``, ``pkg @ https://...``)."""
    if not isinstance(text, str):
        raise RequirementError(f"a requirement must be text, not {type(text).__name__}")
    s = text.strip()
    if not s:
        raise RequirementError("an empty requirement")
    if len(s) > MAX_REQUIREMENT:
        raise RequirementError(f"{_show(s)}: longer than {MAX_REQUIREMENT} characters")
    if s.startswith("-"):
        raise RequirementError(f"{_show(s)}: a pip option, not a requirement (only PEP 508 specifiers "
                               "such as 'pytest>=7' are installed)")
    try:
        req = Requirement(s)
    except InvalidRequirement:
        raise RequirementError(f"{_show(s)}: not a PEP 508 requirement (a name, extras, version "
                               "specifiers and markers: 'pytest>=7')") from None
    if req.url and not trusted:
        raise RequirementError(f"{_show(s)}: a URL or local path; only a requirement given on the "
                               "command line may name one")
    name = requirement_name(req.name)
    if name in REPLACED:
        req = Requirement(REPLACED[name])
    return str(req)


def check_requirements(items: Iterable[str], trusted: bool | Iterable[str] = False) -> tuple[str, ...]:
    """Each of `items` through `check_requirement`; `trusted`: all of them, or the ones listed."""
    allowed = set(trusted) if not isinstance(trusted, bool) else None
    out = []
    for item in items:
        out.append(check_requirement(item, bool(trusted) if allowed is None else item in allowed))
    return tuple(out)


def requirement_name(name: str) -> str:
    """A distribution name normalised as PEP 503 does (``Foo_Bar`` -> ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _logical_lines(text: str) -> Iterable[tuple[int, str]]:
    """(line number, line) with comments removed and backslash continuations joined."""
    buf, start = "", 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw
        if not buf:
            start = n
        if line.lstrip().startswith("#"):
            line = ""
        else:
            line = re.sub(r"(^|\s)#.*$", "", line)
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        yield start, (buf + line).strip()
        buf = ""
    if buf.strip():
        yield start, buf.strip()


def _option(line: str) -> tuple[str, str] | None:
    """(option, value) of an option line (``-r x``, ``--requirement=x``, ``-rx``)."""
    m = re.match(r"^(--?[A-Za-z][\w-]*)(?:[=\s]\s*(.*))?$", line)
    if m:
        return m.group(1), (m.group(2) or "").strip()
    return None


def requirements_file(path: str, read: Callable[[str], str | None], *, _depth: int = 0,
                      _seen: set[str] | None = None) -> tuple[list[str], list[str]]:
    """(requirements, notes) of the repository's requirements file `path` (relative to the
    repository's root; `read(path)` gives a file's text or None).

    Every line is checked (`check_requirement`, untrusted): the good ones are kept in order,
    each bad one gives one note and is left out. ``-r FILE`` includes are read from the
    repository only (relative to the including file; no absolute paths, no ``..`` out of
    the repository, no URLs); ``-e .`` / ``.[test]`` lines (the repository itself) are left
    to its own install; every other option (``-c``, ``-e URL``, ``--index-url`` ...) is
    refused with a note."""
    seen = _seen if _seen is not None else set()
    notes: list[str] = []
    reqs: list[str] = []
    rel = posixpath.normpath(path)
    if rel.startswith(("/", "../")) or rel == "..":
        return [], [f"{path}: outside the repository: not read"]
    if rel in seen:
        return [], []
    seen.add(rel)
    text = read(rel)
    if text is None:
        return [], [f"{rel}: not in the repository"]
    if len(text) > MAX_FILE:
        return [], [f"{rel}: larger than {MAX_FILE >> 20} MiB: not read"]
    for k, (n, line) in enumerate(_logical_lines(text)):
        if k >= MAX_LINES:
            notes.append(f"{rel}: more than {MAX_LINES} lines: the rest is not read")
            break
        if not line:
            continue
        where = f"{rel}:{n}"
        if _REPO_ITSELF.match(line):
            notes.append(f"{where}: {_show(line)} is the repository itself: installed at its base commit")
            continue
        opt = _option(line)
        if opt is not None and opt[0] in ("-r", "--requirement") or re.match(r"^-r\S", line):
            value = opt[1] if opt is not None and opt[0] in ("-r", "--requirement") else line[2:].strip()
            if re.match(r"^[A-Za-z][\w+.-]*://", value) or value.startswith("/"):
                notes.append(f"{where}: {_show(line)}: an include outside the repository: refused")
                continue
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), value))
            if target == ".." or target.startswith("../") or target.startswith("/"):
                notes.append(f"{where}: {_show(line)}: an include outside the repository: refused")
                continue
            if _depth >= MAX_DEPTH:
                notes.append(f"{where}: {_show(line)}: includes nested deeper than {MAX_DEPTH}: not read")
                continue
            more, more_notes = requirements_file(target, read, _depth=_depth + 1, _seen=seen)
            reqs += more
            notes += more_notes
            continue
        if line.startswith("-"):
            notes.append(f"{where}: {_show(line)}: a pip option, refused (only PEP 508 requirements are read)")
            continue
        # per-requirement hashes pin an artifact; the requirement itself is what matters here
        line = re.sub(r"\s+--hash[=\s]\S+", "", line).strip()
        try:
            reqs.append(check_requirement(line))
        except RequirementError as e:
            notes.append(f"{where}: {e}")
    return reqs, notes
