"""The README's two commands do the system set-up they promise (scripts/system.sh, the list
scripts/system-packages.txt): as root on Debian they say what they install and install only
what is missing; not root, they print the one command that would; on another system, its
package manager's command. apt-get, dpkg, id and docker are stand-ins here (nothing is
installed); the real run is scripts/check-fresh-machine.sh (docs/fresh-machine.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import codegym

REPO = Path(codegym.__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "system.sh"
BASH = shutil.which("bash")


def packages(what: str) -> list[str]:
    out = []
    for line in (REPO / "scripts" / "system-packages.txt").read_text(encoding="utf-8").splitlines():
        cols = line.split()
        if line.startswith("#") or len(cols) < 2:
            continue
        if what == "test" or cols[1] == "demo":
            out.append(cols[0])
    return out


def stub(folder: Path, name: str, body: str) -> None:
    p = folder / name
    p.write_text(f"#!{BASH}\n{body}\n")
    p.chmod(0o755)


def run(tmp_path: Path, what: str, *, uid: int, debian: bool, dnf: bool = False) -> tuple[str, list[str]]:
    """scripts/system.sh WHAT with stand-ins: `id -u` is `uid`; on "Debian" dpkg knows no
    package and apt-get records its arguments; elsewhere PATH holds only the basic tools."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    calls = tmp_path / "apt-calls"
    stub(bin_, "id", f"echo {uid}")
    stub(bin_, "docker", "exit 1")                        # no engine: never the real one
    if debian:
        stub(bin_, "dpkg", "exit 1")
        stub(bin_, "apt-get", f'echo "$*" >> {calls}')
        path = f"{bin_}{os.pathsep}{os.environ['PATH']}"
    else:
        for tool in ("awk", "grep", "sed", "dirname", "timeout", "cat"):
            os.symlink(shutil.which(tool), bin_ / tool)
        if dnf:
            stub(bin_, "dnf", "exit 0")
        path = str(bin_)
    r = subprocess.run([BASH, str(SCRIPT), what, "python3-absent"], capture_output=True, text=True,
                       env={"PATH": path, "HOME": str(tmp_path)}, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert all(line.startswith("codegym set-up: ") for line in lines), r.stdout
    return r.stdout, calls.read_text().splitlines() if calls.exists() else []


pytestmark = pytest.mark.skipif(BASH is None or shutil.which("awk") is None, reason="needs bash and awk")


@pytest.mark.parametrize("what", ["demo", "test"])
def test_it_says_what_the_command_needs_first(tmp_path, what):
    out, _ = run(tmp_path, what, uid=1000, debian=True)
    first = out.splitlines()[0]
    assert first.startswith(f"codegym set-up: make {what} needs the system packages {' '.join(packages(what))}")
    assert ("a Docker engine" in first) == (what == "test")
    assert "bubblewrap" in packages("demo") and {"valgrind", "nodejs"} <= set(packages("test"))


def test_as_root_on_debian_it_installs_what_is_missing_and_says_so(tmp_path):
    out, calls = run(tmp_path, "demo", uid=0, debian=True)
    want = packages("demo")
    assert f"codegym set-up: installing with apt-get: {' '.join(want)}" in out
    assert calls and calls[-1] == "install -y -q --no-install-recommends " + " ".join(want)
    assert out.splitlines()[-1] == "codegym set-up: done"


@pytest.mark.parametrize("what", ["demo", "test"])
def test_not_root_it_prints_the_one_command_and_installs_nothing(tmp_path, what):
    out, calls = run(tmp_path, what, uid=1000, debian=True)
    assert not calls
    assert f"codegym set-up: to install them, run once:  sudo scripts/system.sh {what}" in out
    assert "the sandbox refuses to run programs" in out
    if what == "test":
        assert "missing: a running Docker engine" in out


def test_elsewhere_it_prints_the_package_managers_command(tmp_path):
    out, _ = run(tmp_path, "demo", uid=0, debian=False, dnf=True)
    line = next(x for x in out.splitlines() if "not Debian/Ubuntu" in x)
    cmd = line.split("run once:  ", 1)[1]
    assert cmd.startswith("sudo dnf install -y bubblewrap gcc gcc-c++ make git"), cmd
    assert "python3-venv" not in cmd and not re.search(r" g\+\+", cmd)


def test_elsewhere_without_a_known_package_manager_it_names_the_packages(tmp_path):
    out, _ = run(tmp_path, "demo", uid=0, debian=False)
    assert ("not Debian/Ubuntu: install them with the system's package manager "
            "(the Debian names: bubblewrap gcc g++") in out


def test_the_makefile_runs_the_set_up_before_the_install():
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo: system install$", text, re.M) and re.search(r"^test: system-test install$", text, re.M)
    assert "scripts/system.sh demo" in text and "scripts/system.sh test" in text
    assert "make test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_names_what_each_command_installs_and_stays_short():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 12 * 1024, "README.md is over 12 KB: move detail into docs/"
    rows = {m[1]: m[2] for m in re.finditer(r"^\| `make (demo|test)` \| (.+) \|$", text, re.M)}
    assert set(rows) == {"demo", "test"}
    for name in packages("demo"):
        assert name in rows["demo"], f"README's make demo row does not name {name}"
    for name in set(packages("test")) - set(packages("demo")):
        assert name in rows["test"], f"README's make test row does not name {name}"
    assert "Docker engine" in rows["test"]
