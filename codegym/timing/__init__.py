"""Calibrated timing: repeated measurements, their noise, and comparisons."""

from codegym.timing.measurement import *  # noqa: F403
from codegym.timing.measurement import __all__  # noqa: F401
