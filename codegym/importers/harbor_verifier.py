"""The verifier of an exported Harbor task: codegym's judge on ``/app``, with processes as its sandbox.

Exported tasks (`codegym.importers.harbor`) copy this file to ``tests/codegym_verify.py``
and, next to it, the judge's own stdlib-only modules (``tests/codegym/``: the test
kinds, checkers, drivers, the verdict rule, the run records; `VENDORED`), so the
container needs only ``python3``. ``tests/test.sh`` runs::

    python3 /tests/codegym_verify.py --task /tests/codegym_task.json --workdir /app --out /logs/verifier

It judges the files of ``--workdir`` on the task's materialised hidden cases exactly as
`codegym.judge.judge` does, with the judge's own steps (no code and compile errors:
`source_verdict`; the kind: its runner in `codegym.judge.kinds.table.PROGRAM_KIND_RUNNERS`;
the verdict rule: `case_verdict`), running each program as a child process (`ProcessSandbox`: its own
directory, rlimits, a wall-clock deadline, as ``nobody`` when the verifier is root) and
writes ``reward.json`` / ``reward.txt`` (1 when accepted, else 0; pass fraction and
counts in ``reward.json``), ``judge.json`` (the full report) and ``ctrf.json`` (one
entry per test). A ``sandbox_error`` verdict writes no reward: Harbor then reports a
verifier failure rather than charging the program. On the host this module imports the
real codegym modules (so tests can run it without a container).
"""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from codegym.core.languages import get_language
from codegym.core.limits import COMPILE_LIMITS, Limits
from codegym.judge.kinds.table import PROGRAM_KIND_RUNNERS
from codegym.judge.protocol import decode_value
from codegym.judge.report import JudgeReport, case_verdict
from codegym.judge.run import checker_tag, source_verdict
from codegym.judge.testgen import Case
from codegym.sandbox.classify import RawOutcome, classify
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox

NOBODY = 65534
#: the task's hidden cases and settings, written by the exporter
TASK_FILE = "codegym_task.json"


def _limit(which: int, soft: int, hard: int) -> None:
    """setrlimit, never above the limits the verifier itself runs under (a sandbox's)."""
    _, cap = resource.getrlimit(which)
    if cap != resource.RLIM_INFINITY:
        soft, hard = min(soft, cap), min(hard, cap)
    resource.setrlimit(which, (soft, hard))


def _preexec(limits: Limits, spec: Any, drop: bool) -> Callable[[], None]:
    def setup() -> None:
        os.setsid()
        cpu = int(limits.time_s) + 1
        _limit(resource.RLIMIT_CPU, cpu, cpu + 1)
        _limit(resource.RLIMIT_CORE, 0, 0)
        fsize = int(getattr(limits, "file_size_mb", 64) or 64) << 20
        _limit(resource.RLIMIT_FSIZE, fsize, fsize)
        if getattr(spec, "limit_address_space", True):
            mem = (int(limits.memory_mb) + int(getattr(spec, "as_overhead_mb", 0) or 0)) << 20
            _limit(resource.RLIMIT_AS, mem, mem)
        if drop:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
    return setup


def _reader(stream, cap: int, out: list[bytes], flags: dict[str, bool], key: str, proc_kill) -> None:
    size = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            return
        size += len(chunk)
        if size > cap:
            out.append(chunk[:max(0, cap - (size - len(chunk)))])
            flags[key] = True
            proc_kill("output")
            return
        out.append(chunk)


class ProcessSandbox(Sandbox):
    """codegym's `Sandbox` interface with plain child processes (inside the task's container)."""

    isolation = "process"

    def __init__(self, workers: int | None = None):
        self.workers = max(1, min(4, workers or os.cpu_count() or 1))
        self.workdir = tempfile.mkdtemp(prefix="codegym-verify-")
        self.drop = os.geteuid() == 0
        os.chmod(self.workdir, 0o755)

    def build(self, language: str, files: Mapping[str, str | bytes], limits: Limits | None = None) -> Build:
        spec = get_language(language)
        data = {p: (c.encode("utf-8") if isinstance(c, str) else bytes(c)) for p, c in files.items()}
        key = hashlib.sha256(json.dumps(sorted((p, c.hex()) for p, c in data.items())).encode()).hexdigest()
        d = tempfile.mkdtemp(prefix="build-", dir=self.workdir)
        _lay_out(d, data)
        b = Build(language=spec.name, key=key, ok=True, files=data, artifacts=d)
        if spec.compiled:
            lim = limits or COMPILE_LIMITS
            r = self._exec(spec.compile_argv(lim.memory_mb), d, b"", lim, spec, phase="compile", drop=False)
            b.result, b.ok = r, r.status == "ok"
        for dirpath, _dirs, names in os.walk(d):   # runs link these files: readable, not writable, by them
            os.chmod(dirpath, 0o755)
            for n in names:
                full = os.path.join(dirpath, n)
                if not os.path.islink(full):
                    os.chmod(full, (os.stat(full).st_mode & 0o111 and 0o755) or 0o644)
        return b

    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        spec = get_language(build.language)
        lim = limits or Limits()
        d = tempfile.mkdtemp(prefix="run-", dir=self.workdir)
        try:
            # the build's files are hard-linked, never copied: a copy holds the executable open
            # for writing while another thread forks, and the child's copy of that descriptor
            # makes this run's exec fail with ETXTBSY ("Text file busy": a sandbox_error, no
            # reward -- the cause of a Harbor trial's reward None on a loaded machine)
            linked = _link_tree(build.artifacts, d)
            _lay_out(d, {p: (c.encode("utf-8") if isinstance(c, str) else bytes(c))
                         for p, c in (extra_files or {}).items()})
            if self.drop:   # the run's own files and folders; the linked build files stay root's, read-only
                for dirpath, _dirs, names in os.walk(d):
                    os.chown(dirpath, NOBODY, NOBODY)
                    for n in names:
                        full = os.path.join(dirpath, n)
                        if full not in linked:
                            os.chown(full, NOBODY, NOBODY)
            data = stdin.encode("utf-8") if isinstance(stdin, str) else bytes(stdin)
            return self._exec([*spec.run_argv(lim.memory_mb), *argv], d, data, lim, spec, drop=self.drop)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def run_many(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None = None,
                 stop: Callable[[int, ExecResult], bool] | None = None) -> list[ExecResult | None]:
        return self._run_many_threads(build, requests, limits, stop, self.workers)

    def _exec(self, argv: list[str], cwd: str, stdin: bytes, lim: Limits, spec: Any, phase: str = "run",
              drop: bool = False) -> ExecResult:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": cwd, **dict(spec.env or {})}
        t0 = time.monotonic()
        for attempt in range(6):
            try:
                proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, preexec_fn=_preexec(lim, spec, drop))
                break
            except OSError as e:
                if e.errno == errno.ETXTBSY and attempt < 5:   # a write descriptor another fork still holds
                    time.sleep(0.02 * (attempt + 1))
                    continue
                raw = RawOutcome(None, None, 0.0, 0.0, 0, exec_error=f"cannot run {argv[0]}: {e}")
                return classify(raw, b"", b"", lim, phase)
        killed: list[str] = []

        def kill(why: str) -> None:
            if not killed:
                killed.append(why)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        out: list[bytes] = []
        err: list[bytes] = []
        flags = {"out": False, "err": False}
        readers = [threading.Thread(target=_reader, args=(proc.stdout, lim.output_bytes, out, flags, "out", kill)),
                   threading.Thread(target=_reader, args=(proc.stderr, lim.output_bytes, err, flags, "err", kill))]
        for t in readers:
            t.start()
        timer = threading.Timer(lim.wall(), kill, ("wall",))
        timer.start()
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = 0  # reaped here (wait4 gives the rusage Popen.wait does not)
        timer.cancel()
        kill("")  # the rest of the process group
        for t in readers:
            t.join()
        raw = RawOutcome(exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                         signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                         cpu_s=ru.ru_utime + ru.ru_stime, wall_s=time.monotonic() - t0, maxrss_kb=ru.ru_maxrss,
                         killed=killed[0] if killed and killed[0] else None, out_trunc=flags["out"],
                         err_trunc=flags["err"])
        return classify(raw, b"".join(out), b"".join(err), lim, phase)

    def close(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)


def _lay_out(d: str, files: Mapping[str, bytes]) -> None:
    for rel, data in files.items():
        if rel.startswith("/") or ".." in rel.split("/"):
            continue
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)          # never write through a link into the build's files
        with open(path, "wb") as f:
            f.write(data)


def _link_tree(src: str, dst: str) -> set[str]:
    """Hard-link every file of `src` into `dst` (a copy where linking fails); the paths linked."""
    linked = set()
    for dirpath, _dirs, names in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        target = os.path.normpath(os.path.join(dst, rel))
        os.makedirs(target, exist_ok=True)
        for n in names:
            a, b = os.path.join(dirpath, n), os.path.join(target, n)
            if os.path.lexists(b):
                os.unlink(b)
            try:
                os.link(a, b, follow_symlinks=False)
                linked.add(b)
            except OSError:
                shutil.copy2(a, b, follow_symlinks=False)
    return linked


# --------------------------------------------------------------------------- the judge


def load_task(path: str) -> tuple[Any, list[Case]]:
    """(task view, hidden cases) from the exporter's JSON."""
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    main_file = spec["main_file"]
    task = SimpleNamespace(id=spec["id"], kind=spec["kind"], language=spec["language"],
                           entry_point=spec.get("entry_point"), checker=spec.get("checker"),
                           limits=Limits(**spec["limits"]), preamble=spec.get("preamble"),
                           content_hash=spec.get("content_hash", ""), main_file_for=lambda lang=None: main_file)
    cases = []
    for c in spec["cases"]:
        c = dict(c)
        for k in ("expected", "args", "kwargs"):
            if c.get(k) is not None:
                c[k] = decode_value(c[k])
        cases.append(Case(**c))
    return task, cases


def read_workdir(workdir: str) -> dict[str, str | bytes]:
    """The candidate's files: every regular file under `workdir` (symlinks not followed)."""
    files: dict[str, str | bytes] = {}
    for dirpath, dirs, names in os.walk(workdir):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(dirpath, d)) and d != "__pycache__"]
        for n in names:
            full = os.path.join(dirpath, n)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            with open(full, "rb") as f:
                data = f.read()
            rel = os.path.relpath(full, workdir).replace(os.sep, "/")
            try:
                files[rel] = data.decode("utf-8")
            except UnicodeDecodeError:
                files[rel] = data
    return files


def judge_files(task: Any, cases: list[Case], files: Mapping[str, str | bytes], sandbox: Sandbox) -> JudgeReport:
    """`codegym.judge.judge` on the hidden split, for the kinds of `PROGRAM_KIND_RUNNERS`: the
    host's source checks (`source_verdict`), then the task's kind run by the judge's own
    table entry, and the verdict rule (`case_verdict`) once."""
    t0 = time.monotonic()
    lang, kind = task.language, task.kind
    runner = PROGRAM_KIND_RUNNERS.get(kind)
    if runner is None:
        raise ValueError(f"the exported verifier does not judge {kind!r} tasks")
    main_file = task.main_file_for(lang)
    head: dict[str, Any] = {"task_id": task.id, "task_hash": task.content_hash, "split": "hidden",
                            "language": lang, "checker": checker_tag(task, kind)}
    decided = source_verdict(files, main_file, lang)
    if decided is None:
        out = runner.run(task, files, cases, sandbox, language=lang, main_file=main_file, early_exit=False)
        decided = out.decided
    if decided is not None:
        return JudgeReport(passed=0, total=len(cases), **head, **decided.fields(),
                           elapsed_s=time.monotonic() - t0)
    rep = JudgeReport(**head, **case_verdict(out.results, cases))
    rep.elapsed_s = time.monotonic() - t0
    return rep


def write_results(rep: JudgeReport, out: str) -> None:
    """reward.json / reward.txt (not on sandbox_error), judge.json and ctrf.json in `out`."""
    os.makedirs(out, exist_ok=True)
    d = rep.to_dict()
    with open(os.path.join(out, "judge.json"), "w", encoding="utf-8") as f:
        json.dump(d, f, indent=1, default=str)
    tests = [{"name": c.name, "status": {"passed": "passed", "skipped": "skipped"}.get(c.status, "failed"),
              "duration": int(1000 * (c.wall_s or 0.0)), "message": c.message or c.status}
             for c in rep.cases]
    summary = {"tests": len(tests), "passed": sum(t["status"] == "passed" for t in tests),
               "failed": sum(t["status"] == "failed" for t in tests),
               "skipped": sum(t["status"] == "skipped" for t in tests), "pending": 0, "other": 0}
    with open(os.path.join(out, "ctrf.json"), "w", encoding="utf-8") as f:
        json.dump({"results": {"tool": {"name": "codegym"}, "summary": summary, "tests": tests}}, f, indent=1)
    if rep.verdict == "sandbox_error":
        return
    reward = 1.0 if rep.verdict == "accepted" else 0.0
    fraction = rep.passed / rep.total if rep.total else 0.0
    with open(os.path.join(out, "reward.json"), "w", encoding="utf-8") as f:
        json.dump({"reward": reward, "pass_fraction": fraction, "passed": rep.passed, "total": rep.total}, f)
    with open(os.path.join(out, "reward.txt"), "w", encoding="utf-8") as f:
        f.write(f"{reward:g}\n")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="codegym's judge on a Harbor task's working directory")
    ap.add_argument("--task", required=True)
    ap.add_argument("--workdir", default="/app")
    ap.add_argument("--out", default="/logs/verifier")
    a = ap.parse_args(argv)
    task, cases = load_task(a.task)
    sandbox = ProcessSandbox()
    try:
        rep = judge_files(task, cases, read_workdir(a.workdir), sandbox)
    finally:
        sandbox.close()
    write_results(rep, a.out)
    print(f"codegym verdict: {rep.verdict} ({rep.passed}/{rep.total} tests passed)"
          + (f": {rep.message}" if rep.message else ""))
    return 2 if rep.verdict == "sandbox_error" else 0


if __name__ == "__main__":
    sys.exit(main())
