"""The harness's recipe for an instance's environment: what to install, with which Python, how.

`record_recipe` turns a SWE-bench-schema record into a `Recipe` (the fields a task's
``metadata.extra.swe`` holds for `codegym.sandbox.repoenv`):

- a repository SWE-bench knows: SWE-bench's own per-repository, per-version specs (the
  ``swebench`` package's ``MAP_REPO_VERSION_TO_SPECS_PY``, `swebench_specs`; 4.x has them):
  python, ``packages`` (conda package specs mapped to pip; ``requirements.txt``: the
  repository's requirement files at the environment commit, every line checked;
  ``environment.yml``: its pip-installable dependencies), ``pip_packages``, ``pre_install``,
  ``install``, ``test_cmd`` and the variables its ``eval_commands`` export;
- a SWE-rebench record: its ``install_config`` (the same fields);
- any other repository: pytest and the test dependencies it declares
  (`codegym.importers.repodeps`), then the repository itself, editable.

Where codegym differs from the harness (conda, apt-get lines, non-editable installs, the
install re-run before the tests), `Recipe.notes` says so per record; docs/swe.md,
"Environments", lists the differences. Everything read from a record or a repository is
untrusted: requirements are PEP 508 specifiers (`codegym.sandbox.pyreqs`), commands run
in the build sandbox only.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.version import InvalidVersion, Version

from codegym.core.git import GitError, git_text
from codegym.core.yamldoc import parse_yaml
from codegym.importers.repodeps import declared_requirements, layout_env, list_tree, repo_files, wanted_files
from codegym.sandbox.pyreqs import RequirementError, check_requirement, requirements_file
from codegym.sandbox.repoenv import DEFAULT_INSTALL

#: where SWE-bench's harness has the repository (its commands name it) and where codegym has it
HARNESS_DIR, CHECKOUT_DIR = "/testbed", "/box/ws"
#: conda packages with no pip equivalent to install (the root has compilers, make, git)
_CONDA_ONLY = {"python", "pip", "setuptools-scm-git-archive", "compilers", "c-compiler", "cxx-compiler",
               "fortran-compiler", "make", "pkg-config", "libffi", "openblas", "mkl", "blas", "libblas",
               "liblapack", "nomkl", "cairo", "ffmpeg", "imagemagick", "graphviz", "texlive-core", "qt",
               "libgdal", "gdal", "hdf5", "libnetcdf", "proj", "geos", "freetype", "libpng", "zlib", "tk",
               "sqlite", "openssl", "ca-certificates", "libiconv", "gettext", "ghostscript"}
#: conda names whose pip distribution is named otherwise
_CONDA_NAMES = {"pytables": "tables", "matplotlib-base": "matplotlib", "pyqt": "PyQt5",
                "py-opencv": "opencv-python", "pytorch": "torch", "msgpack-python": "msgpack", "pywin32": "",
                "typing_extensions": "typing-extensions", "python-graphviz": "graphviz", "dask-core": "dask"}


@dataclass
class Recipe:
    """How an instance's environment is made (the task's ``metadata.extra.swe`` fields).

    source        "swe-bench" (the package's specs) | "swe-rebench" (install_config) | "declared"
    python        the Python version asked for (None: the sandbox's own)
    packages      PEP 508 requirements, one pip call; pip_packages: a second one
    pre_install   shell commands in the checkout before the repository's install
    install       the repository's install command (run in the checkout, editable; None: the
                  repository has no packaging metadata and is imported from the checkout)
    test_cmd      argv prefix of the test command (None: the importer's default)
    env           variables of the test commands
    notes         where this recipe departs from the harness's, and what was refused
    """

    source: str = "declared"
    python: str | None = None
    packages: list[str] = field(default_factory=list)
    pip_packages: list[str] = field(default_factory=list)
    pre_install: list[str] = field(default_factory=list)
    install: str | None = DEFAULT_INSTALL
    test_cmd: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def swe_fields(self) -> dict[str, Any]:
        """The recipe as ``metadata.extra.swe`` fields (empty ones left out)."""
        out: dict[str, Any] = {"install": list(self.packages), "recipe": self.source}
        if self.install:
            out["repo_install"] = self.install
        if self.pip_packages:
            out["pip_packages"] = list(self.pip_packages)
        if self.python:
            out["python"] = self.python
        if self.pre_install:
            out["pre_install"] = list(self.pre_install)
        if self.notes:
            out["recipe_notes"] = list(dict.fromkeys(self.notes))[:40]
        return out


def swebench_specs() -> Mapping[str, Mapping[str, Any]] | None:
    """SWE-bench's ``MAP_REPO_VERSION_TO_SPECS_PY`` (``swebench`` 4.x), or None when the
    package is not installed or does not have them (5.x)."""
    try:
        from swebench.harness.constants import python as constants  # noqa: PLC0415 -- the [swebench] extra
    except ImportError:
        return None
    return getattr(constants, "MAP_REPO_VERSION_TO_SPECS_PY", None)


def _reqs_paths(repo: str) -> list[str]:
    try:
        from swebench.harness.constants import python as constants  # noqa: PLC0415 -- the [swebench] extra
    except ImportError:
        return []
    return list(getattr(constants, "MAP_REPO_TO_REQS_PATHS", {}).get(repo, []))


def _env_yml_paths(repo: str) -> list[str]:
    try:
        from swebench.harness.constants import python as constants  # noqa: PLC0415 -- the [swebench] extra
    except ImportError:
        return []
    return list(getattr(constants, "MAP_REPO_TO_ENV_YML_PATHS", {}).get(repo, []))


# ----------------------------------------------------------------------------- mapping pieces


def conda_to_pip(spec: str) -> str | None:
    """A conda package spec as a pip requirement (``numpy=1.19`` -> ``numpy==1.19.*``,
    ``'scipy==1.5.2'`` as is), or None for a package pip cannot install (compilers, system
    libraries, python itself)."""
    s = spec.strip().strip("'\"")
    if not s or s.startswith("-"):
        return None
    s = s.split("::", 1)[-1]  # channel::name
    m = re.match(r"^([A-Za-z0-9_.\-]+)\s*(.*)$", s)
    if not m:
        return None
    name, rest = m.group(1), m.group(2).strip()
    if name.lower() in _CONDA_ONLY:
        return None
    name = _CONDA_NAMES.get(name.lower(), name)
    if not name:
        return None
    if rest.startswith("=") and not rest.startswith("=="):
        version = rest[1:].split("=", 1)[0]  # name=version=build: the build is conda's
        rest = f"=={version}" + (".*" if version.count(".") < 2 and not version.endswith("*") else "")
        rest = rest.replace(".*.*", ".*")
    return f"{name}{rest}"


def _checked(items: Sequence[str], what: str, notes: list[str]) -> list[str]:
    out = []
    for item in items:
        try:
            out.append(check_requirement(item))
        except RequirementError as e:
            notes.append(f"{what}: {e}")
    return out


def _conda_list(text: str, notes: list[str]) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    reqs = []
    for w in words:
        pip = conda_to_pip(w)
        if pip is None:
            notes.append(f"conda package {w!r} has no pip equivalent: not installed")
        else:
            reqs.append(pip)
    return _checked(reqs, "packages", notes)


def _env_yml(text: str, notes: list[str]) -> list[str]:
    """The pip-installable dependencies of a conda environment.yml (conda ones mapped)."""
    try:
        doc = parse_yaml(text, "environment.yml").data
    except Exception as e:  # noqa: BLE001 -- an unreadable file: its line says why
        notes.append(f"environment.yml is not readable: {str(e)[:200]}")
        return []
    deps = doc.get("dependencies", []) if isinstance(doc, Mapping) else []
    reqs: list[str] = []
    for d in deps if isinstance(deps, list) else []:
        if isinstance(d, str):
            pip = conda_to_pip(d)
            if pip is None:
                notes.append(f"environment.yml: conda package {d!r} has no pip equivalent: not installed")
            else:
                reqs.append(pip)
        elif isinstance(d, Mapping) and isinstance(d.get("pip"), list):
            reqs += [x for x in d["pip"] if isinstance(x, str) and not x.strip().startswith("-")]
    return _checked(reqs, "environment.yml", notes)


def _pre_install(lines: Sequence[str], notes: list[str]) -> list[str]:
    out = []
    for line in lines:
        if not isinstance(line, str) or not line.strip():
            continue
        if re.search(r"\b(apt-get|apt|locale-gen|dpkg)\b", line):
            notes.append(f"pre_install {line[:80]!r}: system packages are not installed (the root has "
                         "build-essential and git; no apt in the sandbox)")
            continue
        out.append(line.replace(HARNESS_DIR, CHECKOUT_DIR))
    return out


def _install(cmd: str | None, notes: list[str]) -> str:
    """The repository's install command, made editable (the tests import the checkout)."""
    if not cmd or not str(cmd).strip():
        return DEFAULT_INSTALL
    c = str(cmd).strip().replace(HARNESS_DIR, CHECKOUT_DIR)
    new = re.sub(r"\bsetup\.py\s+install\b", "setup.py develop", c)
    new = re.sub(r"\bpip\s+install((?:\s+-[-\w]+(?:=\S+)?)*)\s+(['\"]?)\.(\[[^\]]*\])?\2(?=\s|$)",
                 lambda m: f"pip install{m.group(1)} -e {m.group(2)}.{m.group(3) or ''}{m.group(2)}", new)
    new = new.replace("-e -e ", "-e ")
    if new != c:
        notes.append(f"install {c!r} run as {new!r}: editable, so the tests import the checkout")
    return new


def test_argv(cmd: str | Sequence[str] | None, env: dict[str, str]) -> list[str] | None:
    """A harness test command (``pytest -rA``, ``./tests/runtests.py ...``, ``VAR=x bin/test``)
    as an argv prefix run by the environment's Python; leading ``VAR=value`` words go to `env`."""
    if cmd is None:
        return None
    if not isinstance(cmd, str):
        lines = [str(c) for c in cmd]
        cmd = lines[-1] if lines else ""  # a list of shell lines: the last one runs the tests
    try:
        words = shlex.split(cmd)
    except ValueError:
        return None
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        k, _, v = words.pop(0).partition("=")
        env[k] = v
    if not words:
        return None
    if words[0] in ("pytest", "py.test"):
        words = ["python", "-m", "pytest", *words[1:]]
    elif words[0].endswith(".py") or words[0] in ("bin/test", "./bin/test"):
        words = ["python", words[0].removeprefix("./"), *words[1:]]
    elif words[0] == "python3":
        words[0] = "python"
    return words


def _eval_env(lines: Sequence[str], notes: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in lines or ():
        m = re.match(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$", str(line))
        if m:
            value = m.group(2).strip().strip("'\"")
            if "en_US.UTF-8" in value:  # the harness generates that locale; a root has C.UTF-8
                notes.append(f"{m.group(1)}={value}: C.UTF-8 instead (no locales are generated in the sandbox)")
                value = value.replace("en_US.UTF-8", "C.UTF-8")
            env[m.group(1)] = value
        else:
            notes.append(f"eval command {str(line)[:80]!r} is not run (variables only)")
    return env


# ----------------------------------------------------------------------------- recipes

Reader = Callable[[str], "str | None"]


def spec_recipe(repo: str, spec: Mapping[str, Any], read: Reader | None, source: str = "swe-bench",
                reqs_paths: Sequence[str] = (), yml_paths: Sequence[str] = ()) -> Recipe:
    """A SWE-bench spec (or a SWE-rebench ``install_config``) as a `Recipe`; `read(path)` gives a
    file of the repository at the environment commit (its requirement files), or None."""
    notes: list[str] = []
    r = Recipe(source=source, python=str(spec["python"]) if spec.get("python") else None)
    pkgs = spec.get("packages") or ""
    if isinstance(pkgs, list):
        pkgs = " ".join(str(p) for p in pkgs)
    if pkgs == "requirements.txt" or (reqs_paths and not pkgs):
        paths = list(reqs_paths) or _reqs_paths(repo)
        for p in paths:
            if read is not None and read(p) is not None:
                reqs, more = requirements_file(p, read)
                r.packages, notes = reqs, notes + more
                break
        else:
            notes.append(f"requirements file not found (looked at {', '.join(paths) or 'no path'})")
    elif pkgs == "environment.yml" or (yml_paths and not pkgs):
        paths = list(yml_paths) or _env_yml_paths(repo)
        for p in paths:
            text = read(p) if read is not None else None
            if text is not None:
                r.packages = _env_yml(text, notes)
                notes.append(f"{p}: a conda environment, installed with pip (conda packages mapped)")
                break
        else:
            notes.append(f"environment.yml not found (looked at {', '.join(paths) or 'no path'})")
    elif pkgs:
        r.packages = _conda_list(str(pkgs), notes)
    pip = spec.get("pip_packages") or []
    if isinstance(pip, str):
        pip = pip.split()
    r.pip_packages = _checked([str(p) for p in pip], "pip_packages", notes)
    pre = spec.get("pre_install") or []
    r.pre_install = _pre_install([pre] if isinstance(pre, str) else list(pre), notes)
    r.install = _install(spec.get("install"), notes)
    r.test_cmd = test_argv(spec.get("test_cmd"), r.env)
    r.env.update(_eval_env(spec.get("eval_commands") or [], notes))
    r.notes = notes
    return r


def declared_recipe(git_dir: str | None, commit: str) -> Recipe:
    """Pytest and what the repository declares at `commit` (`repodeps`), then the repository
    itself, editable; the sandbox's own Python."""
    r = Recipe(source="declared", packages=["pytest"])
    if git_dir is None:
        r.notes.append("the repository was not readable at import: pytest alone")
        return r
    paths = list_tree(git_dir, commit)
    files = repo_files(git_dir, commit, wanted_files(paths))
    r.packages = _checked(declared_requirements(files, paths), "declared requirements", r.notes)
    r.env = layout_env(paths)
    if not {"setup.py", "pyproject.toml", "setup.cfg"} & set(paths):
        r.install = None
        r.notes.append("the repository has no packaging metadata (setup.py, pyproject.toml): not installed, "
                       "the tests import the checkout")
    return r


def record_recipe(rec: Mapping[str, Any], git_dir: str | None = None, commit: str | None = None) -> Recipe:
    """The `Recipe` of a SWE-bench-schema record: SWE-bench's spec of its repository and version
    when the ``swebench`` package has one, SWE-rebench's ``install_config``, else what the
    repository declares (read from `git_dir` at `commit`, its environment commit)."""
    repo = str(rec.get("repo", ""))
    commit = commit or str(rec.get("environment_setup_commit") or rec.get("base_commit") or "")

    def read(path: str) -> str | None:
        if git_dir is None:
            return None
        return repo_files(git_dir, commit, [path]).get(path)
    cfg = rec.get("install_config")
    if isinstance(cfg, Mapping):
        paths = cfg.get("reqs_path") or []
        ymls = cfg.get("env_yml_path") or []
        return spec_recipe(repo, cfg, read, "swe-rebench", [paths] if isinstance(paths, str) else list(paths),
                           [ymls] if isinstance(ymls, str) else list(ymls))
    specs = swebench_specs()
    version = str(rec.get("version") or "")
    if specs is not None and repo in specs and version in specs[repo]:
        return spec_recipe(repo, specs[repo][version], read)
    r = declared_recipe(git_dir, commit)
    if repo in (specs or {}):
        r.notes.append(f"SWE-bench has no spec of {repo} version {version!r}: the declared dependencies")
    elif specs is None:
        r.notes.append("the swebench package (4.x, pip install 'codegym[swebench]') with SWE-bench's "
                       "per-version specs is not installed: the declared dependencies")
    return r


def scm_version(git_dir: str, commit: str) -> str | None:
    """The version setuptools-scm would give `commit` (its default scheme: the last tag, or the
    next version with ``.devN`` N commits after it), read with ``git describe``; None without
    a version tag. The build's checkout has no tags, so the install is told this one."""
    try:
        out = git_text(["describe", "--tags", "--long", "--match", "*[0-9]*", commit], git_dir)
    except GitError:
        return None
    m = re.match(r"^(.*)-(\d+)-g([0-9a-f]+)$", out.strip())
    if not m:
        return None
    tag, distance, sha = m.group(1), int(m.group(2)), m.group(3)
    tag = re.sub(r"^[^0-9]*", "", tag)
    try:
        v = Version(tag)
    except InvalidVersion:
        return None
    if distance == 0:
        return str(v)
    if v.pre is not None:
        nxt = f"{'.'.join(map(str, v.release))}{v.pre[0]}{v.pre[1] + 1}"
    else:
        rel = list(v.release) + [0] * (3 - len(v.release))
        rel[-1] += 1
        nxt = ".".join(map(str, rel))
    return f"{nxt}.dev{distance}+g{sha}"
