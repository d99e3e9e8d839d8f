"""Real Harbor task folders written by others (issue 29): each imports and gives 1 with its own
solution and 0 without, or is refused with a specific reason.

The folders come from public repositories that use Harbor's task format, listed with the
commit and licence in ``data/harbor_real/sources.json`` (README there). Their files are not
part of codegym: the test reads them from a local mirror of each repository
(``$CODEGYM_HARBOR_MIRRORS/<owner>+<name>/repo``, a git directory; default /work/.mirror)
and skips a repository with the reason when there is none. Each folder is imported alone
(``import_harbor``: the task is judged through the docker sandbox before it is kept, so an
imported task with a solution got reward 1 with it and not with the unchanged starter; one
without a solution is given the answer of `ANSWERS`, which must get 1); a refusal must be
one line with one of the specific reasons of `SPECIFIC`, and, on a machine like the one
``sources.json``'s ``expect`` was recorded on (no registry, the Python roots present), the
same one.

Which folders run:

- by default (``make test``) the sample `SAMPLE`: one folder per kind of outcome that needs
  no network -- imported with its own solution (no WORKDIR, a ``docker_image`` made from
  Debian), imported without one and answered (no WORKDIR: the home directory), and
  refusals in each phase (multi-step, another framework's ``task.toml``, an environment
  type, a compose setting, an Ubuntu and a Rust base, a build that needs the network,
  a solution that works outside the working directory). Under a minute once the stand-in
  bases exist (the first run makes them from the Python roots);
- ``CODEGYM_HARBOR_REAL=all``: every folder of ``sources.json`` without build network
  (10 min one at a time at load 30 on 2 cores);
- ``CODEGYM_HARBOR_REAL_NETWORK=host``: besides, the folders whose Dockerfile installs
  packages (``expect_network`` of ``sources.json``) imported with ``--build-network
  host``, the user's opt-in: apt from the Debian mirror, pip with the host's CA bundle
  (36 min one at a time at load 16-40; skipped when PyPI and Debian's mirror do not answer).

    python3 tests/importers/test_harbor_real.py [--build-network host]   # the table
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCES = json.loads((HERE / "data" / "harbor_real" / "sources.json").read_text())
MIRRORS = Path(os.environ.get("CODEGYM_HARBOR_MIRRORS", "/work/.mirror"))
FULL = os.environ.get("CODEGYM_HARBOR_REAL", "").lower() == "all"
NETWORK = os.environ.get("CODEGYM_HARBOR_REAL_NETWORK", "").lower()
#: the reasons a real folder may be refused for (each names what codegym cannot do, or what is wrong)
SPECIFIC = (r"is not available locally; .*(no registry answers|pulling is off|Ubuntu's images cannot be made|"
            r"no local stand-in)", r"a multi-step task \(\[\[steps\]\]: \d+ steps\)", r"multi-container environments",
            r"neither environment/Dockerfile nor \[environment\]\.docker_image", r"not Harbor's task format",
            r"environment\.type = .*: codegym runs Docker environments only", r"no tests/test\.sh",
            r"docker build failed", r"stopped after \d+ s", r"with its own solution the task gets \w+, not reward 1",
            r"the unchanged starting files already get reward 1", r"has no common directory outside the system's",
            r"is a system directory or holds one",
            r"has no python3", r"not a finite number", r"out of range",
            r"a FIFO|a device|a socket|a hard link|resolves outside",
            r"solution/solve\.sh changes no text file of the working directory", r"services\.main\.\w+: not supported")
#: what an agent would write for the real tasks that ship no solution (the test's own answers)
ANSWERS = {
    ("mpsuesser/effect-autoagent", "tasks/hello-world"): {"hello.txt": "Hello, World!"},
    ("mpsuesser/effect-autoagent", "tasks/count-files"): {f"output/{c}.txt": f"{c}\n" for c in "abc"},
    ("mpsuesser/effect-autoagent", "tasks/simple-script"): {"sum.py": "print(sum(range(1, 101)))\n",
                                                          "result.txt": "5050\n"},
}
#: one folder per kind of outcome, none needing the network (module docstring)
SAMPLE = {
    ("meridianlabs-ai/inspect_harbor", "tests/fixtures/simple_task"),
    ("mpsuesser/effect-autoagent", "tasks/hello-world"),
    ("xueshenye/benchmark", "tasks/benchmark/multi-round-cli-demo-multistep"),
    ("albert-lv/OpenAgora", "examples/tasks/hello-world"),
    ("XuanmiaoG/InfraBench", "tasks/vm-ceph-bootstrap"),
    ("perice-pope/expert-contributor-ai", "snorkel-ai/mysql-lvm-backup-pipeline"),
    ("Kaggle/kaggle-benchmark-starter-template", "tasks/hello-world"),
    ("perice-pope/expert-contributor-ai", "snorkel-ai/fix-rust-tls-dependency-conflict"),
    ("perice-pope/expert-contributor-ai", "harbor_test_tasks/extract-png-flags-lsb"),
    ("perice-pope/expert-contributor-ai", "harbor_test_tasks/pgp-recovery"),
}


def _mirror(repo: str) -> Path | None:
    g = MIRRORS / repo.replace("/", "+") / "repo"
    return g if (g / "HEAD").exists() or (g / ".git").exists() else None


def _extract(git: Path, commit: str, path: str, dest: Path) -> Path:
    # the mirror is a stranger's repository: git with its configuration neutralised (codegym.core.git)
    from codegym.core.git import git as run_git  # noqa: PLC0415 -- also run as a script
    tar = run_git(["archive", commit, "--", path], cwd=git, timeout=300).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True, timeout=300)
    return dest / path


def outcome(repo: str, commit: str, path: str, work: Path, network: str | bool = False) -> tuple[str, str]:
    """("imported" | "refused", the notes or the reason) of one real folder, imported into
    ``work/out`` (with `network` as ``--build-network``)."""
    from codegym.importers.harbor_import import import_harbor  # noqa: PLC0415 -- also run as a script
    git = _mirror(repo)
    src = work / "src"
    src.mkdir(parents=True, exist_ok=True)
    folder = _extract(git, commit, path, src)
    res = import_harbor(folder, work / "out", suite="real", build_network=network)
    if res.imported:
        return "imported", "; ".join(n for notes in res.notes.values() for n in notes)
    (_, why), = res.failed
    return "refused", why.replace(str(src) + "/", "")


def _cases(key: str, wanted) -> list:
    return [(r["repo"], r["commit"], t) for r in SOURCES for t in (r["tasks"] if key == "tasks" else r.get(key) or {})
            if wanted(r["repo"], t)]


CASES = _cases("tasks", lambda repo, t: FULL or (repo, t) in SAMPLE)
EXPECT = {(r["repo"], t): e for r in SOURCES for t, e in (r.get("expect") or {}).items()}
EXPECT_NETWORK = {(r["repo"], t): e for r in SOURCES for t, e in (r.get("expect_network") or {}).items()}
NETWORK_CASES = _cases("expect_network", lambda repo, t: True) if NETWORK else [
    pytest.param(None, None, None, id="opt-in", marks=pytest.mark.skip(
        reason="CODEGYM_HARBOR_REAL_NETWORK=host imports the folders that install packages while building, "
               "with --build-network host"))]


def _ready(repo: str) -> None:
    if _mirror(repo) is None:
        pytest.skip(f"no local mirror of {repo} under {MIRRORS} (fetch github:{repo}; "
                    "CODEGYM_HARBOR_MIRRORS names another folder)")
    from _harbor_tasks import docker_ready  # noqa: PLC0415
    if not docker_ready():
        pytest.skip("no docker engine with codegym/python:3.11")


def _check(repo: str, path: str, kind: str, text: str, work: Path) -> None:
    """An import was verified (and its answer, if the test has one, gets 1); a refusal is one
    specific line."""
    if kind == "refused":
        assert "\n" not in text and any(re.search(p, text) for p in SPECIFIC), text
        return
    assert "verified:" in text, text
    if "no reference" not in text:
        assert "the reference gets reward 1, the unchanged starting files" in text
        return
    answer = ANSWERS.get((repo, path))
    if answer is None:
        return
    from codegym import load_suite  # noqa: PLC0415
    from codegym.judge import judge  # noqa: PLC0415
    from codegym.sandbox import make_sandbox  # noqa: PLC0415
    task = next(iter(load_suite(work / "out")))
    sb = make_sandbox("docker", workers=1)
    try:
        assert judge(task, {**task.starter_files(), **answer}, sandbox=sb, split="hidden").verdict == "accepted"
    finally:
        sb.close()


@pytest.mark.docker
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("repo,commit,path", CASES, ids=[f"{r}:{p}" for r, _, p in CASES])
def test_a_real_folder_imports_and_solves_or_is_refused_for_a_specific_reason(repo, commit, path, tmp_path):
    _ready(repo)
    kind, text = outcome(repo, commit, path, tmp_path)
    _check(repo, path, kind, text, tmp_path)
    want = EXPECT.get((repo, path))
    if want is not None and _as_recorded():
        assert want in (text if kind == "refused" else "imported"), (want, kind, text)


@pytest.mark.docker
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("repo,commit,path", NETWORK_CASES,
                         ids=[f"{c[0]}:{c[2]}" for c in NETWORK_CASES if isinstance(c, tuple)] or None)
def test_a_real_folder_built_with_the_users_network_imports_or_is_refused_for_its_own_reason(repo, commit, path,
                                                                                              tmp_path):
    """The folders that install packages while building, with ``--build-network host``:
    the build gets apt from the mirror the stand-in's root names and pip the host's CA bundle."""
    _ready(repo)
    if not _network_answers():
        pytest.skip("PyPI or Debian's mirror does not answer from this host")
    kind, text = outcome(repo, commit, path, tmp_path, network=NETWORK)
    _check(repo, path, kind, text, tmp_path)
    want = EXPECT_NETWORK.get((repo, path))
    if want is not None and _as_recorded():
        assert want in (text if kind == "refused" else "imported"), (want, kind, text)


def _network_answers() -> bool:
    import ssl  # noqa: PLC0415
    import urllib.request  # noqa: PLC0415

    from codegym.sandbox.hostnet import host_ca_bundle  # noqa: PLC0415
    from codegym.sandbox.roots import RootError, debian_sources  # noqa: PLC0415
    try:
        debian_sources("bookworm")
        ctx = ssl.create_default_context(cafile=host_ca_bundle())
        with urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=15, context=ctx) as r:
            return r.status == 200
    except (OSError, RootError):
        return False


def _as_recorded() -> bool:
    """Whether this machine is like the one `expect` was recorded on: no registry answers and
    the Python roots (stand-ins) are here."""
    from codegym.sandbox.images import registry_reachable  # noqa: PLC0415
    from codegym.sandbox.roots import find_root  # noqa: PLC0415
    return not registry_reachable() and all(find_root(v) is not None for v in ("3.9", "3.11", "3.13"))


def main(argv: list[str]) -> int:
    network = argv[argv.index("--build-network") + 1] if "--build-network" in argv else False
    cases = _cases("expect_network" if network else "tasks", lambda repo, t: True)
    print("| repository | task | imported? | solution 1 / no solution 0 | refused: why |")
    print("|---|---|---|---|---|")
    for repo, commit, path in cases:
        if _mirror(repo) is None:
            print(f"| {repo} | {path} | (no mirror) | | |")
            continue
        with tempfile.TemporaryDirectory(prefix="codegym-harbor-real-") as tmp:
            kind, text = outcome(repo, commit, path, Path(tmp), network=network)
        if kind == "imported":
            solved = "yes" if "reference gets reward 1" in text else "no solution (starter 0)"
            print(f"| {repo} | {path} | yes | {solved} | |", flush=True)
        else:
            print(f"| {repo} | {path} | no | | {text[:400].replace('|', '/')} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1] / "tests"))
    sys.exit(main(sys.argv[1:]))
