"""JSON, JSON lines, gzip and zlib from strangers, read within bounds (`DataCaps`).

The one reader of untrusted data files (benchmark files, replay records, eval
manifests) and compressed fields (LiveCodeBench's zlib tests), as `codegym.core.yamldoc`
is for YAML and `codegym.core.tomldoc` for TOML:

- `open_regular`: a file is opened only when it is a regular file (a FIFO would hang
  the reader, a device would read the host's; both are refused by name);
- `data_files`: the data files of a directory, at most `files` entries looked at; each
  entry of the right name that is not a regular file named with what it is;
- `chunks`: a file's bytes in pieces, gzip decompressed on the fly (members one after
  the other) under `DataCaps`: its stored size, its decompressed size, and the ratio
  of the two once past `ratio_slack` -- a 0.5 MB gzip file that expands to 500 MB
  stops at the slack, whatever it holds;
- `split_lines` / `json_lines`: numbered lines, a line over `doc_bytes` dropped as it
  streams past (never held), each line parsed by `loads`;
- `loads`: JSON with its nesting bounded (`depth`; CPython's parser recurses, a
  100,000-deep value is a RecursionError), `DataError` for anything wrong;
- `read_json`: a whole JSON document (at most `doc_bytes`);
- `inflate`: one compressed field (zlib or gzip) under `field_bytes` and the ratio.

Errors are `DataError` (a ValueError), one line naming what and where. Caps are data:
callers pass their own (`DataCaps.replace`, `DataCaps.with_overrides` for
``--cap NAME=VALUE``); errors name the cap to raise.
"""

from __future__ import annotations

import json
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Any

MB = 1 << 20
_READ = 1 << 20


@dataclass(frozen=True)
class DataCaps:
    """What one data file (and each compressed field in it) may cost.

    file_bytes   the file as stored
    text_bytes   the file after decompression (gzip)
    doc_bytes    one JSON document: a line of a JSON-lines file, a whole JSON file
    field_bytes  one compressed field (LCB's zlib tests) after decompression
    ratio        decompressed / compressed bytes, checked once past `ratio_slack`
    ratio_slack  decompressed bytes below which the ratio is not checked
    depth        nesting of JSON arrays and objects
    records      records (lines) of one file
    files        entries of one directory of data files
    """

    file_bytes: int = 64 << 30
    text_bytes: int = 16 << 30
    doc_bytes: int = 512 * MB
    field_bytes: int = 512 * MB
    ratio: int = 100
    ratio_slack: int = 64 * MB
    depth: int = 100
    records: int = 1_000_000
    files: int = 10_000

    def replace(self, **kw: Any) -> DataCaps:
        return DataCaps(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **kw})

    def with_overrides(self, pairs: Iterable[str]) -> DataCaps:
        """These caps with ``NAME=VALUE`` overrides (sizes take K, M, G suffixes);
        ValueError naming a bad one."""
        names = {f.name for f in fields(self)}
        kw: dict[str, int] = {}
        for pair in pairs or ():
            name, sep, value = str(pair).partition("=")
            name = name.strip().replace("-", "_")
            if not sep or name not in names:
                raise ValueError(f"--cap wants NAME=VALUE with NAME one of {', '.join(sorted(names))}, got {pair!r}")
            kw[name] = _size(value, name)
        return self.replace(**kw)


def _size(text: str, name: str) -> int:
    t = text.strip().upper().removesuffix("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    try:
        n = int(float(t[:-1] if mult > 1 else t) * mult)
    except (ValueError, OverflowError):
        raise ValueError(f"--cap {name}: not a number: {text!r}") from None
    if n <= 0:
        raise ValueError(f"--cap {name}: must be positive, not {text!r}")
    return n


DEFAULT_DATA_CAPS = DataCaps()


class DataError(ValueError):
    """Data that cannot be read within its caps (the message says what and where)."""


def _mb(n: int) -> str:
    return f"{n / MB:,.0f} MB" if n >= MB else f"{n:,} bytes"


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file")


def open_regular(path: str | os.PathLike, max_bytes: int | None = None) -> tuple[int, int]:
    """(descriptor, size) of `path` opened for reading, only when it is a regular file
    (symlinks followed) of at most `max_bytes`: a FIFO, socket, device or directory is a
    `DataError` naming it, and opening never blocks."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise DataError(f"{os.fspath(path)}: no such file") from None
    except OSError as e:
        raise DataError(f"{os.fspath(path)}: cannot open: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DataError(f"{os.fspath(path)}: {file_kind(st.st_mode)}, not a regular file: not read")
        if max_bytes is not None and st.st_size > max_bytes:
            raise DataError(f"{os.fspath(path)}: {_mb(st.st_size)}, over the cap of {_mb(max_bytes)} (file_bytes)")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def data_files(folder: str | os.PathLike, pattern: str,
               caps: DataCaps = DEFAULT_DATA_CAPS) -> tuple[list[str], list[tuple[str, str]]]:
    """(the paths of `folder`'s regular files whose name matches `pattern`, sorted; (name,
    why) of each entry so named that is not read: a FIFO, socket, device or directory, a
    link to nothing). Nothing is opened. A folder of more than `caps.files` entries is a
    `DataError` naming the cap (listing it stops there)."""
    where = os.fspath(folder)
    found, skipped = [], []
    try:
        with os.scandir(where) as it:
            for n, entry in enumerate(it, 1):
                if n > caps.files:
                    raise DataError(f"{where}: more than {caps.files:,} entries, over the cap "
                                    "(files; --cap files=N): not read")
                if not re.search(pattern, entry.name):
                    continue
                try:
                    mode = os.stat(entry.path).st_mode        # a link: what it points to
                except OSError as e:
                    skipped.append((entry.name, f"cannot be read: {e.strerror or e}"))
                    continue
                if stat.S_ISREG(mode):
                    found.append(entry.path)
                else:
                    skipped.append((entry.name, f"{file_kind(mode)}, not a regular file"))
    except OSError as e:
        raise DataError(f"{where}: cannot list: {e.strerror or e}") from None
    return sorted(found), sorted(skipped)


def read_regular(path: str | os.PathLike, max_bytes: int) -> bytes:
    """The bytes of the regular file `path`, at most `max_bytes` (`DataError` beyond,
    also when it grows while read)."""
    fd, _ = open_regular(path, max_bytes)
    try:
        out, n = [], 0
        while True:
            b = os.read(fd, min(_READ, max_bytes + 1 - n))
            if not b:
                break
            out.append(b)
            n += len(b)
            if n > max_bytes:
                raise DataError(f"{os.fspath(path)}: over the cap of {_mb(max_bytes)}")
        return b"".join(out)
    finally:
        os.close(fd)


class _Inflater:
    """Decompression of one stream under an absolute cap and a ratio (see `DataCaps`)."""

    def __init__(self, where: str, limit: int, caps: DataCaps, cap_name: str, members: bool):
        self.where, self.limit, self.caps, self.cap_name, self.members = where, limit, caps, cap_name, members
        self.d = zlib.decompressobj(zlib.MAX_WBITS | 32)   # zlib or gzip header
        self.fed = self.out = 0

    def check(self) -> None:
        if self.out > self.limit:
            raise DataError(f"{self.where}: decompresses to more than {_mb(self.limit)} ({self.cap_name})")
        if self.out > self.caps.ratio_slack and self.out > self.caps.ratio * max(1, self.fed):
            raise DataError(f"{self.where}: decompresses more than {self.caps.ratio} times its size "
                            f"({_mb(self.fed)} -> over {_mb(self.out)}): a compression bomb? (ratio)")

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decompressed pieces of `data` (the next compressed bytes); with `members`,
        gzip members one after the other (zero padding after the last is ignored)."""
        while data:
            if self.d.eof:
                if not self.members or not data.strip(b"\0"):
                    return
                self.d = zlib.decompressobj(zlib.MAX_WBITS | 32)
            self.fed += len(data)
            buf, data = data, b""
            while buf:
                try:
                    piece = self.d.decompress(buf, _READ)
                except zlib.error as e:
                    raise DataError(f"{self.where}: not readable compressed data: {e}") from None
                self.out += len(piece)
                self.check()
                if piece:
                    yield piece
                if self.d.eof:
                    data = self.d.unused_data
                    self.fed -= len(data)
                    break
                buf = self.d.unconsumed_tail

    def finish(self) -> None:
        if not self.d.eof:
            raise DataError(f"{self.where}: compressed data cut short")


def chunks(path: str | os.PathLike, caps: DataCaps = DEFAULT_DATA_CAPS) -> Iterator[bytes]:
    """The bytes of the regular file `path` in pieces, gzip decompressed (it starts with
    gzip's magic) within `caps` (`DataError` past a cap: the stored size, the
    decompressed size, the ratio)."""
    where = os.fspath(path)
    fd, _ = open_regular(path, caps.file_bytes)
    try:
        first = os.read(fd, _READ)
        inflater = _Inflater(where, caps.text_bytes, caps, "text_bytes", True) if first[:2] == b"\x1f\x8b" else None
        block, total = first, 0
        while block:
            total += len(block)
            if total > caps.file_bytes:
                raise DataError(f"{where}: grew over the cap of {_mb(caps.file_bytes)} while read (file_bytes)")
            if inflater is None:
                yield block
            else:
                yield from inflater.feed(block)
            block = os.read(fd, _READ)
        if inflater is not None:
            inflater.finish()
    finally:
        os.close(fd)


def split_lines(pieces: Iterable[bytes], max_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes without the newline) of the lines of a stream of `pieces`; a
    line over `max_bytes` comes as (number, None) and is never held whole."""
    parts: list[bytes] = []
    size, n, over = 0, 1, False
    for piece in pieces:
        segs = piece.split(b"\n")
        for seg in segs[:-1]:
            if over or size + len(seg) > max_bytes:
                yield n, None
            else:
                parts.append(seg)
                yield n, b"".join(parts)
            parts, size, over, n = [], 0, False, n + 1
        last = segs[-1]
        if last and not over:
            size += len(last)
            if size > max_bytes:
                parts, over = [], True
            else:
                parts.append(last)
    if parts or over:
        yield n, None if over else b"".join(parts)


def too_deep(value: Any, depth: int) -> bool:
    """Whether arrays and objects nest deeper than `depth` in `value` (no recursion)."""
    if type(value) is not list and type(value) is not dict:
        return False
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > depth:
            return True
        for x in (v.values() if type(v) is dict else v):
            if type(x) is list or type(x) is dict:
                stack.append((x, d + 1))
    return False


def loads(data: str | bytes, caps: DataCaps = DEFAULT_DATA_CAPS, what: str = "") -> Any:
    """The JSON value of `data` with its nesting at most ``caps.depth``; otherwise a
    `DataError` saying why (``not valid JSON: ...``, ``JSON nested too deeply ...``),
    after ``what: `` when `what` is given."""
    at = f"{what}: " if what else ""
    if len(data) > caps.doc_bytes:
        raise DataError(f"{at}{_mb(len(data))} of JSON, over the cap of {_mb(caps.doc_bytes)} (doc_bytes)")
    try:
        value = json.loads(data)
    except RecursionError:
        raise DataError(f"{at}JSON nested too deeply (more than {caps.depth} levels)") from None
    except ValueError as e:   # JSONDecodeError, UnicodeDecodeError, int digits over the limit
        raise DataError(f"{at}not valid JSON: {str(e)[:200]}") from None
    if isinstance(data, str):
        opens = data.count("[") + data.count("{")
        escapes = _SURROGATE_TEXT.search(data) is not None
    else:
        opens = data.count(b"[") + data.count(b"{")
        escapes = _SURROGATE.search(data) is not None
    if opens > caps.depth and too_deep(value, caps.depth):
        raise DataError(f"{at}JSON nested too deeply (more than {caps.depth} levels)")
    if escapes and not _unicode(value):
        raise DataError(f"{at}a string holds a lone surrogate (\\ud800-\\udfff): not Unicode text")
    return value


#: a JSON escape of a UTF-16 surrogate (a pair becomes one character; a lone one stays)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")


def _unicode(value: Any) -> bool:
    """Whether every string in `value` (keys too) is Unicode text (no lone surrogate)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is str:
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif type(v) is list:
            stack.extend(v)
        elif type(v) is dict:
            stack.extend(v)
            stack.extend(v.values())
    return True


def json_lines(path: str | os.PathLike, caps: DataCaps = DEFAULT_DATA_CAPS,
               error: type[Exception] | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, value) of every non-blank line of the JSON-lines file `path` (gzip or
    not). A line that is not JSON, too deep or too long comes as (number, `DataError`
    saying why) and the lines after it are still read -- or, with `error`, raises
    ``error("path:line: why")``. `DataError` raised: the file itself (not a regular
    file, a decompression cap, more than ``caps.records`` lines)."""
    where = os.fspath(path)
    count = 0
    for n, line in split_lines(chunks(path, caps), caps.doc_bytes):
        if line is not None:
            if n == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
            if not line.strip():
                continue
        count += 1
        if count > caps.records:
            raise DataError(f"{where}: more than {caps.records:,} records (records)")
        try:
            if line is None:
                raise DataError(f"a line longer than {_mb(caps.doc_bytes)} (doc_bytes)")
            value = loads(line, caps)
        except DataError as e:
            if error is not None:
                raise error(f"{where}:{n}: {e}") from None
            value = e
        yield n, value


def read_json(path: str | os.PathLike, caps: DataCaps = DEFAULT_DATA_CAPS) -> Any:
    """The JSON document of the file `path` (gzip or not), at most ``caps.doc_bytes``."""
    where = os.fspath(path)
    parts, n = [], 0
    for piece in chunks(path, caps):
        n += len(piece)
        if n > caps.doc_bytes:
            raise DataError(f"{where}: more than {_mb(caps.doc_bytes)} of JSON (doc_bytes)")
        parts.append(piece)
    data = b"".join(parts)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return loads(data, caps, where)


def inflate(data: bytes, caps: DataCaps = DEFAULT_DATA_CAPS, what: str = "field") -> bytes:
    """`data` (zlib or gzip) decompressed within ``caps.field_bytes`` and the ratio."""
    inf = _Inflater(what, caps.field_bytes, caps, "field_bytes", False)
    out = b"".join(inf.feed(data))
    inf.finish()
    return out
