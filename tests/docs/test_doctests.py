"""The ``>>>`` examples in codegym's docstrings run as written, from any working directory:
every module that holds one is collected here (one test per module), imported by name and
its examples run with a scratch directory as the working directory.

(``pytest --doctest-modules codegym`` would also import the judge's driver programs, which
are real scripts that read their stdin when imported; hence this explicit list.)
"""

from __future__ import annotations

import doctest
import importlib
import io
import re
from pathlib import Path

import pytest
from _tools import docker_or_skip

import codegym

PACKAGE = Path(codegym.__file__).resolve().parent
#: module -> what its examples need beyond this machine's sandbox
EXAMPLE = re.compile(r"^\s*>>> ", re.M)
NEEDS = {"codegym.sandbox.docker": "docker", "codegym.sandbox.ray": "ray", "codegym.rollout.ray_collect": "ray"}


def modules_with_examples() -> list[str]:
    out = []
    for p in sorted(PACKAGE.rglob("*.py")):
        if EXAMPLE.search(p.read_text(encoding="utf-8")):
            rel = p.relative_to(PACKAGE.parent).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out.append(".".join(parts))
    return out


MODULES = modules_with_examples()


def test_the_examples_are_all_collected():
    assert len(MODULES) >= 26, MODULES


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", MODULES)
def test_module_examples_run(name, tmp_path, monkeypatch):
    need = NEEDS.get(name)
    if need == "docker":
        docker_or_skip()
    elif need == "ray":
        pytest.importorskip("ray", reason="ray is not installed (pip install 'codegym[ray]')")
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(name)
    tests = [t for t in doctest.DocTestFinder(exclude_empty=True).find(module, name) if t.examples]
    assert tests, f"{name} holds '>>> ' but no example doctest finds"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    for t in tests:
        runner.run(t, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, \
        f"{name}: {result.failed} of {result.attempted} examples failed\n{out.getvalue()[-4000:]}"
