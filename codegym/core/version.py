"""The codegym version (the package's ``__version__``; layers read it here, not from the facade)."""

__version__ = "0.1.0"
