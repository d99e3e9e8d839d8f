"""``codegym import harbor``: Harbor task folders into a suite of codegym repo tasks, all or nothing per task.

`import_harbor(src, out)` works in phases, so that a bad folder costs one line and
nothing else:

1. every folder is read and checked (`codegym.importers.harbor_read`); a task name that an
   earlier folder of the batch already has is refused (the first keeps its files);
2. where each image comes from is decided for every task (`plan_environment`: local,
   pulled, a local stand-in, or refused) -- all before any image is built or pulled;
3. per task: pulls and stand-ins, the environment image, its working directory (the
   task's repository), the judge image, and ``solution/solve.sh`` run in the environment
   to give the task's ``reference`` solution -- written into a staging folder inside
   `out` -- then judged as codegym will judge it (`verify_task`, through the docker
   sandbox): the reference must get reward 1 and the unchanged starting files must not,
   else the task is refused with the reason;
4. each finished task is moved into `out` (a task folder of the same name from an earlier
   import is replaced only then), then ``suite.yaml``; the staging folder is removed.

`ImportResult` lists the imported ids, the refused folders with their one-line reason,
and per task the notes of the report (a stand-in image and how it differs, files of the
working directory kept in the image, what the solution could not carry).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from codegym.core.paths import write_atomic
from codegym.importers.harbor_bases import stand_in as debian_stand_in
from codegym.importers.harbor_env import (
    BASE_COPY,
    PULL_POLICIES,
    StandIn,
    build_env_image,
    build_judge_image,
    docker_or_error,
    extract_workdir,
    plan_environment,
    realize_plan,
)
from codegym.importers.harbor_read import (
    DEFAULT_CAPS,
    FolderCaps,
    HarborError,
    HarborTask,
    find_task_folders,
    read_harbor_task,
)
from codegym.importers.harbor_trial import HARBOR_SHELL, home_dir, run_solution, solution_changes, usable_workdir
from codegym.importers.yamlout import write_suite_file
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.tasks.load import TaskValidationError, load_task


@dataclass
class ImportResult:
    imported: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)    # (folder, reason)
    notes: dict[str, list[str]] = field(default_factory=dict)      # task id -> report lines
    out: Path | None = None


def task_short_name(name: str) -> str:
    """The file and id part of an imported task: ``org/my-task`` -> ``my-task``."""
    short = re.sub(r"[^A-Za-z0-9._-]+", "-", name.split("/", 1)[-1]).strip("-.")
    return short or "task"


def build_command(workdir: str, env: dict[str, str] | None = None, cwd: str | None = None) -> list[str]:
    """The repo task's test command: the working directory's files kept in the image linked
    back where the task's files did not replace them, Harbor's verifier step with the
    task's ``[verifier].env`` in `cwd` (default `workdir`; ``/`` where the environment sets
    no working directory, as Harbor runs it) through ``bash -c`` as Harbor runs it (sh
    without bash), then the reward as a junit report."""
    env = {"TEST_DIR": "/tests", **(env or {})}     # Harbor's compose files give the verifier TEST_DIR
    exports = "".join(f"export {k}={shlex.quote(v)}; " for k, v in sorted(env.items()))
    script = (f"mkdir -p /tmp/codegym-verifier && if [ -d {BASE_COPY} ]; then python3 "
              f"/opt/codegym-harbor/reward_report.py --restore {BASE_COPY} {workdir}; fi; cd {cwd or workdir} && "
              f"{exports}{HARBOR_SHELL} -c '(/tests/test.sh)' > /tmp/codegym-verifier/test-stdout.txt 2>&1; "
              "exec python3 /opt/codegym-harbor/reward_report.py /tmp/codegym-verifier")
    return ["sh", "-c", script, "codegym-harbor", "--junitxml=/tmp/codegym-verifier/junit.xml"]


def _doc(ht: HarborTask, suite: str, short: str, image: str, workdir: str,
         solution: dict[str, str], cwd: str | None) -> dict[str, Any]:
    meta = ht.config.get("metadata") if isinstance(ht.config.get("metadata"), dict) else {}
    timeout = max(30.0, ht.verifier_timeout_s)
    statement = ht.instruction
    if cwd is not None:
        statement = (statement.rstrip("\n") + f"\n\n---\n\n(Imported from Harbor: this task's environment sets no "
                     f"working directory, and Harbor runs it in `/`. Here your working directory is `{workdir}`: a "
                     f"file you write at `<path>` in it is `{workdir}/<path>` when the task is checked.)\n")
    doc: dict[str, Any] = {
        "id": f"{suite}/{short}", "title": ht.name, "statement": statement, "kind": "repo",
        "language": "python", "limits": {"time_s": timeout, "wall_s": timeout + 30, "memory_mb": ht.memory_mb},
        "repo": {"url": f"{short}/repo", "image": image},
        "tests": {"hidden": [{"name": "harbor-verifier", "command": build_command(workdir, ht.verifier_env, cwd)}]},
    }
    if solution:
        doc["solutions"] = {"reference": {"files": {p: {"file": f"{short}/solution/{p}"} for p in sorted(solution)},
                                          "description": "solution/solve.sh run in the task's environment"}}
    harbor = {"name": ht.name, "workdir": workdir, "image": image, "bases": ht.bases}
    if cwd is not None:
        harbor["cwd"] = cwd
    doc["metadata"] = {"source": "harbor", "difficulty": str(meta.get("difficulty") or "") or None,
                       "extra": {"harbor": harbor}}
    return doc


def _import_one(ht: HarborTask, plan, short: str, suite: str, stage: Path, client: Any, build_network: bool | str,
                build_timeout_s: float | None, progress: Callable[[str], None] | None,
                sandbox: Any = None) -> tuple[dict, list[str]]:
    notes = realize_plan(plan, client)
    env = build_env_image(ht, plan, client, network=build_network, timeout_cap_s=build_timeout_s)
    notes += env.notes
    workdir, cwd = env.workdir, (None if env.workdir else "/")
    run = None
    if ht.has_solution:
        if progress:
            progress(f"{ht.name}: running solution/solve.sh for the reference")
        run = run_solution(ht, env.tag, workdir, client)
        workdir = run.workdir
    elif workdir is None:
        workdir = home_dir(client, env.tag)
        notes.append(f"the environment sets no WORKDIR: Harbor runs the task in /; the agent's working directory "
                     f"here is {workdir}, the home directory of the image's user (the statement says so)")
    if not usable_workdir(workdir, inside_system=cwd is None):
        raise HarborError(f"{ht.path}: the working directory {workdir} is a system directory or holds one: codegym "
                          "gives an agent its files there by replacing the directory")
    folder = stage / short
    copy, base = extract_workdir(client, env.tag, workdir, folder / "repo")
    (folder / "repo").mkdir(parents=True, exist_ok=True)
    kept = [p for p, _, why in copy.kept if why != "a link"]
    if copy.kept:
        big = sorted(copy.kept, key=lambda k: -k[1])[:3]
        notes.append(f"{len(copy.kept)} entr{'y' if len(copy.kept) == 1 else 'ies'} of {workdir} stay in the image, "
                     "not in the task (" + ", ".join(f"{p}: {why}" for p, _, why in big) + ")")
    judge_tag = build_judge_image(ht, env.tag, workdir, kept, client)
    solution: dict[str, str] = {}
    if run is not None:
        solution, sol_notes = solution_changes(run, base)
        if not solution:
            more = [n.replace("solve.sh changed no text file of the working directory", "").strip(" ()")
                    for n in sol_notes]
            more = [m.replace("its last line: ", "solve.sh's last line: ") for m in more if m]
            raise HarborError(f"{ht.path}: solution/solve.sh changes no text file of the working directory "
                              f"{workdir}: its work lies elsewhere, and an agent in codegym edits that directory only"
                              + (f" ({'; '.join(more)})" if more else ""))
        notes += sol_notes
        for rel, text in solution.items():
            (folder / "solution" / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / "solution" / rel).write_text(text, encoding="utf-8")
    else:
        notes.append("no solution/solve.sh: the task has no reference solution")
    doc = _doc(ht, suite, short, judge_tag, workdir, solution, cwd)
    path = write_suite_file(stage, doc)
    try:
        task = load_task(path)
    except TaskValidationError as e:
        raise HarborError(f"{ht.path}: the imported task does not load: {e}") from None
    if sandbox is not None:
        notes += verify_task(ht, task, sandbox)
    return doc, notes


#: what a test.sh that fetches or installs at test time runs (codegym's verifier has no network)
_FETCHES = re.compile(r"\b(apt-get|apt|curl|wget|uvx|uv\s+pip|pip3?\s+install|npm\s+(?:i|install)|"
                      r"git\s+clone|go\s+install|cargo\s+install)\b")


def verify_task(ht: HarborTask, task: Any, sandbox: Any) -> list[str]:
    """Judge the imported task as codegym will: its reference must get reward 1 and the
    unchanged starting files must not; HarborError says why not (one line)."""
    def why(rep) -> str:
        bad = next((c for c in rep.cases if c.status != "accepted"), None)
        msg = " ".join(((bad.message if bad else "") or rep.message or rep.verdict).split())
        return msg[-300:]
    fetches = sorted(set(m.group(1).split()[0] for m in _FETCHES.finditer(_test_sh(ht))))
    hint = (f" (test.sh runs {', '.join(fetches)} at test time: codegym's verifier has no network and is not "
            "root)" if fetches else "")
    if "reference" in task.solutions:
        ref = judge(task, dict(task.solution("reference").files), sandbox=sandbox, split="hidden")
        if ref.verdict != "accepted":
            raise HarborError(f"{ht.path}: with its own solution the task gets {ref.verdict}, not reward 1, in "
                              f"codegym's docker sandbox{hint}: {why(ref)}")
    start = judge(task, task.starter_files(), sandbox=sandbox, split="hidden")
    if start.verdict == "accepted":
        raise HarborError(f"{ht.path}: the unchanged starting files already get reward 1: the verifier checks "
                          "nothing an agent must do")
    if "reference" not in task.solutions:
        return [f"verified: the unchanged starting files get {start.verdict} (no reference to check)"]
    return [f"verified: the reference gets reward 1, the unchanged starting files {start.verdict}"]


def _test_sh(ht: HarborTask) -> str:
    try:
        return (ht.path / "tests" / "test.sh").read_text(encoding="utf-8", errors="replace")[:1 << 20]
    except OSError:
        return ""


def _commit(stage: Path, out: Path, short: str) -> None:
    """Move a staged task (``short.yaml`` and ``short/``) into `out`, replacing an older one."""
    old = out / short
    trash = None
    if old.exists() or old.is_symlink():
        trash = Path(tempfile.mkdtemp(prefix=".codegym-old-", dir=out))
        os.replace(old, trash / short)
    os.replace(stage / short, out / short)
    os.replace(stage / f"{short}.yaml", out / f"{short}.yaml")
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def import_harbor(src: str | Path, out: str | Path, suite: str | None = None,
                  progress: Callable[[str], None] | None = None, pull: str = "auto",
                  build_network: bool | str = False,
                  build_timeout_s: float | None = None,
                  stand_in: Callable[[str], StandIn | None] | None = debian_stand_in,
                  client: Any = None, caps: FolderCaps = DEFAULT_CAPS, verify: bool = True) -> ImportResult:
    """Harbor folders under `src` -> a codegym suite folder `out` of repo tasks (see the
    module docstring). `pull`: one of `PULL_POLICIES`; `build_network`: the environment's
    build may reach the network (the user's choice: True / "bridge", Docker's default
    network; "host", the host's); `stand_in`: the maker of local
    stand-ins for images that cannot be had (default: Python and Debian bases from
    Debian's packages, `codegym.importers.harbor_bases`; None: none); `verify`: judge each task through the docker
    sandbox before it is kept (`verify_task`)."""
    if pull not in PULL_POLICIES:
        raise ValueError(f"pull must be one of {PULL_POLICIES}, not {pull!r}")
    out = Path(out)
    suite = suite or task_short_name(out.name)
    res = ImportResult(out=out)
    folders = find_task_folders(src)
    read: list[tuple[Path, HarborTask, str]] = []
    owner: dict[str, Path] = {}
    for folder in folders:                                   # 1: read and check
        try:
            ht = read_harbor_task(folder, caps)
            short = task_short_name(ht.name)
            if short in owner:
                raise HarborError(f"{folder / 'task.toml'}: task name {ht.name!r} is also the name of "
                                  f"{owner[short]}, imported first; this folder is not imported")
            owner[short] = folder
            read.append((folder, ht, short))
        except HarborError as e:
            res.failed.append((str(folder), str(e)))
    if not read:
        return res
    client = client or docker_or_error()
    planned = []
    for folder, ht, short in read:                           # 2: images, before any build
        try:
            planned.append((folder, ht, short, plan_environment(ht, client, pull=pull, stand_in=stand_in,
                                                                network=build_network)))
        except HarborError as e:
            res.failed.append((str(folder), str(e)))
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".codegym-import-", dir=out))
    docs = []
    # its own instance (closed below): the process-wide shared one may be in use by others
    sandbox = make_sandbox("docker", workers=os.cpu_count() or 1) if verify and planned else None
    try:
        for folder, ht, short, plan in planned:               # 3: build, stage
            try:
                doc, notes = _import_one(ht, plan, short, suite, stage, client, build_network, build_timeout_s,
                                         progress, sandbox)
            except HarborError as e:
                res.failed.append((str(folder), str(e)))
                shutil.rmtree(stage / short, ignore_errors=True)
                (stage / f"{short}.yaml").unlink(missing_ok=True)
                continue
            _commit(stage, out, short)                        # 4: move into place
            docs.append(doc)
            res.imported.append(doc["id"])
            res.notes[doc["id"]] = notes
            if progress:
                progress(doc["id"])
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        if sandbox is not None:
            sandbox.close()
    if docs or not (out / "suite.yaml").exists():
        _write_suite_yaml(out, suite, f"Harbor tasks imported from {Path(src).resolve().name}")
    res.failed.sort()
    return res


def _write_suite_yaml(out: Path, name: str, description: str) -> None:
    write_atomic(out / "suite.yaml", yaml.safe_dump({"suite": {"name": name, "description": description}},
                                                    sort_keys=False), mode=0o644)
