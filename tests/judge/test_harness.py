"""codegym.judge.harness: the driver programs are the files in codegym/judge/drivers/, as written."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from codegym.judge import harness

DRIVERS = Path(harness.__file__).with_name("drivers")


def test_drivers_are_the_files_byte_for_byte():
    assert harness.FUNCTION_DRIVER.encode() == (DRIVERS / "function_driver.py").read_bytes()
    assert harness.COMMAND_RUNNER.encode() == (DRIVERS / "command_runner.py").read_bytes()
    trusted = (DRIVERS / "script_trusted.py").read_text()
    assert "__TRUSTED__" not in harness.SCRIPT_DRIVER
    assert f"_TRUSTED_SOURCE = {trusted!r}\n" in harness.SCRIPT_DRIVER


def test_drivers_compile_and_use_the_standard_library_only():
    for src in (harness.FUNCTION_DRIVER, harness.SCRIPT_DRIVER, harness.COMMAND_RUNNER,
                (DRIVERS / "script_trusted.py").read_text()):
        tree = ast.parse(src)
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert all(n.split(".")[0] in sys.stdlib_module_names for n in names), names
