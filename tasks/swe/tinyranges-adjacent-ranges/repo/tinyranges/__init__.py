"""Half-open integer ranges and normalised sets of ranges."""

from tinyranges.range import Range
from tinyranges.rangeset import RangeSet

__all__ = ["Range", "RangeSet"]
__version__ = "0.3.1"
