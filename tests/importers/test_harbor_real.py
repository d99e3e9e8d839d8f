"""Real Harbor task folders written by others (issue 29): each imports and gives 1 with its own
solution and 0 without, or is refused with a specific reason.

The folders come from public repositories that use Harbor's task format, listed with the
commit and licence in ``data/harbor_real/sources.json`` (README there). Their files are not
part of codegym: the test reads them from a local mirror of each repository
(``$CODEGYM_HARBOR_MIRRORS/<owner>+<name>/repo``, a git directory; default /work/.mirror)
and skips a repository with the reason when there is none. Each folder is imported alone
(``import_harbor``: the task is judged through the docker sandbox before it is kept, so an
imported task with a solution got reward 1 with it and not with the unchanged starter);
a refusal must be one line with one of the specific reasons of `SPECIFIC`, and, on a
machine like the one ``sources.json``'s ``expect`` was recorded on (no registry, the
Python roots present, builds without network), the same one.

    python3 tests/importers/test_harbor_real.py     # the table (repository, task, outcome)
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
#: the reasons a real folder may be refused for (each names what codegym cannot do, or what is wrong)
SPECIFIC = (r"is not available locally; .*(no registry answers|pulling is off|Ubuntu's images cannot be made|"
            r"no local stand-in)", r"a multi-step task \(\[\[steps\]\]: \d+ steps\)", r"multi-container environments",
            r"neither environment/Dockerfile nor \[environment\]\.docker_image", r"not Harbor's task format",
            r"environment\.type = .*: codegym runs Docker environments only", r"no tests/test\.sh",
            r"docker build failed", r"stopped after \d+ s", r"with its own solution the task gets \w+, not reward 1",
            r"the unchanged starting files already get reward 1", r"sets no WORKDIR", r"has no python3",
            r"not a finite number", r"out of range", r"a FIFO|a device|a socket|a hard link|resolves outside",
            r"solution/solve\.sh changes no text file of the working directory", r"services\.main\.\w+: not supported")


def _mirror(repo: str) -> Path | None:
    g = MIRRORS / repo.replace("/", "+") / "repo"
    return g if (g / "HEAD").exists() or (g / ".git").exists() else None


def _extract(git: Path, commit: str, path: str, dest: Path) -> Path:
    tar = subprocess.run(["git", "-C", str(git), "archive", commit, path], capture_output=True, check=True,
                         timeout=300).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True, timeout=300)
    return dest / path


def outcome(repo: str, commit: str, path: str, work: Path) -> tuple[str, str]:
    """("imported" | "refused", the notes or the reason) of one real folder."""
    from codegym.importers.harbor import import_harbor  # noqa: PLC0415 -- also run as a script
    git = _mirror(repo)
    src = work / "src"
    src.mkdir(parents=True, exist_ok=True)
    folder = _extract(git, commit, path, src)
    res = import_harbor(folder, work / "out", suite="real")
    if res.imported:
        return "imported", "; ".join(n for notes in res.notes.values() for n in notes)
    (_, why), = res.failed
    return "refused", why.replace(str(src) + "/", "")


CASES = [(r["repo"], r["commit"], t) for r in SOURCES for t in r["tasks"]]
EXPECT = {(r["repo"], t): e for r in SOURCES for t, e in (r.get("expect") or {}).items()}


@pytest.mark.docker
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("repo,commit,path", CASES, ids=[f"{r}:{p}" for r, _, p in CASES])
def test_a_real_folder_imports_and_solves_or_is_refused_for_a_specific_reason(repo, commit, path, tmp_path):
    if _mirror(repo) is None:
        pytest.skip(f"no local mirror of {repo} under {MIRRORS} (fetch github:{repo}; "
                    "CODEGYM_HARBOR_MIRRORS names another folder)")
    from _harbor_tasks import docker_ready  # noqa: PLC0415
    if not docker_ready():
        pytest.skip("no docker engine with codegym/python:3.11")
    kind, text = outcome(repo, commit, path, tmp_path)
    if kind == "imported":
        assert "verified:" in text, text
        if "no reference" not in text:
            assert "the reference gets reward 1, the unchanged starting files" in text
    else:
        assert "\n" not in text and any(re.search(p, text) for p in SPECIFIC), text
    want = EXPECT.get((repo, path))
    if want is not None and _as_recorded():
        assert want in (text if kind == "refused" else "imported"), (want, kind, text)


def _as_recorded() -> bool:
    """Whether this machine is like the one `expect` was recorded on: no registry answers, the
    Python roots (stand-ins) are here, builds without network."""
    from codegym.sandbox.images import registry_reachable  # noqa: PLC0415
    from codegym.sandbox.roots import find_root  # noqa: PLC0415
    return not registry_reachable() and all(find_root(v) is not None for v in ("3.9", "3.11", "3.13"))


def main() -> int:
    print("| repository | task | imported? | solution 1 / no solution 0 | refused: why |")
    print("|---|---|---|---|---|")
    for repo, commit, path in CASES:
        if _mirror(repo) is None:
            print(f"| {repo} | {path} | (no mirror) | | |")
            continue
        with tempfile.TemporaryDirectory(prefix="codegym-harbor-real-") as tmp:
            kind, text = outcome(repo, commit, path, Path(tmp))
        if kind == "imported":
            solved = "yes" if "reference gets reward 1" in text else "no solution (starter 0)"
            print(f"| {repo} | {path} | yes | {solved} | |", flush=True)
        else:
            print(f"| {repo} | {path} | no | | {text[:400].replace('|', '/')} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1] / "tests"))
    sys.exit(main())
