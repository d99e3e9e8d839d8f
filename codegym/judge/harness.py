"""The trusted programs the judge runs in the sandbox, read from ``drivers/*.py``.

- `FUNCTION_DRIVER` (function tasks): calls the entry point once per case, one frame per case;
- `SCRIPT_DRIVER` (Python script tasks): ``drivers/script_driver.py`` with
  ``drivers/script_trusted.py`` inlined as a string (it runs that code under audit hooks);
- `COMMAND_RUNNER` (repo tasks): runs a test command, returns its output and report files.

The files are real Python programs (stdlib only, run as ``main.py``), read once at import,
byte for byte: a build's key is its source. The host side of their protocols is
`codegym.judge.protocol`; what they defend against is in docs/judge.md.
"""

from __future__ import annotations

from importlib import resources

#: bump when a driver's protocol or what it reports changes (part of build keys via the source
#: itself; reports name it in their checker tag, so a replay sees the change). 2: the command
#: runner's protocol of repository tasks (run setup once, junit and official SWE-bench logs)
HARNESS_VERSION = 2


def driver_source(name: str) -> str:
    """The text of ``drivers/<name>`` (exact bytes, decoded)."""
    return (resources.files(__package__) / "drivers" / name).read_bytes().decode("utf-8")


FUNCTION_DRIVER = driver_source("function_driver.py")
# script_driver.py holds the string "__TRUSTED__" where the trusted code goes, as a literal
SCRIPT_DRIVER = driver_source("script_driver.py").replace(
    '"__TRUSTED__"', repr(driver_source("script_trusted.py")))
COMMAND_RUNNER = driver_source("command_runner.py")

