"""A small, strict INI reader with typed getters."""

from inikit.config import Config, Section
from inikit.parser import ParseError, load, loads

__all__ = ["Config", "Section", "ParseError", "load", "loads"]
