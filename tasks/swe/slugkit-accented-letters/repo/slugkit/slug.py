"""`slugify`: lower-case ASCII words joined by a separator."""

from __future__ import annotations

import re

from slugkit._charmap import CHARMAP

_NON_WORD = re.compile(r"[^a-z0-9]+")


def _transliterate(text: str) -> str:
    return "".join(CHARMAP.get(ch, ch) for ch in text)


def slugify(text: str, sep: str = "-", max_length: int | None = None) -> str:
    """``"Hello, World!"`` -> ``"hello-world"``.

    Letters are lower-cased and reduced to ASCII, everything else separates words.
    With `max_length`, whole words are dropped from the end until the slug fits
    (a single word longer than that is cut).
    """
    text = _transliterate(text.lower())
    words = [w for w in _NON_WORD.split(text) if w]
    slug = sep.join(words)
    if max_length is not None and len(slug) > max_length:
        while len(words) > 1 and len(sep.join(words)) > max_length:
            words.pop()
        slug = sep.join(words)[:max_length]
    return slug
