"""JSON read with source positions, for tool-call spans: every decoded string
(`LocatedStr`) knows which characters of the action text each of its
characters came from, and every object (`LocatedDict`) its start and end."""

from __future__ import annotations

import bisect
import json
import json.scanner
import re
from _json import scanstring  # = json.decoder.scanstring, the C scanner (typeshed declares it only here)
from typing import Any

WS_RE = re.compile(r"[ \t\n\r]*")


def skip_ws(s: str, i: int) -> int:
    """Where the JSON whitespace at `i` ends (`WS_RE` matches everywhere, maybe nothing)."""
    m = WS_RE.match(s, i)
    assert m is not None
    return m.end()
_ESC_RE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.S)
_SURROGATE_ESC_RE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
#: lenient (control characters allowed in strings): models write raw newlines in JSON
JSON_DECODER = json.JSONDecoder(strict=False)

Segs = list[tuple[int, int, int]]


class LocatedStr(str):
    """A decoded JSON string that remembers where its characters came from:
    ``segs`` = [(vstart, vend, sstart)] with value[vstart:vend] ==
    source[sstart:sstart + vend - vstart]; ``omap`` = source offset of each
    character (escapes map to where the escape starts), plus the end."""

    segs: Segs
    omap: list[int]


class LocatedDict(dict):
    start: int
    end: int


def _literal(segs: Segs, omap: list[int], d: int, r: int, a: int) -> int:
    """Record the verbatim run ``source[r:a]`` decoded at ``d``; returns the new ``d``."""
    if a > r:
        segs.append((d, d + a - r, r))
        omap.extend(range(r, a))
        d += a - r
    return d


def _string_segs(s: str, rs: int, re_: int, value: str) -> tuple[Segs, list[int]]:
    """Segments and offset map of the string ``s[rs:re_]`` (between its quotes), decoded as ``value``."""
    segs: Segs = []
    omap: list[int] = []
    d, r = 0, rs
    if not _SURROGATE_ESC_RE.search(s, rs, re_):
        # fast path: every escape decodes to one character
        for a, b in [m.span() for m in _ESC_RE.finditer(s, rs, re_)]:
            d = _literal(segs, omap, d, r, a)
            omap.append(a)
            d += 1
            r = b
    else:
        ms = list(_ESC_RE.finditer(s, rs, re_))
        k = 0
        while k < len(ms):
            m = ms[k]
            d = _literal(segs, omap, d, r, m.start())
            r = m.end()
            h = m.group(1)
            if (h is not None and 0xD800 <= int(h, 16) <= 0xDBFF and k + 1 < len(ms)
                    and ms[k + 1].start() == m.end() and ms[k + 1].group(1) is not None
                    and 0xDC00 <= int(ms[k + 1].group(1), 16) <= 0xDFFF):
                r = ms[k + 1].end()  # a surrogate pair decodes to one character
                k += 1
            omap.append(m.start())
            d += 1
            k += 1
    d = _literal(segs, omap, d, r, re_)
    omap.append(re_)
    if d != len(value):  # never mis-attribute: no spans rather than wrong ones
        return [], [rs] * (len(value) + 1)
    return segs, omap


def _read_container(s: str, i: int, depth: int) -> tuple[Any, int]:
    """An object or array at ``s[i]``, its strings located."""
    if depth > 64:
        raise ValueError("JSON nested too deeply")
    c = s[i]
    close = "}" if c == "{" else "]"
    start = i
    obj: Any = LocatedDict() if c == "{" else []
    i = skip_ws(s, i + 1)
    if s[i] != close:
        while True:
            if c == "{":
                if s[i] != '"':
                    raise ValueError("expected a key")
                key, i = scanstring(s, i + 1, False)
                i = skip_ws(s, i)
                if s[i] != ":":
                    raise ValueError("expected ':'")
                v, i = read_located(s, i + 1, depth + 1)
                obj[key] = v
            else:
                v, i = read_located(s, i, depth + 1)
                obj.append(v)
            i = skip_ws(s, i)
            if s[i] == ",":
                i = skip_ws(s, i + 1)
                continue
            if s[i] == close:
                break
            raise ValueError(f"expected ',' or {close!r}")
    if isinstance(obj, LocatedDict):
        obj.start, obj.end = start, i + 1
    return obj, i + 1


def read_located(s: str, i: int, depth: int = 0) -> tuple[Any, int]:
    """Parse one JSON value at ``s[i:]`` keeping string positions."""
    i = skip_ws(s, i)
    c = s[i]
    if c == '"':
        val, end = scanstring(s, i + 1, False)
        ls = LocatedStr(val)
        ls.segs, ls.omap = _string_segs(s, i + 1, end - 1, val)
        return ls, end
    if c in "{[":
        return _read_container(s, i, depth)
    m = json.scanner.NUMBER_RE.match(s, i)
    if m:
        integer, frac, exp = m.groups()
        if frac or exp:
            return float(integer + (frac or "") + (exp or "")), m.end()
        return int(integer), m.end()
    for lit, const in (("true", True), ("false", False), ("null", None)):
        if s.startswith(lit, i):
            return const, i + len(lit)
    raise ValueError("invalid JSON value")


def compose(value: Any, outer: LocatedStr) -> Any:
    """Positions of values parsed from the decoded string ``outer`` are in
    ``outer``'s coordinates; map them to ``outer``'s source."""
    if isinstance(value, LocatedStr):
        segs: Segs = []
        oends = [o[1] for o in outer.segs]
        for vs, ve, os_ in value.segs:
            oe = os_ + (ve - vs)
            k = bisect.bisect_right(oends, os_)  # first outer segment ending after os_
            while k < len(outer.segs) and outer.segs[k][0] < oe:
                ovs, ove, ots = outer.segs[k]
                lo, hi = max(os_, ovs), min(oe, ove)
                if lo < hi:
                    segs.append((vs + lo - os_, vs + hi - os_, ots + lo - ovs))
                k += 1
        out = LocatedStr(str(value))
        out.segs = segs
        out.omap = [outer.omap[min(j, len(outer.omap) - 1)] for j in value.omap]
        return out
    if isinstance(value, dict):
        d = LocatedDict({k: compose(v, outer) for k, v in value.items()})
        d.start, d.end = getattr(value, "start", 0), getattr(value, "end", 0)
        return d
    if isinstance(value, list):
        return [compose(v, outer) for v in value]
    return value


def plain(value: Any) -> Any:
    """``value`` with plain ``str``/``dict`` instead of the located ones."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
