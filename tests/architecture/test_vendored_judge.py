"""The judge an exported Harbor task carries imports under a bare Python.

`codegym.importers.harbor_vendor` copies the judge's stdlib-only modules into every
exported task (docs/harbor.md, "How codegym's judge gets into the container"); a module
of theirs that starts importing another codegym module (a name moved, an annotation's
type) breaks every exported task's verifier, which only the docker tests of
tests/importers/test_harbor.py would show. Here: vendor it, and import the verifier and
the judge's kinds with ``python -E -s`` and nothing but the vendored package.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

from codegym.importers import harbor_verifier
from codegym.importers.harbor_vendor import vendor_judge


def test_the_vendored_judge_imports_with_the_standard_library_only(tmp_path):
    vendor_judge(tmp_path, ["python", "cpp"])
    shutil.copy(harbor_verifier.__file__, tmp_path / "codegym_verify.py")
    code = ("import codegym_verify, codegym.judge.kinds.stdio, codegym.judge.kinds.function, "
            "codegym.judge.kinds.script, codegym.judge.kinds.table, codegym.judge.run, codegym.judge.checkers; "
            "print('ok')")
    p = subprocess.run([sys.executable, "-E", "-s", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-2000:]
