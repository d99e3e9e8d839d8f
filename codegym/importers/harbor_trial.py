"""Harbor-style trials in a task's container, and its ``solve.sh`` turned into files.

`run_trial` does what ``harbor run -a oracle`` does with one task on the Docker engine:
a container of the environment image with no network (Harbor's ``network_mode =
"no-network"`` tasks; codegym never gives one network), the working directory as its
current directory; ``/logs/agent`` and ``/logs/verifier`` made writable by root; unless told
not to, ``solution/`` copied to ``/solution``, ``chmod +x`` of ``solve.sh`` **as root** and
``(/solution/solve.sh) > /logs/agent/oracle.txt 2>&1`` as the image's user with the task's
``[solution].env``; then the reward files removed, ``tests/`` copied to ``/tests``, ``chmod
+x`` of ``test.sh`` as root, ``(/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1`` with
``[verifier].env``, and the reward read as Harbor's verifier reads it (``reward.json`` first:
numbers only, finite; else ``reward.txt``).

`capture_solution` runs only the solution part and reads the working directory back: the
text files ``solve.sh`` added or changed are the imported task's reference solution.
"""

from __future__ import annotations

import io
import json
import math
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

__all__ = ["TrialResult", "run_trial", "capture_solution", "read_reward_files", "SOLVE_TIMEOUT_S"]

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


def _exec_rc(c: Any, script: str, workdir: str, timeout_s: float, user: str = "",
             env: dict | None = None) -> tuple[int | None, str]:
    r = c.exec_run(["timeout", "-k", "5", str(max(1, int(timeout_s))), "sh", "-c", script], workdir=workdir,
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
    tag, workdir = build_env_image(ht, plan, client)
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


def capture_solution(ht: HarborTask, env_tag: str, workdir: str, base: dict[str, bytes],
                     client: Any) -> tuple[dict[str, str], list[str]]:
    """({path: text} that ``solve.sh`` added or changed in the working directory, notes)."""
    c = _container(client, env_tag, ht, _solve_timeout(ht) + 120)
    try:
        out = _run_solution(c, ht, workdir)
        copy, after = read_workdir(c, workdir, None)
    finally:
        _remove(c)
    changed = {p: d.decode("utf-8") for p, d in after.items() if base.get(p) != d}
    notes = []
    gone = sorted(set(base) - set(after))
    if gone:
        notes.append(f"solve.sh deletes {len(gone)} file(s) ({', '.join(gone[:3])}): a codegym solution "
                     "cannot delete files")
    kept = [p for p, _, why in copy.kept if why != "a link"]
    if kept:
        notes.append(f"solve.sh leaves {len(kept)} file(s) that are not text within the caps ({', '.join(kept[:3])})")
    if not changed:
        tail = out.strip().splitlines()[-1:] if out.strip() else []
        notes.append("solve.sh changed no text file of the working directory" + (f" (its last line: {tail[0][:120]})"
                                                                                 if tail else ""))
    return changed, notes
