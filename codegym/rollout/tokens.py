"""Exact character <-> token mapping for sampled response ids.

Diff units carry character spans into a step's response text; trainers need them as
token ranges of the ids that were *sampled* (re-tokenising is the classic multi-turn
bug). `token_byte_offsets` / `token_char_offsets` give each sampled token's offsets
(incrementally for byte-level BPE tokenizers, else by decoding prefixes; every result
is checked against a full decode, `TokenTextMismatch` says where it differs) and
`span_to_token_range` the tokens overlapping a character span. ``decode`` may be a
``tokenizers.Tokenizer``, a ``transformers`` tokenizer or any callable ``ids -> str``.
docs/rollout.md describes the two methods.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

REPLACEMENT = "\ufffd"


class TokenTextMismatch(ValueError):
    """The decoded response ids do not reproduce the response text."""


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character table used by byte-level BPE."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(
        range(ord("®"), ord("ÿ") + 1)
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


@lru_cache(maxsize=1)
def _unicode_to_bytes() -> dict[str, int]:
    return {c: b for b, c in bytes_to_unicode().items()}


# --------------------------------------------------------------------------- decoding
def _full_decode(decode: Any, ids: list[int], skip_special_tokens: bool) -> str:
    """Decode ids with special tokens skipped as requested and no clean-up of spaces."""
    if _is_hf(decode):
        return decode.decode(ids, skip_special_tokens=skip_special_tokens, clean_up_tokenization_spaces=False)
    if _is_tokenizers(decode):
        return decode.decode(ids, skip_special_tokens=skip_special_tokens)
    if callable(decode):
        return decode(ids)
    raise TypeError("decode must be a tokenizers.Tokenizer, a transformers tokenizer or a callable, "
                    f"got {type(decode)!r}")


def _is_tokenizers(obj: Any) -> bool:
    return type(obj).__module__.startswith("tokenizers") and hasattr(obj, "id_to_token")


def _is_hf(obj: Any) -> bool:
    return hasattr(obj, "convert_ids_to_tokens") and hasattr(obj, "decode")


def _backend(decode: Any) -> Any | None:
    """The ``tokenizers.Tokenizer`` behind ``decode`` if there is one."""
    if _is_tokenizers(decode):
        return decode
    backend = getattr(decode, "backend_tokenizer", None)
    if backend is not None and _is_tokenizers(backend):
        return backend
    return None


def _byte_level_token_bytes(decode: Any, skip_special_tokens: bool) -> Callable[[int], bytes] | None:
    """Return ``id -> bytes`` for byte-level BPE tokenizers, or None when not byte-level."""
    table = _unicode_to_bytes()
    backend = _backend(decode)
    if backend is not None:
        if type(backend.decoder).__name__ != "ByteLevel":
            return None
        special = {i for i, t in backend.get_added_tokens_decoder().items() if t.special}
        id_to_token = backend.id_to_token
    elif _is_hf(decode) and isinstance(getattr(decode, "byte_decoder", None), dict):
        # Slow GPT-2-style tokenizers keep the table themselves.
        table = decode.byte_decoder
        special = set(getattr(decode, "all_special_ids", []) or [])

        def id_to_token(i: int) -> str | None:
            return decode.convert_ids_to_tokens(i)
    else:
        return None

    def token_bytes(i: int) -> bytes:
        if skip_special_tokens and i in special:
            return b""
        tok = id_to_token(i)
        if tok is None:
            return b""
        try:
            return bytes(table[c] for c in tok)
        except KeyError:
            # Same fallback as the ByteLevel decoder: a token with characters outside the
            # byte alphabet (an added token) decodes to its own UTF-8.
            return tok.encode("utf-8")

    return token_bytes


def char_index_of_bytes(data: bytes) -> tuple[str, list[int]]:
    """Decode ``data`` like ``errors="replace"`` and map each byte to its character index.

    Returns ``(text, owner)`` with ``len(owner) == len(data)``; ``owner[k]`` is the index in
    ``text`` of the character byte ``k`` belongs to (an invalid sequence is one U+FFFD).
    """
    out: list[str] = []
    owner: list[int] = []
    p = 0
    n_chars = 0
    while p < len(data):
        try:
            chunk = data[p:].decode("utf-8")
            bad: tuple[int, int] | None = None
        except UnicodeDecodeError as e:
            chunk = data[p : p + e.start].decode("utf-8")
            bad = (p + e.start, p + e.end)
        for ch in chunk:
            owner.extend([n_chars] * len(ch.encode("utf-8")))
            n_chars += 1
        out.append(chunk)
        if bad is None:
            break
        owner.extend([n_chars] * (bad[1] - bad[0]))
        n_chars += 1
        out.append(REPLACEMENT)
        p = bad[1]
    return "".join(out), owner


def _mismatch(expected: str, got: str, what: str) -> TokenTextMismatch:
    k = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
    return TokenTextMismatch(
        f"{what} differs from the response text at character {k}: "
        f"text has {expected[max(0, k - 20):k + 20]!r}, decode has {got[max(0, k - 20):k + 20]!r} "
        f"(len {len(expected)} vs {len(got)}). The ids must be the sampled response ids and the text "
        f"their decode (same skip_special_tokens, no space clean-up)."
    )


# --------------------------------------------------------------------------- offsets
def _incremental_byte_offsets(
    ids: list[int], token_bytes: Callable[[int], bytes]
) -> tuple[list[tuple[int, int]], bytes]:
    offsets: list[tuple[int, int]] = []
    parts: list[bytes] = []
    pos = 0
    for i in ids:
        b = token_bytes(int(i))
        offsets.append((pos, pos + len(b)))
        parts.append(b)
        pos += len(b)
    return offsets, b"".join(parts)


def _prefix_char_offsets(ids: list[int], decode: Any, full: str, skip_special_tokens: bool) -> list[tuple[int, int]]:
    """Character offsets from decodes of every prefix (any prefix-stable tokenizer)."""
    offsets: list[tuple[int, int]] = []
    prev_raw = ""
    prev_done = 0  # characters fully decoded before this token (= index of a pending partial char)
    for k in range(1, len(ids) + 1):
        raw = _full_decode(decode, ids[:k], skip_special_tokens)
        s = raw
        partial = False
        if s.endswith(REPLACEMENT) and full[: len(s)] != s:
            # Incomplete trailing UTF-8 sequence: the valid part is what precedes it.
            s = s.rstrip(REPLACEMENT)
            partial = True
        if full[: len(s)] != s:
            raise _mismatch(full[: len(s)], s, f"decode of the first {k} ids (prefix-unstable tokenizer?)")
        done = len(s)
        if raw == prev_raw and _full_decode(decode, ids[k - 1 : k], skip_special_tokens) == "":
            # Decodes to nothing (a skipped special token): zero width where it sits.
            offsets.append((prev_done, prev_done))
        else:
            # Starts at the pending partial character if any (prev_done indexes it), ends
            # after the character its last byte belongs to.
            offsets.append((prev_done, done + (1 if partial else 0)))
        prev_raw, prev_done = raw, done
    return offsets


def _bytes_to_char_offsets(byte_offsets: list[tuple[int, int]], owner: list[int],
                           n_chars: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    n = len(owner)
    for b0, b1 in byte_offsets:
        if b1 > b0:
            out.append((owner[b0], owner[b1 - 1] + 1))
        else:
            c = owner[b0] if b0 < n else n_chars
            out.append((c, c))
    return out


def token_byte_offsets(response_ids: Sequence[int], decode: Any, text: str | None = None, *,
                       skip_special_tokens: bool = True) -> list[tuple[int, int]]:
    """Cumulative decoded byte offsets of each token (byte-level tokenizers only).

    Raises ``ValueError`` when ``decode`` is not a byte-level BPE tokenizer, and
    :class:`TokenTextMismatch` when the bytes do not reproduce ``text``/the full decode.
    """
    ids = [int(i) for i in response_ids]
    tb = _byte_level_token_bytes(decode, skip_special_tokens)
    if tb is None:
        raise ValueError("token_byte_offsets needs a byte-level BPE tokenizer")
    offsets, data = _incremental_byte_offsets(ids, tb)
    full = _full_decode(decode, ids, skip_special_tokens)
    got = data.decode("utf-8", errors="replace")
    if got != full:
        raise _mismatch(full, got, "concatenated token bytes")
    if text is not None and text != full:
        raise _mismatch(text, full, "full decode of the response ids")
    return offsets


def token_char_offsets(
    response_ids: Sequence[int],
    decode: Any,
    text: str | None = None,
    *,
    skip_special_tokens: bool = True,
    method: str = "auto",
) -> list[tuple[int, int]]:
    """Character offsets ``[(start, end), ...]`` into ``text`` of each sampled token.

    Args:
        response_ids: the sampled ids (never re-tokenised text).
        decode: ``tokenizers.Tokenizer``, transformers tokenizer, or callable ``ids -> str``.
        text: the response text; checked against the full decode (``TokenTextMismatch``).
            ``None`` means "the full decode".
        skip_special_tokens: as used when the text was decoded (servers skip them).
        method: ``"auto"``, ``"incremental"`` (byte-level BPE, O(n)) or ``"prefix"``.
    """
    if method not in ("auto", "incremental", "prefix"):
        raise ValueError(f"method must be auto|incremental|prefix, got {method!r}")
    ids = [int(i) for i in response_ids]
    full = _full_decode(decode, ids, skip_special_tokens)
    if text is not None and text != full:
        raise _mismatch(text, full, "full decode of the response ids")
    if not ids:
        return []
    if method in ("auto", "incremental"):
        tb = _byte_level_token_bytes(decode, skip_special_tokens)
        if tb is None:
            if method == "incremental":
                raise ValueError("method='incremental' needs a byte-level BPE tokenizer")
        else:
            byte_offsets, data = _incremental_byte_offsets(ids, tb)
            decoded, owner = char_index_of_bytes(data)
            if decoded == full:
                return _bytes_to_char_offsets(byte_offsets, owner, len(decoded))
            if method == "incremental":
                raise _mismatch(full, decoded, "concatenated token bytes")
            # else: the tokenizer's decode does something more than byte-level; use prefixes.
    return _prefix_char_offsets(ids, decode, full, skip_special_tokens)


def span_to_token_range(offsets: Sequence[tuple[int, int]], span: tuple[int, int]) -> tuple[int, int]:
    """Token index range ``[i, j)`` of the tokens overlapping the character span ``[start, end)``.

    A token overlaps when ``tok_start < end and tok_end > start``. Offsets are
    non-decreasing (neighbours may share a split multibyte character). A span no token
    overlaps gives an empty range ``(i, i)`` at the insertion point; an empty span
    ``(c, c)`` gives ``(k, k)``, ``k`` the first token starting at or after ``c``.
    """
    start, end = int(span[0]), int(span[1])
    if end < start:
        raise ValueError(f"span end {end} < start {start}")
    ends = [e for _, e in offsets]
    starts = [s for s, _ in offsets]
    if start == end:
        k = bisect.bisect_left(starts, start)  # first token starting at or after it
        return k, k
    i = bisect.bisect_right(ends, start)  # first token with tok_end > start
    j = bisect.bisect_left(starts, end)  # first token with tok_start >= end
    return i, j
