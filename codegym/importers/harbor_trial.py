"""Harbor-style trials in a task's container, and its ``solve.sh`` turned into files.

`run_trial` does what ``harbor run -a oracle`` does with one task on the Docker engine:
a container of the environment image with no network (Harbor's ``network_mode =
"no-network"`` tasks; codegym never gives one network), the working directory as its
current directory (``/`` when the environment sets none, as in Harbor); ``/logs/agent``
and ``/logs/verifier`` made writable by root; unless told
not to, ``solution/`` copied to ``/solution``, ``chmod +x`` of ``solve.sh`` **as root** and
``(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1`` (through ``bash -c``, as Harbor runs
every command) as the image's user with the task's
``[solution].env``; then the reward files removed, ``tests/`` copied to ``/tests``, ``chmod
+x`` of ``test.sh`` as root, ``(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1`` with
``[verifier].env``, and the reward read as Harbor's verifier reads it (``reward.json`` first:
numbers only, finite; else ``reward.txt``).

`run_solution` runs only the solution part and reads the working directory back
(`solution_changes`: the text files ``solve.sh`` added or changed are the imported task's
reference solution). An environment without a working directory (no ``WORKDIR``, no
``[environment].workdir``) is run as Harbor runs it, in ``/``; an agent in codegym needs a
directory of files, so the import gives it the one the task is about: where ``solve.sh``
writes (`choose_workdir`), else the home directory of the image's user (`home_dir`), never
a system directory (`usable_workdir`).
"""

from __future__ import annotations

import io
import itertools
import json
import math
import posixpath
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.importers.harbor_bases import stand_in as debian_stand_in
from codegym.importers.harbor_env import (
    EnvPlan,
    build_env_image,
    docker_or_error,
    plan_environment,
    read_workdir,
    realize_plan,
)
from codegym.importers.harbor_read import HarborError, HarborTask, check_tree, read_harbor_task

#: how long solve.sh may run when the task names no agent timeout
SOLVE_TIMEOUT_S = 1800.0


@dataclass
class TrialResult:
    """What a Harbor-style trial gave: the reward (None: no valid reward file, `error` says
    why), all reward keys, the verifier's files and the outputs of solve.sh and test.sh."""

    reward: float | None
    rewards: dict[str, float] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    solve_output: str = ""
    test_output: str = ""
    error: str = ""
    test_exit: int | None = None


def read_reward_files(files: dict[str, str]) -> tuple[dict[str, float], str]:
    """(rewards, error) from the verifier's files, as Harbor's `Verifier` parses them."""
    if "reward.json" in files:
        try:
            data = json.loads(files["reward.json"])
        except ValueError as e:
            return {}, f"reward.json: not JSON: {e}"
        values = data if isinstance(data, dict) else {"reward": data}
        for k, v in values.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                return {}, f"reward.json: {k}: not a finite number ({v!r}): Harbor rejects it"
        return {str(k): float(v) for k, v in values.items()}, ""
    if "reward.txt" in files:
        try:
            value = float(files["reward.txt"].strip())
        except ValueError:
            return {}, f"reward.txt: not a number: {files['reward.txt'][:60]!r}"
        if not math.isfinite(value):
            return {}, "reward.txt: not a finite number"
        return {"reward": value}, ""
    return {}, "the verifier wrote no reward file (reward.json or reward.txt)"


def _tar_dir(src: Path, arcname: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.add(str(src), arcname=arcname)
    return buf.getvalue()


def _tar_files(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for rel, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(rel)
            info.size, info.mode = len(data), 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


#: the shell Harbor runs a task's commands with: ``bash -c`` (its Unix environments' exec
#: wrapper), so a solve.sh or test.sh without a ``#!`` line runs under bash; sh where an
#: image has no bash
HARBOR_SHELL = '"$(command -v bash || echo /bin/sh)"'


def harbor_shell(script: str) -> list[str]:
    """argv running `script` as Harbor runs a command in the task's container (`HARBOR_SHELL`)."""
    return ["sh", "-c", f'exec {HARBOR_SHELL} -c "$1"', "harbor", script]


def _exec_rc(c: Any, script: str, workdir: str, timeout_s: float, user: str = "",
             env: dict | None = None) -> tuple[int | None, str]:
    r = c.exec_run(["timeout", "-k", "5", str(max(1, int(timeout_s))), *harbor_shell(script)], workdir=workdir,
                   user=user, environment=env or None)
    return r.exit_code, (r.output or b"").decode("utf-8", "replace")


def _exec(c: Any, script: str, workdir: str, timeout_s: float, user: str = "", env: dict | None = None) -> str:
    return _exec_rc(c, script, workdir, timeout_s, user, env)[1]


def _gone(c: Any) -> str:
    """Why the trial container is no longer running ('' when it runs)."""
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    try:
        c.reload()
    except docker.errors.NotFound:
        return "the trial container is gone (stopped or removed from outside during the trial)"
    state = c.attrs.get("State") or {}
    if state.get("Running"):
        return ""
    return (f"the trial container stopped during the trial (exit {state.get('ExitCode')}, "
            f"OOM-killed: {bool(state.get('OOMKilled'))})")


def _as_root(c: Any, script: str) -> None:
    c.exec_run(["sh", "-c", script], user="root")


def _container(client: Any, tag: str, ht: HarborTask, life_s: float) -> Any:
    # it lives no longer than the trial may (solve + verify): a trial whose owner died does not
    # leave its container behind (auto-removed when the sleep ends)
    return client.containers.run(tag, ["sleep", str(int(life_s))], detach=True, network_mode="none",
                                 auto_remove=True, labels={"codegym.harbor": "trial"},
                                 mem_limit=f"{max(512, ht.memory_mb)}m", entrypoint=[])


def _remove(c: Any) -> None:
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    try:
        c.remove(force=True)
    except docker.errors.APIError:  # already gone, or its auto-removal under way
        pass


def _solve_timeout(ht: HarborTask) -> float:
    agent = ht.config.get("agent") if isinstance(ht.config.get("agent"), dict) else {}
    return float(agent.get("timeout_sec") or SOLVE_TIMEOUT_S)


def _run_solution(c: Any, ht: HarborTask, workdir: str) -> str:
    c.put_archive("/", _tar_dir(check_tree(ht.path, "solution"), "solution"))
    _as_root(c, "mkdir -p /logs/agent && chmod 777 /logs/agent && chmod +x /solution/solve.sh")
    return _exec(c, "(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1; cat /logs/agent/oracle.txt", workdir,
                 _solve_timeout(ht), env={"DEBIAN_FRONTEND": "noninteractive", **ht.solution_env})


def run_trial(folder: str | Path, solve: bool = True, files: dict[str, str] | None = None,
              client: Any = None, plan: EnvPlan | None = None) -> TrialResult:
    """A Harbor-style trial of the task in `folder` (see the module docstring). `files`
    are written into the working directory first (an agent's work)."""
    ht = read_harbor_task(folder)
    client = client or docker_or_error()
    plan = plan or plan_environment(ht, client, pull="no", stand_in=debian_stand_in)
    realize_plan(plan, client)
    env = build_env_image(ht, plan, client)
    tag, workdir = env.tag, env.workdir or "/"
    c = _container(client, tag, ht, _solve_timeout(ht) + ht.verifier_timeout_s + 120)
    try:
        res = TrialResult(None)
        if files:
            c.put_archive(workdir, _tar_files(files))
        if solve:
            if not ht.has_solution:
                raise HarborError(f"{ht.path}: no solution/solve.sh")
            res.solve_output = _run_solution(c, ht, workdir)
        _as_root(c, "mkdir -p /logs/verifier && chmod 777 /logs/verifier && rm -f /logs/verifier/reward.txt "
                    "/logs/verifier/reward.json")
        c.put_archive("/", _tar_dir(check_tree(ht.path, "tests"), "tests"))
        _as_root(c, "chmod +x /tests/test.sh")
        res.test_exit, res.test_output = _exec_rc(
            c, "(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1; rc=$?; cat /logs/verifier/test-stdout.txt; "
               "exit $rc", workdir, ht.verifier_timeout_s, user=ht.verifier_user or "",
            env={"TEST_DIR": "/tests", **ht.verifier_env})
        gone = _gone(c)
        if gone:
            raise HarborError(f"{ht.path}: {gone}; test.sh exit {res.test_exit}: {res.test_output[-300:]}")
        stream, _ = c.get_archive("/logs/verifier/.")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tf:
            for m in tf.getmembers():
                if m.isfile() and m.size <= 16 << 20:
                    res.files[m.name.split("/", 1)[-1]] = tf.extractfile(m).read().decode("utf-8", "replace")
        res.rewards, res.error = read_reward_files(res.files)
        res.reward = res.rewards.get("reward") if res.rewards else None
        if res.rewards and res.reward is None:
            res.error = "reward.json has no 'reward' key"
        if res.error:
            timed_out = res.test_exit in (124, 137)
            res.error += (f" (test.sh exit {res.test_exit}" + (f": stopped at the verifier timeout of "
                                                               f"{ht.verifier_timeout_s:g} s?" if timed_out else "")
                          + ")")
        return res
    finally:
        _remove(c)


@dataclass
class SolutionRun:
    """``solve.sh`` run once as Harbor's oracle runs it: the working directory read back
    (`workdir`; chosen from what it wrote when the environment sets none), its text files
    after the run, what stayed in the image (not text within the caps), its output, notes."""

    workdir: str
    after: dict[str, bytes]
    kept: list[str]
    output: str
    notes: list[str] = field(default_factory=list)


def run_solution(ht: HarborTask, env_tag: str, workdir: str | None, client: Any) -> SolutionRun:
    """Run ``solve.sh`` in a container of `env_tag` in `workdir` -- or, when the environment
    sets none (`workdir` None), in ``/`` as Harbor does, the working directory then being the
    directory that holds what it wrote (`choose_workdir`) -- and read the working directory back."""
    c = _container(client, env_tag, ht, _solve_timeout(ht) + 120)
    try:
        out = _run_solution(c, ht, workdir or "/")
        notes = []
        if workdir is None:
            workdir, notes = choose_workdir(ht, c.diff() or [], out)
        copy, after = read_workdir(c, workdir, None)
    finally:
        _remove(c)
    return SolutionRun(workdir, after, [p for p, _, why in copy.kept if why != "a link"], out, notes)


def solution_changes(run: SolutionRun, base: dict[str, bytes]) -> tuple[dict[str, str], list[str]]:
    """({path: text} that ``solve.sh`` added or changed in the working directory against
    `base` (the image's), notes)."""
    after = run.after
    changed = {p: d.decode("utf-8") for p, d in after.items() if base.get(p) != d}
    notes = list(run.notes)
    gone = sorted(set(base) - set(after))
    if gone:
        notes.append(f"solve.sh deletes {len(gone)} file(s) ({', '.join(gone[:3])}): a codegym solution "
                     "cannot delete files")
    if run.kept:
        notes.append(f"solve.sh leaves {len(run.kept)} file(s) that are not text within the caps "
                     f"({', '.join(run.kept[:3])})")
    if not changed:
        tail = run.output.strip().splitlines()[-1:] if run.output.strip() else []
        notes.append("solve.sh changed no text file of the working directory" + (f" (its last line: {tail[0][:120]})"
                                                                                 if tail else ""))
    return changed, notes


#: directories the sandbox and the verifier need: never a working directory, nor inside one
RESERVED_DIRS = ("/proc", "/sys", "/dev", "/run", "/tmp", "/logs", "/tests", "/solution", "/box",
                 "/opt/codegym-harbor")
#: the system's directories: an environment's WORKDIR may lie inside one (``/usr/src/app``); a
#: working directory codegym chooses for an environment that sets none may not
SYSTEM_DIRS = ("/bin", "/boot", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/sbin", "/usr", "/var")


def usable_workdir(path: str, inside_system: bool = True) -> bool:
    """Whether `path` can be an agent's working directory (the judge image replaces it by a
    link to the run's files): absolute and plain, neither ``/`` nor a directory of
    `RESERVED_DIRS` / `SYSTEM_DIRS` nor above one, not inside a reserved one (nor inside a
    system one unless `inside_system`)."""
    if not re.fullmatch(r"(/[A-Za-z0-9._-]+)+", path) or {".", ".."} & set(path.split("/")):
        return False
    inside = RESERVED_DIRS if inside_system else RESERVED_DIRS + SYSTEM_DIRS
    return not any(d == path or d.startswith(path + "/") for d in RESERVED_DIRS + SYSTEM_DIRS) and \
        not any(path.startswith(d + "/") for d in inside)


def choose_workdir(ht: HarborTask, diff: list[dict], output: str) -> tuple[str, list[str]]:
    """The working directory of a task whose environment sets none, from the changes of the
    container ``solve.sh`` ran in (Docker's diff: added / changed paths): the deepest
    directory holding every path it added or changed outside the system's directories and
    hidden folders (caches such as ``/root/.cache``). HarborError when there is none."""
    paths = sorted({str(d.get("Path") or "") for d in diff if d.get("Kind") in (0, 1)})
    leaves = [p for i, p in enumerate(paths) if p and not (i + 1 < len(paths) and paths[i + 1].startswith(p + "/"))]
    hidden = [p for p in leaves if any(part.startswith(".") for part in p.split("/"))]
    mine = [p for p in leaves if p not in hidden and usable_workdir(p.rsplit("/", 1)[0] or "/", False)]
    system = [p for p in leaves if p not in hidden and p not in mine and not p.startswith(("/solution/", "/logs/",
                                                                                           "/tmp/"))]
    where = ht.path / "solution" / "solve.sh"
    common = posixpath.commonpath([p.rsplit("/", 1)[0] or "/" for p in mine]) if mine else ""
    if not common or not usable_workdir(common, False):
        what = ", ".join(mine[:4] or system[:4]) or "nothing"
        tail = output.strip().splitlines()[-1:] if output.strip() else []
        raise HarborError(f"{where}: the environment sets no WORKDIR (Harbor runs the task in /) and what solve.sh "
                          f"writes ({what}) has no common directory outside the system's that an agent could work in"
                          + (f" (its last line: {tail[0][:120]})" if tail else ""))
    notes = [f"the environment sets no WORKDIR: Harbor runs the task in /; solve.sh (run there) writes in "
             f"{common}, which is the agent's working directory here (the statement says so)"]
    if system:
        notes.append(f"solve.sh also changes {len(system)} path(s) outside it ({', '.join(system[:3])}), which a "
                     "codegym solution cannot carry")
    return common, notes


def home_dir(client: Any, tag: str) -> str:
    """The home directory of image `tag`'s user (its ``/etc/passwd``, read without running
    anything; ``/root`` for root). HarborError when it cannot be told."""
    import docker.errors  # noqa: PLC0415 -- optional dependency (codegym[docker])
    user = ((client.images.get(tag).attrs.get("Config") or {}).get("User") or "root").split(":", 1)[0]
    if user in ("", "root", "0"):
        return "/root"
    c = client.containers.create(tag, command=["true"], network_disabled=True, labels={"codegym.harbor": "read"})
    try:
        stream, _ = c.get_archive("/etc/passwd", chunk_size=1 << 16)
        data = b"".join(itertools.islice(stream, 16))
        with tarfile.open(fileobj=io.BytesIO(data)) as tf:
            m = tf.next()
            text = tf.extractfile(m).read(1 << 20).decode("utf-8", "replace") if m and m.isfile() else ""
    except (docker.errors.APIError, tarfile.TarError):
        text = ""
    finally:
        _remove(c)
    for line in text.splitlines():
        f = line.split(":")
        if len(f) >= 6 and user in (f[0], f[2]):
            return f[5]
    raise HarborError(f"image {tag}: the home directory of its user {user!r} cannot be told")
