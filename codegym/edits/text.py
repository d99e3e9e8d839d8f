"""Text helpers the edit formats share: lines and line starts, indentation,
matching lines with tolerance (`find_all`) and saying why a match failed
(`mismatch_hint`), file-name recognition and path cleaning, and `ActionError`
(a problem with the action, shown to the model)."""

from __future__ import annotations

import difflib
import functools
import os.path
import posixpath
import re
from collections.abc import Collection, Sequence
from itertools import accumulate

#: characters that cannot be in a path or in a source file (NUL, lone surrogates)
BAD_CHAR_RE = re.compile("[\x00\ud800-\udfff]")
_SIMPLE_PATH_RE = re.compile(r"[\w./][\w\-./+@]*")


class ActionError(Exception):
    """A problem with the action; its message becomes ParsedAction.error."""


def quote(s: str, n: int = 80) -> str:
    """Quote a line for a message, shortened."""
    s = s if len(s) <= n else s[: n - 3] + "..."
    return repr(s)


@functools.lru_cache(maxsize=32)
def lines_and_starts(content: str) -> tuple[list[str], LineStarts, bool]:
    """Lines without their newline, char offset of each line start (plus the
    end), and whether the content ends with a newline.

    Cached (a step splits the same file several times); callers must not mutate
    the lists."""
    if not content:
        return [], LineStarts([], 0), True
    final_nl = content.endswith("\n")
    lines = (content[:-1] if final_nl else content).split("\n")
    return lines, LineStarts(lines, len(content)), final_nl


class LineStarts:
    """``starts[i]``: char offset of line i; ``starts[len(lines)]``: the content's length.
    (Line i starts after the i newlines and the characters of the lines before it.)
    An edit reads two or three of them: the first few are summed on demand, a table
    of all is built only for callers that read more."""

    __slots__ = ("_lines", "_end", "_sums", "_reads")

    def __init__(self, lines: list[str], end: int):
        self._lines, self._end = lines, end
        self._sums: list[int] | None = None
        self._reads = 0

    def __len__(self) -> int:
        return len(self._lines) + 1

    def __getitem__(self, i: int) -> int:
        n = len(self._lines) + 1
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("line start index out of range")
        if self._sums is None:
            self._reads += 1
            if self._reads <= 3:
                return min(sum(map(len, self._lines[:i])) + i, self._end)
            self._sums = list(accumulate(map(len, self._lines), initial=0))
        return min(self._sums[i] + i, self._end)


def keep_lines(content: str) -> list[str]:
    """Lines with their "\\n" (the last may lack it); splits on \\n only."""
    if not content:
        return []
    parts = content.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def common_indent(lines: Sequence[str]) -> str:
    """The leading whitespace all non-blank lines share."""
    ind = [l[: len(l) - len(l.lstrip())] for l in lines if l.strip()]
    return os.path.commonprefix(ind) if ind else ""


def find_all(lines: list[str], needle: list[str], level: str) -> list[int]:
    """Start indexes where ``needle`` matches ``lines`` at a tolerance level:
    "exact", "rstrip" (trailing whitespace ignored) or "indent" (also a
    uniform indentation shift)."""
    m = len(needle)
    n = len(lines)
    if m == 0 or m > n:
        return []
    if level == "exact":
        return _find_exact(lines, needle)
    if level == "rstrip":
        return _find_exact([l.rstrip() for l in lines], [l.rstrip() for l in needle])
    # indent: compare with each side's common indentation removed
    k0 = next((k for k, s in enumerate(needle) if s.strip()), None)
    if k0 is None:
        return []
    si = common_indent(needle)
    rel = [s.rstrip()[len(si):] if s.strip() else "" for s in needle]
    key = needle[k0].strip()
    out: list[int] = []
    for p in range(0, n - m + 1):
        if lines[p + k0].strip() != key:
            continue
        window = lines[p:p + m]
        if any(bool(w.strip()) != bool(s.strip()) for w, s in zip(window, needle)):
            continue
        fi = common_indent(window)
        if all((w.rstrip()[len(fi):] if w.strip() else "") == r for w, r in zip(window, rel)):
            out.append(p)
    return out


def _find_exact(lines: list[str], needle: list[str]) -> list[int]:
    m, n = len(needle), len(lines)
    if m == 0 or m > n:
        return []
    out: list[int] = []
    first = needle[0]
    i = 0
    while True:
        try:
            i = lines.index(first, i, n - m + 1)
        except ValueError:
            return out
        if lines[i:i + m] == needle:
            out.append(i)
        i += 1


def mismatch_hint(lines: list[str], needle: list[str], path: str) -> str:
    """Why ``needle`` was not found: the closest place and its first difference."""
    k0 = next((k for k, s in enumerate(needle) if s.strip()), None)
    if k0 is None:
        return ""
    key = needle[k0].strip()
    hits = [i for i, l in enumerate(lines) if l.strip() == key]
    if not hits:
        close = difflib.get_close_matches(key, [l.strip() for l in lines[:5000]], n=1, cutoff=0.6)
        msg = f"the line {quote(needle[k0].strip())} does not occur in {path}"
        if close:
            idx = next(i for i, l in enumerate(lines) if l.strip() == close[0])
            msg += f"; the closest line is {idx + 1}: {quote(lines[idx])}"
        return msg
    best_p, best_n = None, -1
    for h in hits[:200]:
        p = h - k0
        cnt = 0
        while cnt < len(needle) and 0 <= p + cnt < len(lines) and lines[p + cnt].rstrip() == needle[cnt].rstrip():
            cnt += 1
        if cnt > best_n:
            best_p, best_n = p, cnt
    assert best_p is not None
    if best_n >= len(needle) or best_p + best_n >= len(lines) or best_p + best_n < 0:
        return f"the lines run past the end of {path}"
    want, have = needle[best_n], lines[best_p + best_n]
    why = " (only the indentation differs)" if want.strip() == have.strip() else ""
    return (f"the closest match starts at line {best_p + 1} of {path}, but line {best_n + 1} of the "
            f"block is {quote(want)} where the file has {quote(have)}{why}")


def looks_like_filename(s: str, extensions: Collection[str] | None = None) -> bool:
    """``s`` reads as a file name (``name.ext``); with ``extensions``, only one
    whose extension (or its lower case) is among them."""
    if not s or len(s) > 255 or not _SIMPLE_PATH_RE.fullmatch(s):
        return False
    base, dot, ext = s.rpartition(".")
    if not dot or not base or base.endswith(("/", ".")) or not ext or not ext[0].isalpha():
        return False
    if extensions is not None and "." + ext not in extensions and "." + ext.lower() not in extensions:
        return False
    return True


def is_simple_path(s: str) -> bool:
    """Only word characters and ``-./+@`` (a path as a model writes it on a line of its own)."""
    return _SIMPLE_PATH_RE.fullmatch(s) is not None


def clean_path(raw: str, what: str) -> str:
    """A workspace-relative POSIX path, or ActionError."""
    p = raw.strip()
    if len(p) >= 2 and p[0] == p[-1] and p[0] in "\"'`":
        p = p[1:-1].strip()
    if not p:
        raise ActionError(f"{what}: the path is empty")
    if any(ord(c) < 32 or ord(c) == 127 for c in p) or BAD_CHAR_RE.search(p):
        raise ActionError(f"{what}: the path {quote(p)} contains control characters")
    if "\\" in p:
        raise ActionError(f"{what}: the path {quote(p)} uses backslashes; write paths with '/'")
    if p.startswith("/") or re.match(r"[A-Za-z]:", p) or p.startswith("~"):
        raise ActionError(f"{what}: the path {quote(p)} is absolute; paths are relative to the workspace root")
    n = posixpath.normpath(p)
    if n in (".", "..") or n.startswith("../"):
        raise ActionError(f"{what}: the path {quote(p)} is outside the workspace")
    return n
