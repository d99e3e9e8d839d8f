"""Unified diffs of repo tasks, checked before they touch a file (docs/swe.md, "Patches").

- `patch_paths`: the (modified, added, removed) paths of a diff.
- `check_patch`: refuses a patch that leaves the tree (an absolute path, a ``..``
  component, a path into ``.git``) or that creates or changes a symbolic link or a
  submodule: a link could lead a later read out of the tree (``leak -> /etc/shadow``).
- `apply_patch`: ``git apply`` on the touched files only, in a scratch folder, after
  `check_patch`; nothing is written outside that folder and nothing is read back through
  a link.
- `check_relpath`: the same rule for one path of a tree.

Patches come from strangers (SWE-bench records, mined histories, model edits), so these
rules hold whatever the patch says; `SWEError` is the one error, with the path named.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

import unidiff

from codegym.core.git import git


class SWEError(ValueError):
    """A repository that cannot be materialised, a patch that does not apply, a bad record."""


#: file modes a patch may not create: a symbolic link, a submodule (gitlink)
_REFUSED_MODES = {"120000": "a symbolic link", "160000": "a submodule"}
_MODE_LINE = re.compile(r"^(new file mode|new mode|index [0-9a-f]+\.\.[0-9a-f]+) ([0-7]{6})\s*$")
_QUOTED_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(p: str) -> str:
    """A path as git writes it: ``"a/t\\303\\251"`` (C-quoted, octal UTF-8 bytes) -> ``a/té``."""
    if len(p) < 2 or not (p.startswith('"') and p.endswith('"')):
        return p
    body, out, i = p[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and re.fullmatch(r"[0-7]{3}", body[i + 1:i + 4] or ""):
                out.append(int(body[i + 1:i + 4], 8))
                i += 4
                continue
            if nxt in _QUOTED_ESCAPES:
                out.append(_QUOTED_ESCAPES[nxt])
                i += 2
                continue
        out += c.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _strip_prefix(p: str) -> str | None:
    p = _unquote(p.strip())
    if p in ("/dev/null", "dev/null") or not p:
        return None
    return p[2:] if p[:2] in ("a/", "b/") else p


def check_relpath(path: str) -> str | None:
    """Why `path` (relative to a tree's root) is refused, or None when it stays inside
    the tree: empty, absolute, a ``..`` component, a NUL, a ``.git`` component."""
    if not path:
        return "an empty path"
    if "\0" in path:
        return "a path with a NUL character"
    if path.startswith("/"):
        return "an absolute path"
    parts = path.split("/")
    if ".." in parts:
        return "a path that leaves the tree ('..')"
    if any(x.lower() == ".git" for x in parts):
        return "a path inside .git"
    return None


def _parse(patch: str) -> unidiff.PatchSet:
    try:
        return unidiff.PatchSet(patch)
    except (unidiff.UnidiffParseError, ValueError) as e:
        raise SWEError(f"not a unified diff: {e}") from None


def patch_paths(patch: str) -> tuple[set[str], set[str], set[str]]:
    """(modified, added, removed) paths of a unified diff (renames: old removed, new added)."""
    modified: set[str] = set()
    added: set[str | None] = set()
    removed: set[str | None] = set()
    for pf in _parse(patch):
        src, tgt = _strip_prefix(pf.source_file), _strip_prefix(pf.target_file)
        if pf.is_added_file or src is None:
            added.add(tgt)
        elif pf.is_removed_file or tgt is None:
            removed.add(src)
        elif src != tgt:
            removed.add(src)
            added.add(tgt)
        else:
            modified.add(tgt)
    return modified, {p for p in added if p is not None}, {p for p in removed if p is not None}


def check_patch(patch: str) -> tuple[set[str], set[str], set[str]]:
    """`patch_paths` of a patch that stays inside the tree; `SWEError` naming the path
    for one that leaves it or makes a symbolic link or a submodule (see the module
    docstring)."""
    ps = _parse(patch)
    for pf in ps:
        target = _strip_prefix(pf.target_file) or _strip_prefix(pf.source_file) or "?"
        for line in pf.patch_info or ():  # (None: a file without header lines)
            line = str(line).rstrip("\n")
            if line.startswith("diff --git "):
                continue
            m = _MODE_LINE.match(line)
            if m and m.group(2) in _REFUSED_MODES:
                raise SWEError(f"the patch makes {target!r} {_REFUSED_MODES[m.group(2)]}: refused (a link "
                               f"could lead out of the tree)")
            for key in ("rename from ", "rename to ", "copy from ", "copy to "):
                if line.startswith(key):
                    why = check_relpath(_unquote(line[len(key):]))
                    if why:
                        raise SWEError(f"the patch names {why}: {line[len(key):]!r}")
    modified, added, removed = patch_paths(patch)
    for p in sorted(modified | added | removed):
        why = check_relpath(p)
        if why:
            raise SWEError(f"the patch names {why}: {p!r}")
    return modified, added, removed


def _inside(root: Path, rel: str) -> bool:
    """`root`/`rel` is a regular file reached without a symbolic link."""
    full = root
    for part in rel.split("/"):
        full = full / part
        if full.is_symlink():
            return False
    return full.is_file()


def apply_patch(files: Mapping[str, str | None], patch: str) -> dict[str, str | None]:
    """The files a patch touches after applying it to `files` (``git apply``, strict
    context): {path: new text, or None when the patch deletes it}. `check_patch` first:
    a patch that leaves the tree or makes a link is refused before anything is written."""
    if not patch or not patch.strip():
        return {}
    modified, added, removed = check_patch(patch)
    touched = modified | removed | added
    with tempfile.TemporaryDirectory(prefix="codegym-patch-") as tmp:
        root = Path(tmp) / "t"
        root.mkdir()
        for p in touched:
            text = files.get(p)
            if text is None:
                continue
            full = root / p
            full.parent.mkdir(parents=True, exist_ok=True)
            with open(full, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
                fh.write(text)
        proc = git(["apply", "--whitespace=nowarn", "-"], root,
                   input=patch.encode("utf-8", "surrogateescape"), env={"GIT_CEILING_DIRECTORIES": tmp},
                   check=False)
        if proc.returncode != 0:
            raise SWEError("the patch does not apply: " + proc.stderr.decode("utf-8", "replace").strip()[-1500:])
        out: dict[str, str | None] = {}
        for path in touched:
            full = root / path
            if _inside(root, path):
                with open(full, encoding="utf-8", errors="surrogateescape", newline="") as fh:
                    out[path] = fh.read()
            elif os.path.lexists(full):
                raise SWEError(f"the patch left {path!r} as something other than a file: refused")
            else:
                out[path] = None
        return out
