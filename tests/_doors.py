"""Attacks on the doors where strangers' data comes in (issue 28), each run as the user would run it.

`ATTACKS` lists them: the door (``codegym import FILE``, ``codegym replay FILE``, ``codegym
eval CONFIG``, ``codegym synthesize CONFIG``, ``codegym tasks validate DIR``), the attack
class of issue 28, a writer that lays the hostile input out in a fresh folder next to a
host file holding `SECRET` and returns the command's arguments, and what the one line
naming the bad item must say. `run_attack` runs ``python -m codegym ARGS`` in a child
process (start-up included) with a time bound and an address-space safety net, and
returns what happened: exit status, output, seconds, the child's peak memory (max RSS),
whether it hung, whether the sentinel file was written, whether the secret appears in
the output or in any file written. Shared by tests/fuzz/test_fuzz_doors.py and
benchmarks/untrusted_doors.py (which runs them against another checkout too: `code`).
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import pickle
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: the content of a host file no output may ever hold
SECRET = "CODEGYM-DOORS-" + "SECRET-5e1f0c"
#: the address space a child may take (a safety net: a bomb must not take the machine down)
AS_LIMIT = 6 << 30


@dataclass(frozen=True)
class Attack:
    """One attack: `write(root)` lays it out under `root` and returns ``codegym`` arguments;
    `expect`: text the output must hold (the one line naming the bad item); `ok_rc`: the
    exit statuses that mean "refused cleanly" (1 or 2 when the whole input is refused, 0 when
    the rest of a batch went on); `mem_mb`: the child's peak memory bound; `needs`: "bwrap"
    when it runs programs in the sandbox."""

    name: str
    door: str
    klass: str
    write: Callable[[Path], list[str]]
    expect: str
    ok_rc: tuple[int, ...] = (0,)
    mem_mb: int = 400
    needs: str = ""
    serve: bool = False   # a model server the config may name runs (its requests' headers are checked)


@dataclass
class Outcome:
    rc: int | None
    out: str
    seconds: float
    peak_mb: float
    hung: bool = False
    sentinel: bool = False
    leaked: list[str] = field(default_factory=list)

    def summary(self, expect: str = "") -> str:
        """One line: what happened (a hang, a traceback, the line holding `expect`, or the
        output's decisive line)."""
        if self.hung:
            return "HANG (killed)"
        if "Traceback (most recent call last)" in self.out:
            last = [ln for ln in self.out.strip().splitlines() if ln.strip()][-1]
            return f"TRACEBACK {last.strip()[:140]}"
        lines = [ln.strip() for ln in self.out.splitlines() if ln.strip()]
        decisive = [ln for ln in lines if "skipped line" in ln or "skipped record" in ln or "ERROR" in ln
                    or ln.startswith("error") or "not a regular file" in ln]
        pick = next((ln for ln in lines if expect and expect in ln), None) or next(iter(decisive), None) \
            or (lines[-1] if lines else "")
        return f"rc={self.rc}: {pick[:150]}"


# --------------------------------------------------------------------------- records


def _he(task_id: str = "HumanEval/0", **kw) -> dict:
    rec = {"task_id": task_id, "prompt": "def f():\n", "entry_point": "f", "canonical_solution": "    return 1\n",
           "test": "def check(c):\n    assert c() == 1\n"}
    rec.update(kw)
    return rec


def _lcb(qid: str, **kw) -> dict:
    rec = {"question_id": qid, "question_title": qid, "question_content": f"Print 1 ({qid}).",
           "platform": "atcoder", "contest_date": "2024-01-01T00:00:00", "difficulty": "easy", "starter_code": "",
           "public_test_cases": json.dumps([{"input": "1\n", "output": "1\n", "testtype": "stdin"}]),
           "private_test_cases": "[]", "metadata": "{}"}
    rec.update(kw)
    return rec


def _leetcode(task_id: str, **kw) -> dict:
    prompt = ('"""\nReturn x.\n\nExample 1:\nInput: x = 1\nOutput: 1\n"""\n'
              "class Solution:\n    def f(self, x: int) -> int:\n        ")
    test = 'my_solution = Solution()\ntest_input = { "x": 1 }\nassert my_solution.f(**test_input) == 1\n'
    rec = {"task_id": task_id, "prompt": prompt, "test": test, "meta": {"title": task_id, "difficulty": "Easy"},
           "start_time": 1700000000}
    rec.update(kw)
    return rec


def _pickled(blob: bytes) -> str:
    return base64.b64encode(zlib.compress(blob)).decode()


def _jsonl(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


_BOMB: dict[str, bytes] = {}


def _deflate_bomb(kind: str, mb: int = 500) -> bytes:
    """`mb` MB of spaces, gzip or zlib compressed (about 0.5 MB), made once per process."""
    if kind not in _BOMB:
        chunk = b" " * (1 << 20)
        if kind == "gzip":
            buf = io.BytesIO()
            with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as f:
                f.write(json.dumps(_he()).encode() + b"\n")
                for _ in range(mb):
                    f.write(chunk)
                f.write(b"\n")
            _BOMB[kind] = buf.getvalue()
        else:
            c = zlib.compressobj(9)
            head = pickle.dumps('[{"input": "1\\n", "output": "1\\n", "testtype": "stdin", "pad": "')
            parts = [c.compress(head[:-1])]   # (not a valid pickle at the end: the size is the point)
            parts += [c.compress(chunk) for _ in range(mb)]
            parts.append(c.flush())
            _BOMB[kind] = b"".join(parts)
    return _BOMB[kind]


# --------------------------------------------------------------------------- the attacks


def _import(root: Path, name: str, records: list, *extra: str) -> list[str]:
    return ["import", str(_jsonl(root / name, records)), "--out", str(root / "out"), "--no-verify", *extra]


def gzip_bomb(root: Path) -> list[str]:
    (root / "bomb.jsonl.gz").write_bytes(_deflate_bomb("gzip"))
    return ["import", str(root / "bomb.jsonl.gz"), "--out", str(root / "out"), "--no-verify"]


def lcb_zlib_bomb(root: Path) -> list[str]:
    return _import(root, "lcb.jsonl", [_lcb("q-bomb", private_test_cases=base64.b64encode(
        _deflate_bomb("zlib")).decode()), _lcb("q-good")])


def lcb_pickle_4_bytes(root: Path) -> list[str]:
    return _import(root, "lcb.jsonl", [_lcb("q-pickle", private_test_cases=_pickled(b"}}b.")), _lcb("q-good")])


def lcb_pickle_command(root: Path) -> list[str]:
    class Touch:
        def __reduce__(self):
            return (os.system, (f"touch {root / 'SENTINEL'}",))
    return _import(root, "lcb.jsonl", [_lcb("q-rce", private_test_cases=_pickled(pickle.dumps(Touch()))),
                                       _lcb("q-good")])


def lcb_deep_field(root: Path) -> list[str]:
    return _import(root, "lcb.jsonl", [_lcb("q-deep", public_test_cases="[" * 100_000 + "]" * 100_000),
                                       _lcb("q-good")])


def deep_line(root: Path) -> list[str]:
    return _import(root, "he.jsonl", [_he(), "[" * 100_000 + "]" * 100_000])


def nested_500(root: Path) -> list[str]:
    deep: list = []
    for _ in range(500):
        deep = [deep]
    return _import(root, "lc.jsonl", [_leetcode("weekly-1-a", url=deep), _leetcode("weekly-1-b")])


def inf_date(root: Path) -> list[str]:
    return _import(root, "lcb.jsonl", ['{"question_id": "q-inf", "question_content": "x", "public_test_cases": "[]", '
                                       '"contest_date": 1e400}', _lcb("q-good")])


def inf_start_time(root: Path) -> list[str]:
    return _import(root, "lc.jsonl", [_leetcode("weekly-1-a", start_time=float("inf")), _leetcode("weekly-1-b")])


def wrong_types(root: Path) -> list[str]:
    return _import(root, "he.jsonl", [_he("HumanEval/0", prompt=5), _he("HumanEval/1", canonical_solution=["x"]),
                                      _he("HumanEval/2")])


def lone_surrogate(root: Path) -> list[str]:
    return _import(root, "he.jsonl", [_he("HumanEval/0", prompt="def f():\n    '\ud800'\n"), _he("HumanEval/1")])


def same_name(root: Path) -> list[str]:
    return _import(root, "lcb.jsonl", [_lcb("a/b"), _lcb("a_b")])


def over_the_loader_cap(root: Path) -> list[str]:
    return _import(root, "lcb.jsonl", [_lcb("q-good"), _lcb("q-huge", question_content="x" * (5 << 20))])


def fifo_file(root: Path) -> list[str]:
    os.mkfifo(root / "pipe.jsonl")
    return ["import", str(root / "pipe.jsonl"), "--out", str(root / "out"), "--no-verify"]


def device_file(root: Path) -> list[str]:
    return ["import", "/dev/zero", "--out", str(root / "out"), "--no-verify"]


def out_not_a_suite(root: Path) -> list[str]:
    return ["import", str(_jsonl(root / "he.jsonl", [_he()])), "--out", str(root / "host"), "--no-verify"]


def _results(root: Path, records: list) -> Path:
    return _jsonl(root / "results.jsonl", records)


_EPISODE = {"kind": "episode", "task_id": "examples/bracket-depth", "verdict": "accepted", "key": "k1",
            "passed": 1, "total": 1}


def replay_fifo(root: Path) -> list[str]:
    os.mkfifo(root / "results.jsonl")
    return ["replay", str(root / "results.jsonl")]


def replay_deep(root: Path) -> list[str]:
    return ["replay", str(_results(root, ["[" * 100_000 + "]" * 100_000, "{}"]))]


def replay_files_escape(root: Path) -> list[str]:
    probe = (f"import os\ntry:\n    print(open({str(root / 'host' / 'secret.txt')!r}).read())\nexcept OSError:\n"
             f"    pass\ntry:\n    open({str(root / 'SENTINEL')!r}, 'w').write('x')\nexcept OSError:\n    pass\n")
    rec = dict(_EPISODE, final_files={"main.py": probe, "../../../../SENTINEL": "x",
                                      str(root / "SENTINEL"): "x"})
    return ["replay", str(_results(root, [rec])), "--suite", str(REPO / "tasks" / "examples")]


def eval_fifo(root: Path) -> list[str]:
    os.mkfifo(root / "eval.yaml")
    return ["eval", str(root / "eval.yaml"), "--out", str(root / "out"), "-q"]


def synth_fifo(root: Path) -> list[str]:
    os.mkfifo(root / "synth.yaml")
    return ["synthesize", str(root / "synth.yaml"), "--out", str(root / "out"), "-q"]


def _fifo_suite(root: Path) -> Path:
    s = root / "suite"
    s.mkdir()
    (s / "suite.yaml").write_text("suite: {description: attacks}\n")
    os.mkfifo(s / "pipe.yaml")
    os.mkfifo(s / "pipe.md")
    (s / "t.yaml").write_text("kind: stdio\nlanguage: python\nstatement: {file: pipe.md}\n"
                              "tests: {hidden: [{stdin: '1', expected: '1'}]}\n")
    return s


def eval_suite_fifo(root: Path) -> list[str]:
    s = _fifo_suite(root)
    (root / "eval.yaml").write_text(f"agents: [oracle]\nsuites:\n  - {{suite: {s}}}\n")
    return ["eval", str(root / "eval.yaml"), "--out", str(root / "out"), "-q"]


def validate_fifo(root: Path) -> list[str]:
    return ["tasks", "validate", str(_fifo_suite(root))]


IMPORT, REPLAY, EVAL, SYNTH, FOLDER = ("codegym import FILE", "codegym replay FILE", "codegym eval CONFIG",
                                        "codegym synthesize CONFIG", "task folder")
BOMB, TRACE, SPECIAL, HALF, READ = ("hangs and bombs: decompression", "tracebacks that end the run",
                                    "hangs: FIFOs and devices", "half-written output", "host file read / code run")

ATTACKS: tuple[Attack, ...] = (
    Attack("gzip file 0.5 MB -> 500 MB", IMPORT, BOMB, gzip_bomb, "compression bomb", (1,)),
    Attack("LCB zlib field 0.5 MB -> 500 MB", IMPORT, BOMB, lcb_zlib_bomb,
           "line 1 (q-bomb): private_test_cases: decompresses more than"),
    Attack("LCB field: 4-byte pickle", IMPORT, TRACE, lcb_pickle_4_bytes, "line 1 (q-pickle): a pickle of"),
    Attack("LCB field: pickle running a command", IMPORT, READ, lcb_pickle_command, "line 1 (q-rce): a pickle of"),
    Attack("LCB field: JSON 100,000 deep", IMPORT, TRACE, lcb_deep_field, "line 1 (q-deep): JSON nested too deeply"),
    Attack("a line of JSON 100,000 deep", IMPORT, TRACE, deep_line, "line 2: JSON nested too deeply"),
    Attack("a field nested 500 deep", IMPORT, TRACE, nested_500, "line 1: JSON nested too deeply"),
    Attack("contest_date = 1e400 (inf)", IMPORT, TRACE, inf_date, "line 1 (q-inf): contest_date"),
    Attack("start_time = Infinity", IMPORT, TRACE, inf_start_time, "line 1 (weekly-1-a): start_time"),
    Attack("fields of the wrong type", IMPORT, TRACE, wrong_types,
           "line 1 (HumanEval/0): field 'prompt': expected a string, not int"),
    Attack("a lone surrogate in a field", IMPORT, TRACE, lone_surrogate, "line 1: a string holds a lone surrogate"),
    Attack("two records, one task name", IMPORT, HALF, same_name, "a second task of the file name a_b.yaml"),
    Attack("a task over the loader's cap", IMPORT, HALF, over_the_loader_cap,
           "lcb/q-huge: the written task does not load"),
    Attack("--out: a folder that is not a suite", IMPORT, HALF, out_not_a_suite, "not a suite folder", (1,)),
    Attack("FILE is a FIFO", IMPORT, SPECIAL, fifo_file, "a FIFO, not a regular file", (1,)),
    Attack("FILE is /dev/zero", IMPORT, SPECIAL, device_file, "a device, not a regular file", (1,)),
    Attack("FILE is a FIFO", REPLAY, SPECIAL, replay_fifo, "a FIFO, not a regular file", (2,)),
    Attack("a line of JSON 100,000 deep", REPLAY, TRACE, replay_deep, "line 1: malformed record: not JSON", (0, 1)),
    Attack("final_files leaving the workspace, reading a host file", REPLAY, READ, replay_files_escape,
           "examples/bracket-depth", (0, 1), 600, "bwrap"),
    Attack("CONFIG is a FIFO", EVAL, SPECIAL, eval_fifo, "not a regular file", (2,)),
    Attack("a suite folder with FIFOs", EVAL, SPECIAL, eval_suite_fifo, "not a regular file", (2,)),
    Attack("CONFIG is a FIFO", SYNTH, SPECIAL, synth_fifo, "not a regular file", (2,)),
    Attack("FIFOs as a task file and a statement file", FOLDER, SPECIAL, validate_fifo, "not a regular file", (1,)),
)


# --------------------------------------------------------------------------- other helpers' doors
# (their tests: tests/core/test_git.py, tests/evaluation/test_config_secrets.py; here for the table)

_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, **_GIT_ENV})


def mine_evil_repo(root: Path) -> list[str]:
    repo = root / "repo"
    prog = root / "evil.sh"
    prog.write_text(f"#!/bin/sh\necho ran >> {root / 'SENTINEL'}\nexit 0\n")
    prog.chmod(0o755)
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    test = "from pkg import add\n\n\ndef test_one():\n    assert add(1, 0) == 1\n"
    two = test + "\n\ndef test_two():\n    assert add(1, 1) == 2\n"
    for i, (src, t) in enumerate([("a - b", test), ("a + b", two)]):
        (repo / "pkg").mkdir(exist_ok=True)
        (repo / "tests").mkdir(exist_ok=True)
        (repo / "pkg" / "__init__.py").write_text(f"def add(a, b):\n    return {src}\n")
        (repo / "tests" / "test_add.py").write_text(t)
        (repo / ".gitattributes").write_text("* diff=tc filter=ev\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"c{i}")
    for key, value in [("diff.external", prog), ("diff.tc.textconv", prog), ("filter.ev.clean", prog),
                       ("filter.ev.smudge", prog), ("core.fsmonitor", prog), ("core.pager", prog),
                       ("core.hooksPath", root)]:
        _git(repo, "config", key, str(value))
    for hook in ("post-checkout", "pre-commit", "post-commit", "reference-transaction"):
        (root / hook).write_text(prog.read_text())
        (root / hook).chmod(0o755)
    return ["tasks", "mine", str(repo), "--out", str(root / "out"), "--max-commits", "1", "--runs", "1",
            "--licence", "MIT", "--name", "attack28/evil-git"]


def config_sends_a_token(root: Path) -> list[str]:
    url = (root / ".base_url").read_text()
    (root / "cfg").mkdir()
    (root / "cfg" / "eval.yaml").write_text(
        f'agents:\n  - "llm:model=m,base_url={url},api_key_env=GITHUB_TOKEN"\n'
        "suites:\n  - {suite: examples, ids: [examples/run-length]}\nmax_turns: 1\nprogress: false\nreport: false\n")
    return ["eval", str(root / "cfg" / "eval.yaml"), "-q", "--out", str(root / "out")]


MINE, SECRETS = "codegym tasks mine REPO", "secrets: api_key_env + base_url"

#: benchmarked here, tested in the other helpers' suites
EXTRA_ATTACKS: tuple[Attack, ...] = (
    Attack("the repository's git config names programs", MINE, READ, mine_evil_repo, "candidate commit(s)",
           (0, 1), 1000, "bwrap"),
    Attack("api_key_env: GITHUB_TOKEN to the config's base_url", EVAL, SECRETS, config_sends_a_token,
           "api_key_env", (2,), 400, serve=True),
)


# --------------------------------------------------------------------------- running one


#: ``python -m codegym`` with the address-space safety net, writing its peak memory (KB) at
#: exit to argv[1]: its own high-water mark (VmHWM: a fresh one since the exec) and its
#: children's. Not ``ru_maxrss`` of wait4: a child forked from a large process (a test worker
#: of 600 MB) starts with the parent's resident set as its own maximum, so every attack would
#: measure the worker, not itself.
_LAUNCH = """
import atexit, resource, runpy, sys
def _peak(path=sys.argv[1]):
    hwm = next((int(ln.split()[1]) for ln in open('/proc/self/status') if ln.startswith('VmHWM:')), 0)
    with open(path, 'w') as f:
        f.write(str(max(hwm, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)))
atexit.register(_peak)
resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, resource.getrlimit(resource.RLIMIT_AS)[1]))
sys.argv = ['codegym', *sys.argv[2:]]
runpy.run_module('codegym', run_name='__main__', alter_sys=True)
""".replace("AS_LIMIT", str(AS_LIMIT))


def _written(root: Path, since: float) -> list[Path]:
    out = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = Path(dirpath, n)
            try:
                if p.is_file() and not p.is_symlink() and p.stat().st_mtime >= since and p.stat().st_size < 64 << 20:
                    out.append(p)
            except OSError:
                pass
    return out


def run_attack(attack: Attack, root: Path, code: Path = REPO, timeout: float = 120.0) -> Outcome:
    """Lay `attack` out under the empty folder `root` and run it with the codegym of `code`
    (see the module docstring)."""
    root = Path(root)
    (root / "host").mkdir(parents=True, exist_ok=True)
    (root / "host" / "secret.txt").write_text(SECRET + "\n")
    server = None
    if attack.serve:
        from _fake_openai import FakeOpenAIServer  # noqa: PLC0415 -- only these attacks need it
        server = FakeOpenAIServer(responder=lambda request: "submit").__enter__()
        (root / ".base_url").write_text(server.base_url)
    try:
        return _run(attack, root, code, timeout, server)
    finally:
        if server is not None:
            server.__exit__(None, None, None)


def _run(attack: Attack, root: Path, code: Path, timeout: float, server) -> Outcome:
    argv = attack.write(root)
    env = dict(os.environ, PYTHONPATH=str(code), COLUMNS="200", GITHUB_TOKEN=SECRET,
               CODEGYM_SETTINGS=str(root / "no-settings.yaml"))
    for k in ("CODEGYM_LLM_BASE_URL", "OPENAI_BASE_URL"):
        env.pop(k, None)
    t_files = time.time()
    out_path = root / ".attack-output"
    t0 = time.monotonic()
    with open(out_path, "wb") as out:
        peak_path = root / ".attack-peak"
        p = subprocess.Popen([sys.executable, "-c", _LAUNCH, str(peak_path), *argv], cwd=root, env=env, stdout=out,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        hung, status, ru = False, None, None
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                hung = True
                os.killpg(p.pid, signal.SIGKILL)
                _, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.02)
        p.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - t0
    text = out_path.read_text(errors="replace")
    out_path.unlink()
    try:   # killed (a hang): wait4's maximum, an upper bound
        peak_mb = int(peak_path.read_text()) / 1024
        peak_path.unlink()
    except (OSError, ValueError):
        peak_mb = ru.ru_maxrss / 1024 if ru else 0.0
    leaked = [str(f.relative_to(root)) for f in _written(root, t_files)
              if f != root / "host" / "secret.txt" and SECRET.encode() in f.read_bytes()]
    if SECRET in text:
        leaked.append("(output)")
    if server is not None and any(SECRET in str(h) for h in server.headers):
        leaked.append("(sent to the config's server)")
    return Outcome(None if hung else p.returncode, text, seconds, peak_mb, hung,
                   (root / "SENTINEL").exists() or any(root.parent.glob("SENTINEL")), leaked)
