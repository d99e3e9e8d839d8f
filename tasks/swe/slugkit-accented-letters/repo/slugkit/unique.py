"""`UniqueSlugger`: slugs that never repeat within one instance."""

from __future__ import annotations

from slugkit.slug import slugify


class UniqueSlugger:
    """Call it with titles; equal slugs get ``-2``, ``-3`` ... suffixes."""

    def __init__(self, sep: str = "-", taken: set[str] | None = None):
        self.sep = sep
        self.taken = set(taken or ())

    def __call__(self, title: str) -> str:
        base = slugify(title, self.sep) or "item"
        slug, n = base, 1
        while slug in self.taken:
            n += 1
            slug = f"{base}{self.sep}{n}"
        self.taken.add(slug)
        return slug
