"""Tests for codegym.rollout.tokens: char/byte offsets of sampled token ids."""

from __future__ import annotations

import random

import pytest

from codegym.rollout.tokens import (
    TokenTextMismatch,
    bytes_to_unicode,
    char_index_of_bytes,
    span_to_token_range,
    token_byte_offsets,
    token_char_offsets,
)

tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers library is needed for these tests")

from _tokenizer import code_tokenizer  # noqa: E402  (tests/ is on sys.path under pytest)

B2U = bytes_to_unicode()


def _hand_tokenizer():
    """Byte-level BPE with a hand-written vocabulary: every byte + a few merges.

    Ids: 0 <|eos|> (special), then the 256 byte characters, then the merged tokens below,
    so the tests can spell the sampled ids by hand and the expected offsets are exact.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocab = {"<|eos|>": 0}
    for b in range(256):
        vocab[B2U[b]] = len(vocab)
    merged = ["Ġð", "ĠðŁ", "ļĢ", "ĠĠ", "ĠĠĠĠ", "re", "ret", "retu", "retur", "return", "Ġx"]
    merges = [("Ġ", "ð"), ("Ġð", "Ł"), ("ļ", "Ģ"), ("Ġ", "Ġ"), ("ĠĠ", "ĠĠ"), ("r", "e"),
              ("re", "t"), ("ret", "u"), ("retu", "r"), ("retur", "n"), ("Ġ", "x")]
    for t in merged:
        vocab[t] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|eos|>", special=True)])
    return tok


def _ids(tok, *tokens: str) -> list[int]:
    out = [tok.token_to_id(t) for t in tokens]
    assert None not in out, tokens
    return out


def test_hand_case_emoji_split_and_leading_space():
    tok = _hand_tokenizer()
    # "x 🚀" ; 🚀 = F0 9F 9A 80 -> byte chars ð Ł ļ Ģ ; the space is Ġ.
    text = "x \U0001F680"
    ids = _ids(tok, "x", "ĠðŁ", "ļĢ", "<|eos|>")
    # bytes: x=[0,1) ; " "+F0 9F=[1,4) ; 9A 80=[4,6) ; eos skipped -> [6,6)
    assert token_byte_offsets(ids, tok, text) == [(0, 1), (1, 4), (4, 6), (6, 6)]
    # chars: x=0, space=1, rocket=2 (bytes 2..5). Token 2 holds the space and half the
    # rocket -> chars [1,3); token 3 the other half -> [2,3); eos -> empty at the end.
    expected = [(0, 1), (1, 3), (2, 3), (3, 3)]
    assert token_char_offsets(ids, tok, text) == expected
    assert token_char_offsets(ids, tok, text, method="prefix") == expected
    assert token_char_offsets(ids, lambda i: tok.decode(i), text) == expected
    # Span of the rocket (2,3) overlaps tokens 1 and 2; the space (1,2) only token 1.
    assert span_to_token_range(expected, (2, 3)) == (1, 3)
    assert span_to_token_range(expected, (1, 2)) == (1, 2)
    assert span_to_token_range(expected, (0, 3)) == (0, 3)
    assert span_to_token_range(expected, (3, 3)) == (3, 3)


def test_hand_case_single_byte_tokens_of_cjk_and_indentation():
    tok = _hand_tokenizer()
    text = "\n    return 你"  # 你 = E4 BD A0 -> ä ½ ł
    ids = _ids(tok, "Ċ", "ĠĠĠĠ", "return", "Ġ", "ä", "½", "ł")
    expected = [(0, 1), (1, 5), (5, 11), (11, 12), (12, 13), (12, 13), (12, 13)]
    for method in ("auto", "incremental", "prefix"):
        assert token_char_offsets(ids, tok, text, method=method) == expected
    # "return" is chars [5,11): exactly token 2; a span inside the indentation hits token 1.
    assert span_to_token_range(expected, (5, 11)) == (2, 3)
    assert span_to_token_range(expected, (2, 3)) == (1, 2)
    assert span_to_token_range(expected, (12, 13)) == (4, 7)


def test_special_tokens_kept_when_not_skipped():
    tok = _hand_tokenizer()
    ids = _ids(tok, "x", "<|eos|>")
    assert token_char_offsets(ids, tok, "x<|eos|>", skip_special_tokens=False) == [(0, 1), (1, 8)]
    assert token_char_offsets(ids, tok, "x", skip_special_tokens=True) == [(0, 1), (1, 1)]


def test_mismatch_raises_clear_error():
    tok = _hand_tokenizer()
    ids = _ids(tok, "x", "Ġx")
    with pytest.raises(TokenTextMismatch, match="character 2"):
        token_char_offsets(ids, tok, "x y")
    with pytest.raises(TokenTextMismatch):
        token_char_offsets(ids, tok, "x x ")


def test_char_index_of_bytes_invalid_sequences_match_replace():
    data = "a你".encode() + b"\xff\xfe" + b"b" + "🚀".encode()[:2]
    text, owner = char_index_of_bytes(data)
    assert text == data.decode("utf-8", errors="replace")
    assert len(owner) == len(data)
    # a=0, 你 (3 bytes)=1, \xff=2, \xfe=3, b=4, truncated rocket (2 bytes)=5
    assert owner == [0, 1, 1, 1, 2, 3, 4, 5, 5]


def _random_code(rng: random.Random) -> str:
    pieces = ["def ", "return ", "    ", "\n", "\t", "x", "y_1", " = ", "(", ")", ":", "#", " ",
              "🚀", "😀", "你好", "世界", "é", "ß", "Ω", "≤", "→", "\u200b", "𝔘", "if ", "'s'", "\"\"\""]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))


def _check_minimal_cover(text: str, byte_off, char_off):
    """Each token's char span is the smallest run of characters containing its bytes."""
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + len(ch.encode("utf-8")))
    for (b0, b1), (c0, c1) in zip(byte_off, char_off):
        if b1 == b0:
            assert c0 == c1
            continue
        assert starts[c0] <= b0 < starts[c0 + 1]
        assert starts[c1 - 1] < b1 <= starts[c1]


def test_random_code_strings_against_full_decode():
    tok = code_tokenizer()
    rng = random.Random(1234)
    for _ in range(60):
        text = _random_code(rng)
        ids = tok.encode(text).ids
        assert tok.decode(ids) == text
        inc = token_char_offsets(ids, tok, text, method="incremental")
        pre = token_char_offsets(ids, tok, text, method="prefix")
        assert inc == pre
        byte_off = token_byte_offsets(ids, tok, text)
        _check_minimal_cover(text, byte_off, inc)
        # Coverage: every character is covered by some token, offsets non-decreasing.
        covered = set()
        for c0, c1 in inc:
            covered.update(range(c0, c1))
        assert covered == set(range(len(text)))
        assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(inc, inc[1:]))


def test_tokens_split_multibyte_chars_in_trained_tokenizer():
    tok = code_tokenizer()
    text = "x = '🚀你好'  # 😀 ok"
    # Sample ids as single bytes for the emoji so that splits certainly happen, as a
    # model sampling byte tokens would.
    ids = tok.encode("x = '").ids + [tok.token_to_id(B2U[b]) for b in "🚀".encode()] + tok.encode("你好'  # 😀 ok").ids
    offs = token_char_offsets(ids, tok, text)
    k = len(tok.encode("x = '").ids)
    assert offs[k : k + 4] == [(5, 6)] * 4
    assert token_char_offsets(ids, tok, text, method="prefix") == offs


def test_hf_wrapper_and_callable_agree():
    tok = code_tokenizer()
    text = "for i in range(3):\n    print('✓', i)  # 中文 🚀"
    ids = tok.encode(text).ids
    ref = token_char_offsets(ids, tok, text)
    try:
        from _tokenizer import hf_code_tokenizer

        hf = hf_code_tokenizer()
    except ImportError as exc:  # pragma: no cover
        pytest.skip(f"transformers not importable: {exc}")
    assert token_char_offsets(ids, hf, text) == ref
    assert token_char_offsets(ids, lambda i: hf.decode(i), text) == ref
    assert token_char_offsets([hf.bos_token_id] + ids + [hf.eos_token_id], hf, text) == [(0, 0)] + ref + [(len(text), len(text))]  # noqa: E501


def test_non_byte_level_callable_uses_prefix_path():
    # A character-level "tokenizer": id = code point; decode joins characters.
    text = "a 你🚀"
    ids = [ord(c) for c in text]
    offs = token_char_offsets(ids, lambda xs: "".join(chr(i) for i in xs), text)
    assert offs == [(0, 1), (1, 2), (2, 3), (3, 4)]
    with pytest.raises(ValueError):
        token_char_offsets(ids, lambda xs: "".join(chr(i) for i in xs), text, method="incremental")


def test_prefix_unstable_decode_is_reported():
    # A decode that strips a trailing space is not prefix-stable: "a " then "a b".
    words = {1: "a", 2: " ", 3: "b"}

    def decode(xs):
        return "".join(words[i] for i in xs).rstrip(" ") if xs[-1:] == [2] else "".join(words[i] for i in xs)

    # Prefix decodes "a", "a", "a b": the space token adds nothing when decoded alone
    # (its own decode is empty) -> zero width; "b" then brings the space with it.
    assert token_char_offsets([1, 2, 3], decode, "a b") == [(0, 1), (1, 1), (1, 3)]

    def bad(xs):
        return "".join({1: "x", 2: "Y", 3: "z"}[i] for i in xs).lower() if len(xs) == 3 else "".join(
            {1: "x", 2: "Y", 3: "z"}[i] for i in xs
        )

    with pytest.raises(TokenTextMismatch, match="prefix-unstable"):
        token_char_offsets([1, 2, 3], bad, "xyz")


def test_span_to_token_range_edges():
    offs = [(0, 3), (3, 3), (3, 5), (5, 9)]
    assert span_to_token_range(offs, (0, 9)) == (0, 4)
    assert span_to_token_range(offs, (3, 5)) == (2, 3)
    assert span_to_token_range(offs, (4, 6)) == (2, 4)
    assert span_to_token_range(offs, (9, 12)) == (4, 4)
    assert span_to_token_range([], (0, 2)) == (0, 0)
    with pytest.raises(ValueError):
        span_to_token_range(offs, (5, 2))
