"""SWE-bench in codegym: instance records -> a suite of repo tasks, and a candidate's grade.

`import_swebench` reads SWE-bench, SWE-smith or SWE-rebench instances (JSON list, JSON
lines, optionally gzip; `swebench_flavour` tells them apart, the entry for schema
detection) and writes a suite folder (`swebench_task`: one instance -> task mapping and
sibling files); `codegym import swebench` is its command (`codegym.cli.imports`). Each
task names its test environment as the harness builds it (`codegym.importers.swespecs`:
SWE-bench's per-version spec, SWE-rebench's install_config, or the dependencies the
repository declares; the repository installed at its base commit), built inside the
sandbox once per repository, version and packages when first judged. `grade` judges a candidate on the
hidden split and answers SWE-bench's resolution (`SWEGrade`). docs/swe.md says more.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegym.core.git import GitError
from codegym.core.jsonl import DEFAULT_DATA_CAPS, DataCaps, DataError, loads
from codegym.core.paths import staged_folder
from codegym.importers.common import RECORD_ERRORS, ImportReport, read_source, record_error, task_name
from codegym.importers.minepack import pack_suite
from codegym.importers.repodeps import list_tree, merge_requirements, repo_environment
from codegym.importers.swespecs import record_recipe, scm_version
from codegym.importers.yamlout import write_suite
from codegym.judge import judge
from codegym.judge.kinds.repo import Resolution, resolution
from codegym.judge.logs.swebench import parser_for_repo
from codegym.sandbox.types import Sandbox
from codegym.tasks.load import TaskValidationError, load_task
from codegym.tasks.patches import SWEError, check_patch, patch_paths
from codegym.tasks.repo import FAIL_TO_PASS, PASS_TO_PASS, RepoSource, check_commit, git_dir, has_commit
from codegym.tasks.schema import Task

#: the fields every SWE-bench-schema record has (SWE-smith and SWE-rebench too)
SWEBENCH_FIELDS = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement")
#: the default repository URL template: needs the network (give a local mirror offline)
GITHUB_URL = "https://github.com/{repo}.git"
#: repository URLs a task may name as they are (a local path or file:// is packed into the suite)
_REMOTE = re.compile(r"^(?:https?|ssh|git)://|^[\w.-]+@[\w.-]+:")
#: SWE-bench's runners of repositories that do not use plain pytest (argv prefix; the
#: test targets derived from the test patch are appended; read by the official parsers)
_REPO_COMMANDS: dict[str, tuple[str, ...]] = {
    "django/django": ("python", "tests/runtests.py", "--verbosity", "2", "--settings=test_sqlite",
                      "--parallel", "1"),
    "sympy/sympy": ("python", "bin/test", "-C", "--verbose"),
}
#: the default test command: pytest's own report lines and a junit file (exact ids)
PYTEST_COMMAND = ("python", "-m", "pytest", "-rA", "-p", "no:cacheprovider", "--junitxml=.codegym-junit.xml")
#: a record's repository: owner/name of plain names (SWE-smith: swesmith/owner__name.commit),
#: so it cannot leave the --repo-url template's root or add URL syntax to it
_REPO_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")
#: a per-repository requirement given on the command line: owner/name=REQ
_REPO_REQ = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*/[A-Za-z0-9_][A-Za-z0-9_.-]*)=(.+)$", re.S)


def swebench_flavour(rec: Mapping[str, Any]) -> str | None:
    """Which schema a record follows: ``"swe-rebench"`` (an ``install_config``),
    ``"swe-smith"`` (a ``swesmith/`` repository or an ``image_name``), ``"swe-bench"``, or
    None when it lacks SWE-bench's fields (`SWEBENCH_FIELDS`)."""
    if not isinstance(rec, Mapping) or not all(k in rec for k in ("instance_id", "repo", "patch")):
        return None
    if not any(k in rec for k in ("base_commit", "test_patch", "FAIL_TO_PASS")):
        return None
    if isinstance(rec.get("install_config"), Mapping):
        return "swe-rebench"
    if str(rec.get("repo", "")).startswith("swesmith/") or "image_name" in rec:
        return "swe-smith"
    return "swe-bench"


def _upstream(rec: Mapping[str, Any]) -> str:
    """owner/name of the repository (SWE-smith's ``swesmith/owner__name.commit`` mirrors)."""
    repo = str(rec["repo"])
    if repo.startswith("swesmith/"):
        tail = repo.split("/", 1)[1]
        repo = tail.rsplit(".", 1)[0].replace("__", "/", 1) if "__" in tail else tail
    return repo


def repo_url_for(template: str, repo: str) -> str:
    """`template` with ``{repo}`` (owner/name), ``{owner}``, ``{name}`` and ``{repo_plus}``
    (owner+name: how mirrors are often laid out) filled in. `repo` must be owner/name of
    plain names (`SWEError` otherwise): a record cannot lead the URL out of the template."""
    if not _REPO_NAME.match(repo) or ".." in repo.split("/"):
        raise SWEError(f"repository {repo[:100]!r} is not owner/name")
    owner, _, name = repo.partition("/")
    return template.format(repo=repo, owner=owner, name=name, repo_plus=f"{owner}+{name}",
                           repo_dunder=f"{owner}__{name}")


def _id_list(value: Any, field_name: str, iid: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = loads(value)
        except DataError as e:
            if "nested too deeply" in str(e):
                raise SWEError(f"{iid}: {field_name} is JSON nested too deeply to be a list of test ids") from None
            raise SWEError(f"{iid}: {field_name} is not JSON: {value[:80]!r}") from None
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise SWEError(f"{iid}: {field_name} must be a list of test ids")
    return list(value)


def validate_record(rec: Mapping[str, Any]) -> str:
    """The instance id of a record that can become a task; `SWEError` saying what is wrong
    otherwise: a missing or non-text field, a repository that is not owner/name, a commit
    that is not a commit id, FAIL_TO_PASS / PASS_TO_PASS that are not lists of test ids
    (or FAIL_TO_PASS empty), a patch that is not a diff, leaves the tree or makes a link
    (`codegym.tasks.patches.check_patch`)."""
    iid = rec.get("instance_id")
    iid = iid if isinstance(iid, str) and iid else "?"
    missing = [k for k in SWEBENCH_FIELDS if not rec.get(k)]
    if missing:
        raise SWEError(f"{iid}: missing field {', '.join(missing)}")
    bad = [k for k in SWEBENCH_FIELDS if not isinstance(rec[k], str)]
    if bad:
        raise SWEError(f"{iid}: field {', '.join(bad)} must be text")
    repo = _upstream(rec)
    repo_url_for("{repo}", repo)
    if str(rec["repo"]).startswith("swesmith/"):
        repo_url_for("{repo}", "swesmith/" + str(rec["repo"]).split("/", 1)[1])
    check_commit(rec["base_commit"], f"{iid}: base_commit")
    env_commit = rec.get("environment_setup_commit")
    if env_commit not in (None, ""):
        check_commit(str(env_commit), f"{iid}: environment_setup_commit")
    if not _id_list(rec.get("FAIL_TO_PASS"), "FAIL_TO_PASS", iid):
        raise SWEError(f"{iid}: FAIL_TO_PASS is empty")
    _id_list(rec.get("PASS_TO_PASS"), "PASS_TO_PASS", iid)
    for k in ("patch", "test_patch"):
        try:
            check_patch(rec[k])
        except SWEError as e:
            raise SWEError(f"{iid}: {k}: {e}") from None
    return iid


def install_for(install: Sequence[str] | None, repo: str) -> list[str]:
    """The command line's extra requirements for `repo`: every plain ``REQ`` and every
    ``owner/name=REQ`` of that repository."""
    out = []
    for item in install or ():
        m = _REPO_REQ.match(item)
        if m is None:
            out.append(item)
        elif m.group(1).lower() == repo.lower():
            out.append(m.group(2))
    return out


def _test_targets(repo: str, test_patch: str) -> list[str]:
    """What SWE-bench passes its runner: the test files of the test patch (Django:
    dotted module names under tests/)."""
    modified, added, _removed = patch_paths(test_patch)
    files = sorted(p for p in modified | added if p.endswith(".py"))
    if repo == "django/django":
        out = []
        for p in files:
            p = p[len("tests/"):] if p.startswith("tests/") else p
            out.append(p[:-3].replace("/", "."))
        return out
    return files


def _argv(value: Any) -> list[str] | None:
    if value in (None, "", []):
        return None
    if isinstance(value, str):
        return shlex.split(value)
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return list(value)
    raise SWEError(f"a test command must be text or a list of words, not {type(value).__name__}")


def _record_command(rec: Mapping[str, Any]) -> Any:
    """The test command a record names itself (``test_cmd`` / ``test_command``), or None."""
    return rec.get("test_cmd") or rec.get("test_command")


def swebench_task(rec: Mapping[str, Any], *, suite: str = "swebench", test_command: Sequence[str] | None = None,
                  repo_url: str = GITHUB_URL, install: Sequence[str] | None = None,
                  setup: Sequence[str] = (), env: Mapping[str, str] | None = None,
                  image: str | None = None, resolve_env: bool = True) -> tuple[dict, dict[str, str]]:
    """One SWE-bench / SWE-smith / SWE-rebench instance -> (task mapping, sibling files).

    `repo_url` is formatted by `repo_url_for` (a local mirror stands in for GitHub).
    The tests' environment is the harness's recipe (`codegym.importers.swespecs.record_recipe`:
    SWE-bench's spec of the repository and version, SWE-rebench's ``install_config``, else
    pytest and what the repository declares at ``environment_setup_commit``, read from
    `repo_url` when `resolve_env`), the repository installed at the base commit; `install`
    adds requirements to it (`install_for`: ``REQ`` for every repository, ``owner/name=REQ``
    for one). `setup` commands run once per checkout before the tests, `env`
    holds the test commands' variables; `image` (a template like `repo_url`'s with
    ``{instance_id}``) names a prebuilt container image instead of codegym's own."""
    iid = validate_record(rec)
    name = task_name(iid)
    repo = _upstream(rec)
    f2p = _id_list(rec.get("FAIL_TO_PASS"), "FAIL_TO_PASS", iid)
    p2p = _id_list(rec.get("PASS_TO_PASS"), "PASS_TO_PASS", iid)
    url = repo_url_for(repo_url, str(rec["repo"]) if str(rec["repo"]).startswith("swesmith/") else repo)
    env_commit = str(rec.get("environment_setup_commit") or rec["base_commit"])
    gdir = None
    licence, layout = None, {}
    if resolve_env:
        try:
            gdir = str(git_dir(_source(url, env_commit)))
            found = repo_environment(gdir, env_commit)
            licence, layout = found["licence"], found["env"]
        except (SWEError, GitError, ValueError, OSError):
            gdir = None  # the repository is not reachable now: the recipe says so
    # the environment: SWE-bench's spec, SWE-rebench's install_config or the declared dependencies
    # (codegym.importers.swespecs)
    recipe = record_recipe(rec, gdir, env_commit)
    own_command = _argv(_record_command(rec))
    prefix = (list(test_command) if test_command else own_command or recipe.test_cmd
              or list(_REPO_COMMANDS.get(repo, PYTEST_COMMAND)))
    if prefix[:1] == ["pytest"]:  # the environment's pytest, and its junit report
        prefix = ["python", "-m", *prefix]
    if "pytest" in prefix[:3] and not any(a.startswith("--junitxml") for a in prefix):
        prefix.append("--junitxml=.codegym-junit.xml")
    command = [*prefix, *_test_targets(repo, str(rec["test_patch"]))]
    hidden = [{"name": FAIL_TO_PASS, "command": command, "tests": f2p}]
    if p2p:
        hidden.append({"name": PASS_TO_PASS, "command": command, "tests": p2p})
    # the command line's --install adds to the recipe's last list, installed last (a name it
    # repeats: its version wins)
    added = install_for(install, repo)
    if recipe.pip_packages:
        recipe.pip_packages = merge_requirements(recipe.pip_packages, added)
    else:
        recipe.packages = merge_requirements(recipe.packages, added)
    extra: dict[str, Any] = {"patch": {"file": f"{name}/gold.patch"}, "test_patch": {"file": f"{name}/test.patch"},
                             "instance_id": iid, "repo": repo, **recipe.swe_fields(),
                             "env": {**(layout if recipe.source == "declared" else {}), **recipe.env, **(env or {})}}
    scm = scm_version(gdir, str(rec["base_commit"])) if gdir else None
    if scm:
        extra["scm_version"] = scm
    parser = parser_for_repo(repo)
    if parser and not test_command and not own_command and recipe.source != "swe-rebench":
        extra["log_parser"] = parser
    for k in ("version", "environment_setup_commit", "created_at", "hints_text", "image_name"):
        if rec.get(k) not in (None, ""):
            extra[k] = str(rec[k])
    if not extra["env"]:
        del extra["env"]
    repo_spec: dict[str, Any] = {"url": url, "commit": str(rec["base_commit"])}
    if setup:
        repo_spec["setup"] = list(setup)
    if image:
        repo_spec["image"] = image.format(instance_id=iid, instance_lower=iid.lower(), repo=repo)
    task = {
        "id": f"{suite}/{name}",
        "title": f"{repo}: {iid}",
        "statement": {"file": f"{name}/issue.md"},
        "kind": "repo",
        "language": "python",
        "repo": repo_spec,
        "tests": {"hidden": hidden},
        "metadata": {"source": swebench_flavour(rec) or "swe-bench", "url": f"https://github.com/{repo}",
                     "tags": [repo], "extra": {"swe": extra}, **({"licence": licence} if licence else {})},
    }
    files = {f"{name}/gold.patch": str(rec["patch"]), f"{name}/test.patch": str(rec["test_patch"]),
             f"{name}/issue.md": str(rec["problem_statement"])}
    return task, files


def _source(url: str, commit: str) -> RepoSource:
    if "://" in url or "@" in url.split("/", 1)[0]:
        return RepoSource("git", url, commit)
    path = Path(url).expanduser().resolve()
    return RepoSource("bundle" if path.name.endswith(".bundle") else "dir", str(path), commit)


def _check_local(url: str, rec: Mapping[str, Any], iid: str) -> None:
    """A local repository (a mirror) holds the record's base and environment commits, and
    the environment commit's tree can be read (`SWEError` saying which and why)."""
    base = str(rec["base_commit"])
    env_commit = str(rec.get("environment_setup_commit") or base)
    try:
        gdir = git_dir(_source(url, None))
    except (SWEError, GitError, OSError) as e:
        raise SWEError(f"{iid}: the repository {url} cannot be read: {e}") from None
    for what, commit in (("base commit", base), ("environment commit", env_commit)):
        if not has_commit(gdir, commit):
            raise SWEError(f"{iid}: {what} {commit} is not in the repository {url}")
    try:
        list_tree(gdir, env_commit)
    except GitError as e:
        raise SWEError(f"{iid}: the files of environment commit {env_commit} cannot be read from {url} "
                       f"(an incomplete repository?): {str(e).rsplit('failed: ', 1)[-1][:200]}") from None


def import_swebench(path: str | os.PathLike, out_dir: str | os.PathLike, *, suite: str | None = None,
                    ids: Sequence[str] | None = None, limit: int | None = None,
                    test_command: Sequence[str] | None = None, validate: bool = True,
                    repo_url: str = GITHUB_URL, install: Sequence[str] | None = None,
                    setup: Sequence[str] = (), env: Mapping[str, str] | None = None,
                    image: str | None = None, caps: DataCaps = DEFAULT_DATA_CAPS) -> ImportReport:
    """Import SWE-bench-schema instances into a suite folder: ``suite.yaml``, ``<name>.yaml``
    per instance and ``<name>/{issue.md, gold.patch, test.patch}`` (see `swebench_task` for
    the options). Ids are ``<suite>/<instance_id>`` (suite: the folder name by default).
    A record that cannot be imported is skipped with one line saying where it is and why
    (`validate_record`; a local repository must hold its base and environment commits,
    readable); the others are imported. Repositories given as local paths (a mirror) are
    stored in the suite folder as one git bundle each, holding the base trees only
    (`codegym.importers.minepack.pack_suite`): a task names files inside its suite only.
    The suite is written in a temporary folder that replaces `out_dir` at the end: an
    import that fails leaves `out_dir` as it was."""
    t0 = time.monotonic()
    out = Path(out_dir)
    suite = suite or out.name
    report = ImportReport(source=str(path), out_dir=str(out))
    src = read_source(path, caps=caps)
    for where, why in src.bad:
        report.skip(where, why)
    wanted = set(ids) if ids else None
    tasks: list[dict] = []
    siblings: dict[str, str] = {}
    names: dict[str, str] = {}
    for where, rec in src.records:
        iid = str(rec.get("instance_id", "?"))[:200]
        if wanted is not None and iid not in wanted:
            continue
        if limit is not None and len(tasks) >= limit:
            break
        try:
            task, files = swebench_task(rec, suite=suite, test_command=test_command, repo_url=repo_url,
                                        install=install, setup=setup, env=env, image=image)
            name = task["id"].rsplit("/", 1)[-1]
            if name in names:
                raise SWEError(f"{iid}: a second record of the task name {name} (first: {names[name]})")
            url = task["repo"]["url"]
            if not _REMOTE.match(url):
                if "://" not in url:
                    url = task["repo"]["url"] = str(Path(url).expanduser().resolve())
                _check_local(url, rec, iid)
        except (SWEError, GitError, OSError, *RECORD_ERRORS) as e:
            report.skip(f"{where} ({iid})", " ".join(str(e).split())[:500] or record_error(e))
            continue
        names[name] = where
        tasks.append(task)
        siblings.update(files)
        report.count(_upstream(rec))
    if repo_url == GITHUB_URL and tasks:
        report.notes.append("repositories are cloned from GitHub when first used: that needs the network "
                            "(offline, give --repo-url a local mirror, e.g. /mirrors/{repo_plus})")
    with staged_folder(out) as stage:
        dropped = _write(stage, tasks, siblings, suite, Path(path).name, report, validate)
    report.written = [t["id"] for t in tasks if t["id"] not in dropped]
    report.elapsed_s = time.monotonic() - t0
    return report


_DEFAULTS = {"kind": "repo", "language": "python",
             "limits": {"time_s": 600, "memory_mb": 8192, "processes": 512, "disk_mb": 8192,
                        "output_bytes": 1 << 25, "open_files": 4096, "file_size_mb": 1024}}


def _write(stage: Path, tasks: list[dict], siblings: Mapping[str, str], suite: str, source: str,
           report: ImportReport, validate: bool) -> set[str]:
    """Write the suite into `stage`: files, task YAML, the local repositories packed, every
    task loaded back (`validate`); a task dropped on the way is a skip line of `report`.
    Returns the ids of the tasks dropped."""
    for rel, text in siblings.items():
        target = stage / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    paths = write_suite(stage, tasks, name=suite, defaults=_DEFAULTS, validate=False,
                        description=f"SWE-bench instances imported from {source}")
    by_name = {t["id"].rsplit("/", 1)[-1]: t["id"] for t in tasks}
    gone: set[str] = set()
    if any(not _REMOTE.match(t["repo"]["url"]) for t in tasks):
        # a task names files inside its suite folder only: local mirrors become one bundle
        # per repository there (repos/), holding the base trees the tasks need
        packed = pack_suite(stage)
        report.notes.append(packed.summary.splitlines()[-1])
        for name, why in packed.dropped:
            report.skip(name, why)
            gone.add(name)
    if validate:
        for p in paths:
            if p.stem in gone:
                continue
            try:
                load_task(p)
            except (TaskValidationError, ValueError, OSError) as e:
                report.skip(p.stem, f"the written task does not load: {' '.join(str(e).split())[:300]}")
                gone.add(p.stem)
                p.unlink(missing_ok=True)
                shutil.rmtree(p.with_suffix(""), ignore_errors=True)
    return {by_name[n] for n in gone if n in by_name}


# =========================================================================== grading


@dataclass
class SWEGrade:
    """`grade`'s answer: the resolution and the judge report it comes from."""

    resolution: Resolution
    report: Any

    @property
    def resolved(self) -> bool:
        return self.resolution.resolved

    def to_dict(self) -> dict:
        return {**self.resolution.to_dict(), "report": self.report.to_dict()}


def grade(task: Task, files: Mapping[str, Any], sandbox: Sandbox | None = None) -> SWEGrade:
    """Judge `files` (an overlay of the base repository, None deletes) on the hidden split
    and return the SWE-bench resolution."""
    rep = judge(task, files, sandbox=sandbox, split="hidden")
    return SWEGrade(resolution(task, rep), rep)
