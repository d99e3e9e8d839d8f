"""URL slugs from arbitrary titles."""

from slugkit.slug import slugify
from slugkit.unique import UniqueSlugger

__all__ = ["slugify", "UniqueSlugger"]
