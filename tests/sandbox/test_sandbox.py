"""Tests of the local sandbox (codegym.sandbox.local) with real executions.

Every behavioural test runs in both isolation modes: bubblewrap ("bwrap") and
rlimits only (isolation="rlimits").  Isolation properties
that only bubblewrap provides (read-only system, no network, hidden host
directories) are tested in the bwrap mode only.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time

import pytest
from _tools import need_bwrap

from codegym.core.limits import Limits
from codegym.sandbox import ExecResult, RunRequest, launcher, make_sandbox
from codegym.sandbox.local import LocalSandbox, ProcessSlot
from codegym.sandbox.repoenv import env_root
from codegym.sandbox.requests import imported_modules
from codegym.sandbox.types import Sandbox

MODES = ["bwrap", "rlimits"]


@pytest.fixture(scope="module", params=MODES)
def sb(request):
    if request.param == "bwrap":
        need_bwrap()
    s = LocalSandbox(workers=2, isolation=request.param)
    yield s
    s.close()


@pytest.fixture(scope="module")
def bw():
    need_bwrap()
    s = LocalSandbox(workers=2, isolation="bwrap")
    yield s
    s.close()


def py(sb, src: str, stdin: str | bytes = "", **limits) -> ExecResult:
    return sb.execute("python", {"main.py": src}, stdin=stdin, limits=Limits(**limits) if limits else None)


# --------------------------------------------------------------------------- statuses

def test_ok_and_stdin_stdout(sb):
    r = py(sb, "print(input()[::-1])", "hello\n")
    assert r.status == "ok" and r.exit_code == 0 and r.signal is None
    assert r.stdout == "olleh\n" and r.stderr == ""
    assert r.phase == "run" and r.max_rss_mb > 0 and r.wall_s > 0


def test_binary_stdin_round_trip(sb):
    data = bytes(range(256)) * 64 + b"\r\n\x00tail"
    src = ("import sys, hashlib\nb = sys.stdin.buffer.read()\n"
           "print(len(b), hashlib.sha256(b).hexdigest(), flush=True)\n"
           "sys.stdout.buffer.write(b[:300].hex().encode())\n")
    r = py(sb, src, data)
    assert r.status == "ok", r
    first, rest = r.stdout.split("\n", 1)
    assert first == f"{len(data)} {hashlib.sha256(data).hexdigest()}"
    assert rest == data[:300].hex()


def test_large_stdin_and_stdout(sb):
    line = "0123456789abcdef" * 8 + "\n"
    data = line * ((20 << 20) // len(line))  # 20 MiB
    src = "import sys\nd = sys.stdin.read()\nsys.stdout.write(d[:3_000_000])\nprint(len(d), file=sys.stderr)\n"
    r = py(sb, src, data, output_bytes=8 << 20, time_s=10)
    assert r.status == "ok", r.message
    assert r.stdout == data[:3_000_000]
    assert r.stderr.strip() == str(len(data))


def test_text_semantics_of_python_streams(sb):
    # no newline translation on stdin (like CPython on Linux), UTF-8 both ways
    r = py(sb, "import sys\nd = sys.stdin.read()\nprint(repr(d), sys.stdout.encoding)", "a\r\nb é\n")
    assert r.stdout == "'a\\r\\nb é\\n' utf-8\n"


def test_runtime_error_traceback_is_the_programs(sb):
    r = py(sb, "def f():\n    raise ValueError('boom')\nf()\n")
    assert r.status == "runtime_error" and r.exit_code == 1
    assert "ValueError: boom" in r.stderr and 'main.py", line 2, in f' in r.stderr
    # nothing of the fork server shows
    assert "<string>" not in r.stderr and "run_python_main" not in r.stderr


def test_syntax_error_is_a_runtime_error_like_the_interpreter(sb):
    r = py(sb, "def (:\n")
    assert r.status == "runtime_error" and r.exit_code == 1
    assert "SyntaxError" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("src, code, err", [
    ("import sys; sys.exit(3)", 3, ""),
    ("import sys; sys.exit('bye')", 1, "bye\n"),
    ("print('x'); exit()", 0, ""),
    ("raise SystemExit(0)", 0, ""),
])
def test_exit_codes(sb, src, code, err):
    r = py(sb, src)
    assert r.exit_code == code and r.stderr == err
    assert r.status == ("ok" if code == 0 else "runtime_error")


def test_killed_by_signal(sb):
    r = py(sb, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert r.status == "runtime_error" and r.signal == 11 and r.exit_code is None
    assert "SIGSEGV" in r.message


def test_cpu_time_limit(sb):
    r = py(sb, "while True: pass", time_s=0.5, wall_s=60)
    assert r.status == "timeout" and "CPU" in r.message
    assert r.cpu_s > 0.5


def test_cpu_of_children_the_program_never_waits_for_counts(sb):
    """A program must not hide its work (and so fake a speedup) in a child it never reaps:
    the run's CPU is that of every process of the run, reaped by the supervisor or not."""
    work = "s = 0\nfor i in range(1_500_000):\n    s += i * i\nprint(s, flush=True)\n"
    hidden = ("import os\nr, w = os.pipe()\nif os.fork() == 0:\n"
              + "".join("    " + line + "\n" for line in work.splitlines())
              + "    os.write(w, b'x')\n    os._exit(0)\nos.read(r, 1)\n")
    still_running = ("import os, time\nr, w = os.pipe()\nif os.fork() == 0:\n"
                     "    while time.process_time() < 0.1: pass\n    os.write(w, b'x')\n    while True: pass\n"
                     "os.read(r, 1)\n")
    honest = py(sb, work, time_s=5)
    tricky = py(sb, hidden, time_s=5)
    assert honest.status == tricky.status == "ok" and tricky.stdout == honest.stdout
    assert tricky.cpu_s > 0.6 * honest.cpu_s, (tricky.cpu_s, honest.cpu_s)
    orphan = py(sb, still_running, time_s=5)  # a child still spinning when the program exits
    assert orphan.status == "ok" and orphan.cpu_s >= 0.1, orphan.cpu_s


def test_wall_time_limit(sb):
    t = time.monotonic()
    r = py(sb, "import time\ntime.sleep(60)", time_s=1, wall_s=0.5)
    assert r.status == "timeout" and "wall" in r.message
    assert r.cpu_s < 0.5
    assert time.monotonic() - t < 30


@pytest.mark.parametrize("src", ["x = bytearray(10**9)", "x = []\nwhile True: x.append(' ' * 10**6)"])
def test_memory_limit_python(sb, src):
    r = py(sb, src, memory_mb=128)
    assert r.status == "memory_limit", (r.status, r.stderr[-300:])


def test_memory_limit_counts_all_processes(sb):
    src = ("import os, time\nfor i in range(4):\n    if os.fork() == 0:\n        x = bytearray(40 << 20)\n"
           "        time.sleep(2)\n        os._exit(0)\ntime.sleep(2)\nprint('survived')\n")
    r = py(sb, src, memory_mb=96, processes=8, time_s=5)
    assert r.status == "memory_limit", r
    assert "survived" not in r.stdout


def test_memory_limit_c_unchecked_malloc(sb):
    # no address-space limit for C: the failed-malloc segfault would hide the verdict
    src = ("#include <stdlib.h>\nint main(void){ size_t n = (size_t)4 << 30; char *p = malloc(n);"
           " for (size_t i = 0; i < n; i += 4096) p[i] = 1; return p[12345]; }\n")
    r = sb.execute("c", {"main.c": src}, limits=Limits(memory_mb=64, time_s=5))
    assert r.status == "memory_limit", r


def test_disk_limit(bw):
    src = ("import sys\nroot = sys.argv[1]\ntry:\n    with open(root + '/fill', 'wb') as f:\n"
           "        for _ in range(64):\n            f.write(b'x' * (1 << 20))\n    print('WROTE')\n"
           "except OSError as e:\n    print(e.errno)\n")
    b = bw.build("python", {"main.py": src})
    for root in (".", "/tmp"):
        r = bw.run(b, argv=[root], limits=Limits(disk_mb=16, file_size_mb=128))
        assert r.status == "ok" and r.stdout == "28\n", (root, r)  # ENOSPC
    assert bw.run(b, argv=["."], limits=Limits(disk_mb=128, file_size_mb=128)).stdout == "WROTE\n"


def test_output_limit(sb):
    r = py(sb, "while True: print('x' * 1000)", output_bytes=10_000)
    assert r.status == "output_limit" and r.stdout_truncated
    assert len(r.stdout) == 10_000


def test_output_exactly_at_the_cap_is_ok(sb):
    b = sb.build("python", {"main.py": "import sys\nsys.stdout.write('x' * int(sys.argv[1]))"})
    assert sb.run(b, argv=["1000"], limits=Limits(output_bytes=1000)).status == "ok"
    assert sb.run(b, argv=["1001"], limits=Limits(output_bytes=1000)).status == "output_limit"


def test_output_limit_on_stderr(sb):
    r = py(sb, "import sys\nsys.stderr.write('e' * 50_000)", output_bytes=1000)
    assert r.status == "output_limit" and r.stderr_truncated and len(r.stderr) == 1000


def test_process_limit(sb):
    src = ("import os, time\nn = 0\nfor i in range(40):\n    try:\n        pid = os.fork()\n"
           "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(5)\n        os._exit(0)\n"
           "    n += 1\nprint(n)\n")
    r = py(sb, src, processes=4)
    assert r.status == "ok", r
    if sb.isolation == "rlimits" and os.geteuid() != 0:
        pytest.skip("RLIMIT_NPROC counts all of the user's processes when not root without bwrap")
    assert int(r.stdout) <= 4


def test_file_size_limit(sb):
    r = py(sb, "open('big', 'wb').write(b'x' * (3 << 20))", file_size_mb=1)
    assert r.status == "runtime_error" and "File too large" in r.stderr


def test_open_files_limit(sb):
    r = py(sb, "fs = [open('main.py') for _ in range(200)]", open_files=32)
    assert r.status == "runtime_error" and "Too many open files" in r.stderr


# --------------------------------------------------------------------------- compiled languages

C_OK = ('#include <stdio.h>\nint main(void){int a,b; if(scanf("%d %d",&a,&b)!=2) return 2; '
        'printf("%d\\n",a+b); return 0;}\n')


def test_c_program(sb):
    r = sb.execute("c", {"main.c": C_OK}, stdin="3 4\n")
    assert r.status == "ok" and r.stdout == "7\n", r


def test_c_compile_error_and_cache(sb):
    before = sb.stats["compiles"]
    src = "int main(void) { return undefined_name; }\n"
    b1 = sb.build("c", {"main.c": src})
    b2 = sb.build("c", {"main.c": src})
    assert not b1.ok and b1.result.status == "compile_error" and b1.result.phase == "compile"
    assert "undefined_name" in b1.result.stderr
    assert sb.stats["compiles"] == before + 1 and b2 is b1
    r = sb.execute("c", {"main.c": src})
    assert r.status == "compile_error"


def test_compile_cache_counts_compiles(sb):
    src = C_OK + "/* cache test */\n"
    before = sb.stats["compiles"]
    b1 = sb.build("c", {"main.c": src})
    b2 = sb.build("c", {"main.c": src})
    b3 = sb.build("c", {"main.c": src + "\n"})
    assert b1.ok and b1.key == b2.key != b3.key
    assert sb.stats["compiles"] == before + 2
    assert sb.run(b2, stdin="1 2").stdout == "3\n"


def test_cpp_compile_error_and_run(sb):
    bad = sb.execute("cpp", {"main.cpp": "int main() { std::vector<int> v; }\n"})
    assert bad.status == "compile_error" and "vector" in bad.stderr
    src = ("#include <cstdio>\n#include <vector>\nint main(){std::vector<long> v;"
           " for(long i=0;i<10;i++) v.push_back(i*i); long s=0; for(long x: v) s+=x; printf(\"%ld\\n\", s);}\n")
    r = sb.execute("cpp", {"main.cpp": src})
    assert r.status == "ok" and r.stdout == "285\n", r


def test_c_segfault_and_cpu_limit(sb):
    b = sb.build("c", {"main.c": "#include <stdlib.h>\nint main(int c, char **v){"
                                 " if (c > 1) { volatile long x = 0; for(;;) x++; }"
                                 " int *p = 0; return *p; }\n"})
    assert b.ok, b.result
    r = sb.run(b)
    assert r.status == "runtime_error" and r.signal == 11
    r = sb.run(b, argv=["spin"], limits=Limits(time_s=0.5))
    assert r.status == "timeout"


def test_compile_cannot_read_host_files(bw):
    r = bw.execute("c", {"main.c": '#include "/etc/shadow"\nint main(void){return 0;}\n'})
    assert r.status == "compile_error" and "shadow" in r.stderr


def test_wrapper_runs_exec_path(sb):
    b = sb.build("c", {"main.c": C_OK})
    r = sb.run(b, stdin="5 6", wrapper=["env", "WRAPPED=1"])
    assert r.status == "ok" and r.stdout == "11\n"
    # Python falls back to the interpreter command line under a wrapper
    pb = sb.build("python", {"main.py": "import os, sys\nprint(os.environ.get('WRAPPED'), sys.argv)"})
    r = sb.run(pb, wrapper=["env", "WRAPPED=yes"], argv=["a"])
    assert r.status == "ok" and r.stdout == "yes ['main.py', 'a']\n", r


def test_javascript(sb):
    r = sb.execute("js", {"main.js": "const s = require('fs').readFileSync(0, 'utf8');\n"
                                     "console.log(s.trim().split(' ').map(Number).reduce((a, b) => a + b));"},
                   stdin="1 2 3")
    assert r.status == "ok" and r.stdout == "6\n", r
    r = sb.execute("javascript", {"main.js": "function ("})
    assert r.status == "compile_error" and "SyntaxError" in r.stderr
    r = sb.execute("js", {"main.js": "null.x"})
    assert r.status == "runtime_error" and "TypeError" in r.stderr


def test_julia_missing_is_a_clear_sandbox_error(sb):
    from codegym.sandbox import get_language
    if get_language("julia").available():
        r = sb.execute("julia", {"main.jl": "println(1 + 1)"})
        assert r.status == "ok" and r.stdout == "2\n"
        return
    r = sb.execute("julia", {"main.jl": "println(1)"})
    assert r.status == "sandbox_error"
    assert "language 'julia' is not installed" in r.message and "PATH" in r.message


def test_bad_file_path_is_rejected(sb):
    r = sb.execute("python", {"../escape.py": "print(1)", "main.py": "print(1)"})
    assert r.status == "compile_error" and "invalid file path" in r.message


# --------------------------------------------------------------------------- files, argv, python semantics

def test_extra_files_argv_and_sibling_import(sb):
    b = sb.build("python", {"main.py": "import helper, sys\nprint(helper.X, sys.argv, open('data.txt').read())",
                            "helper.py": "X = 42\n"})
    r = sb.run(b, argv=["--flag", "v"], extra_files={"data.txt": "payload"})
    assert r.status == "ok", r
    assert r.stdout == "42 ['main.py', '--flag', 'v'] payload\n"


def test_main_module_like_a_script(sb):
    r = py(sb, "import sys, os\nprint(__name__, os.path.basename(__file__), os.getcwd() == os.path.dirname(__file__),"
               " 'forkserver' in sys.modules, type(sys.stdout).__name__)")
    assert r.stdout == "__main__ main.py True False TextIOWrapper\n"


def test_random_differs_between_runs(sb):
    b = sb.build("python", {"main.py": "import random\nprint(random.random())"})
    outs = {sb.run(b).stdout for _ in range(3)}
    assert len(outs) == 3
    # the program's own forks reseed too, as in a fresh interpreter
    b = sb.build("python", {"main.py": "import os, random\nr, w = os.pipe()\npid = os.fork()\n"
                                       "if pid == 0:\n    os.write(w, repr(random.random()).encode())\n"
                                       "    os._exit(0)\n"
                                       "os.waitpid(pid, 0)\nprint(os.read(r, 100).decode() != repr(random.random()))"})
    assert sb.run(b).stdout == "True\n"


def test_imported_modules_reads_every_import_of_the_bytecode():
    src = ("import os.path\nfrom collections import deque\nimport heapq as h, bisect\n"
           "def f():\n    import fractions\n    from . import sibling\n"
           "class A:\n    def g(self):\n        from typing import List\n"
           "    h = lambda: __import__('statistics')\n"
           + "".join(f"v{i} = {i}\n" for i in range(300))  # names past 255: EXTENDED_ARG
           + "import decimal\n")
    assert imported_modules(compile(src, "m.py", "exec")) == {
        "os.path", "collections", "heapq", "bisect", "fractions", "", "typing", "decimal"}


@pytest.mark.parametrize("mode", MODES)
def test_stdlib_modules_a_program_imports_are_preloaded_and_its_own_modules_win(mode):
    """The server imports the (allow-listed) stdlib modules a run's Python files import --
    its main file, its other files, files in other folders (a driver's candidate) --
    before forking it, and keeps them; a program's own module named like a stdlib one is
    the one it imports, as with ``python3 main.py``."""
    if mode == "bwrap":
        need_bwrap()
    s = LocalSandbox(workers=1, isolation=mode)  # a fresh server: nothing preloaded yet
    try:
        names = "('fractions', 'decimal', 'statistics', 'this', 'heapq', 'string')"
        chk = f"import sys\nprint(sorted(m for m in {names} if m in sys.modules))\n"
        plain = s.build("python", {"main.py": chk})
        assert s.run(plain).stdout == "[]\n"  # a program that imports nothing forks from a small server
        lazy = s.build("python", {"main.py": chk + "def never_called():\n    import fractions, this\n"})
        assert s.run(lazy).stdout == "['decimal', 'fractions']\n"  # (fractions imports decimal; not `this`)
        assert s.run(plain).stdout == "['decimal', 'fractions']\n"  # they stay
        # a candidate in a folder of its own: its imports count, unless it has that module itself
        r = s.run(plain, extra_files={"sol/cand.py": "import string\n", "sol/string.py": "X = 1\n"})
        assert r.stdout == "['decimal', 'fractions']\n", r.stderr
        r = s.run(plain, extra_files={"sol/cand.py": "import string\n"})
        assert r.stdout == "['decimal', 'fractions', 'string']\n", r.stderr
        pkg = s.build("python", {"main.py": chk + "import helper\nprint(helper.mean([1, 2]))\n",
                                 "helper.py": "from statistics import mean\n"})
        r = s.run(pkg)
        assert r.stdout == "['decimal', 'fractions', 'statistics', 'string']\n1.5\n", r.stderr
        stdlib = s.build("python", {"main.py": "import heapq\nprint(heapq.__file__.startswith('/usr/lib'))\n"})
        own = s.build("python", {"main.py": chk + "import heapq\nprint(heapq.X)\n", "heapq.py": "X = 'own'\n"})
        for b, out in ((own, "own\n"), (stdlib, "True\n"), (own, "own\n")):
            r = s.run(b)
            assert r.stdout.endswith(out) and "heapq" not in r.stdout.splitlines()[0], (r.stdout, r.stderr)
        # what is the program's own is decided per run: the same build, its module given as an extra file
        either = s.build("python", {"main.py": "import heapq\nprint(getattr(heapq, 'X', 'stdlib'))\n"})
        assert s.run(either).stdout == "stdlib\n"
        assert s.run(either, extra_files={"heapq.py": "X = 'own'\n"}).stdout == "own\n"
        assert s.run(either).stdout == "stdlib\n"
    finally:
        s.close()


def test_randomize_layout_moves_a_python_programs_code_and_objects(sb):
    b = sb.build("python", {"main.py": "import sys\ndef f():\n    return id(sys._getframe().f_code)\n"
                                       "x = [object() for _ in range(5)]\n"
                                       "print(id(sys._getframe().f_code), f(), id(x[-1]))\n"})
    fixed = [sb.run(b).stdout for _ in range(6)]
    moved = [sb.run(b, randomize_layout=True) for _ in range(12)]
    assert all(r.status == "ok" for r in moved)
    # without: the code objects the server cached for the build, every run
    assert len({o.split()[0] for o in fixed}) == 1 and len({o.split()[1] for o in fixed}) == 1
    # with: copies (the functions' code too) and objects wherever chance puts them
    assert len({r.stdout.split()[0] for r in moved}) > 1
    assert len({r.stdout.split()[1] for r in moved}) > 1
    assert len({r.stdout.split()[2] for r in moved}) > 1
    assert not {r.stdout.split()[0] for r in moved} & {fixed[0].split()[0]}
    c = sb.build("c", {"main.c": "int main(void) { return 0; }\n"})
    if c.ok:  # exec'd programs: the flag changes nothing (the kernel randomizes them)
        assert sb.run(c, randomize_layout=True).status == "ok"


# --------------------------------------------------------------------------- environment and isolation

def test_clean_environment(sb, monkeypatch):
    monkeypatch.setenv("CODEGYM_CANARY", "leaked-secret")
    r = py(sb, "import os\nprint(sorted(os.environ))\nprint('leaked-secret' in repr(os.environ))")
    assert r.status == "ok"
    keys, leaked = r.stdout.splitlines()
    assert leaked == "False"
    assert set(eval(keys)) <= {"PATH", "HOME", "LANG", "TMPDIR", "PWD"}


def test_read_only_system_and_hidden_host(bw):
    envs = str(env_root())
    src = ("import os\nout = []\nfor p in ['/usr/x', '/etc/x', '/x', '/bin/x', '/builds/x']:\n"
           "    try:\n        open(p, 'w')\n        out.append('WROTE ' + p)\n    except OSError as e:\n"
           "        out.append(type(e).__name__)\n"
           "for p in ['/work', '/root', '/home', '/work/main', '/etc/shadow', '/var', '/var/lib/dpkg', '/var/log']:\n"
           "    out.append(p + ':' + str(os.path.exists(p)))\n"
           f"envs, seen = {envs!r}, []\n"
           "for d, ds, fs in os.walk('/var'):\n"
           "    seen += [os.path.join(d, n) for n in ds + fs if not envs.startswith(os.path.join(d, n) + '/')"
           " and os.path.join(d, n) != envs]\n"
           "    ds[:] = [n for n in ds if envs.startswith(os.path.join(d, n) + '/')]\n"
           "print(sorted(seen))\n"
           "open('/tmp/ok', 'w').write('x'); open('ok', 'w').write('x')\n"
           "print(' '.join(out), os.getuid() != 0)\n")
    r = py(bw, src)
    assert r.status == "ok", r
    assert "WROTE" not in r.stdout
    outside, line = r.stdout.strip().splitlines()
    # of /var, only the repository environments are there (read-only, docs/sandbox.md), and
    # only while they live there: nothing else of the host's /var is
    assert outside == "[]", outside
    for p in ["/work", "/root", "/home", "/work/main", "/etc/shadow", "/var/lib/dpkg", "/var/log"]:
        assert f"{p}:False" in line
    if not envs.startswith("/var/"):
        assert "/var:False" in line
    assert line.endswith("True")


def test_no_network(bw):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        src = ("import socket\nprint(sorted(n for _, n in socket.if_nameindex()))\n"
               f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('CONNECTED')\n"
               "except OSError as e:\n    print('refused', type(e).__name__)\n")
        r = py(bw, src)
    finally:
        srv.close()
    assert r.status == "ok", r
    assert r.stdout.splitlines()[0] == "['lo']"
    assert "CONNECTED" not in r.stdout


def test_supervisor_survives_kill_attempts(bw):
    src = ("import os, signal\nfor pid in (1, os.getppid(), -1):\n    for s in (signal.SIGKILL, signal.SIGTERM,"
           " signal.SIGINT, signal.SIGSTOP):\n        try:\n            os.kill(pid, s)\n        except OSError:\n"
           "            pass\nprint('alive')\n")
    r = py(bw, src)
    assert r.status in ("ok", "runtime_error")
    assert py(bw, "print('next')").stdout == "next\n"


def test_killing_the_supervisor_is_never_a_sandbox_error(sb):
    # in the rlimits mode the program can kill its supervisor: that is its own failure
    r = py(sb, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time; time.sleep(1)\nprint('x')")
    assert r.status != "sandbox_error", r
    assert py(sb, "print('next')").stdout == "next\n"


def _host_processes_with(marker: str) -> list[int]:
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(d))
            except OSError:
                pass
    return found


def test_no_leftovers_between_runs(sb):
    marker = f"31.{os.getpid()}7"
    first = ("import os, subprocess, tempfile\nopen(os.path.join(tempfile.gettempdir(), 'left.txt'), 'w').write('x')\n"
             "open('left_here.txt', 'w').write('x')\n"
             "os.makedirs('d/e', exist_ok=True); os.chmod('d', 0)\n"
             f"subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
             "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
             f"        os.execvp('sleep', ['sleep', '{marker}'])\n    os._exit(0)\nprint('started')\n")
    r1 = py(sb, first)
    assert r1.status == "ok" and r1.stdout == "started\n", r1
    assert _host_processes_with(marker) == []
    second = ("import os, tempfile\nprint(sorted(os.listdir('.')), sorted(os.listdir(tempfile.gettempdir())))\n")
    r2 = py(sb, second)
    assert r2.status == "ok", r2
    assert r2.stdout == "['main.py'] []\n", r2.stdout


def test_no_state_through_kernel_objects(sb):
    # keyrings and System V IPC outlive processes: one execution could leave answers for the next
    src = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nout = []\n"
           "out.append(libc.syscall(248, b'user', b'codegym-test', b'x', 1, -4))\n"  # add_key
           "out.append(libc.shmget(0x5eed, 4096, 0o1000 | 0o600))\n"
           "out.append(libc.msgget(0x5eed, 0o1000 | 0o600))\n"
           "out.append(libc.semget(0x5eed, 1, 0o1000 | 0o600))\n"
           "print(out)\n")
    r = py(sb, src)
    assert r.status == "ok" and r.stdout == "[-1, -1, -1, -1]\n", r


def test_program_cannot_change_its_input_or_build(sb):
    b = sb.build("python", {"main.py": "import sys\ntry:\n    open('/dev/stdin', 'w').write('x')\nexcept OSError:\n"
                                       "    pass\nopen(__file__, 'a').write('\\nprint(2)')\nprint(sys.stdin.read())"})
    assert sb.run(b, stdin="in").stdout == "in\n"
    assert sb.run(b, stdin="in").stdout == "in\n"


# --------------------------------------------------------------------------- run_many

def test_run_many_order_and_results(sb):
    b = sb.build("python", {"main.py": "import sys, time\nn = int(sys.stdin.read())\n"
                                       "time.sleep((n % 3) * 0.01)\nprint(n * n)"})
    reqs = [RunRequest(stdin=str(i)) for i in range(24)]
    res = sb.run_many(b, reqs)
    assert [r.stdout for r in res] == [f"{i * i}\n" for i in range(24)]


def test_run_many_stop_and_per_request_limits(sb):
    b = sb.build("python", {"main.py": "import sys, time\nn = int(sys.stdin.read())\n"
                                       "if n == 3:\n    raise SystemExit(1)\n"
                                       "time.sleep(0.05)\nprint(n)"})
    seen = []
    res = sb.run_many(b, [RunRequest(stdin=str(i)) for i in range(30)],
                      stop=lambda i, r: seen.append(i) or r.status != "ok")
    assert res[3] is not None and res[3].status == "runtime_error"
    assert any(r is None for r in res)  # early exit: later requests never started
    started = [i for i, r in enumerate(res) if r is not None]
    assert sorted(seen) == started
    assert all(res[i].stdout == f"{i}\n" for i in started if i != 3)
    # a per-request limit overrides the batch limit
    res = sb.run_many(b, [RunRequest(stdin="1"), RunRequest(stdin="2", limits=Limits(time_s=1, wall_s=0.01))],
                      limits=Limits(time_s=2))
    assert res[0].status == "ok" and res[1].status == "timeout"


def test_run_many_keeps_each_requests_own_files_argv_and_limits(sb):
    # requests share their parts with others (one request base per distinct argv, extra
    # files and limits): each still runs with its own
    b = sb.build("python", {"main.py": launcher.LAUNCHER})
    fa = launcher.hidden_files({"main.py": "import sys\nprint('A', sys.argv[1:], input())"})
    fb = launcher.hidden_files({"main.py": "import sys\nprint('B', sys.argv[1:], input())"})
    slow = launcher.hidden_files({"main.py": "import time\ntime.sleep(1)"})
    reqs = []
    for i in range(12):
        files, argv = (fa, ["main.py"]) if i % 3 else (fb, ["main.py", str(i)])
        reqs.append(RunRequest(stdin=f"{i}\n", argv=argv, extra_files=files))
    reqs.append(RunRequest(stdin="x", argv=["main.py"], extra_files=slow, limits=Limits(time_s=1, wall_s=0.2)))
    reqs.append(RunRequest(stdin="12\n", argv=["main.py"], extra_files=dict(fa)))  # equal, not the same object
    res = sb.run_many(b, reqs, limits=Limits(time_s=2))
    want = [f"A [] {i}\n" if i % 3 else f"B ['{i}'] {i}\n" for i in range(12)]
    assert [r.stdout for r in res[:12]] == want
    assert res[12].status == "timeout" and res[13].stdout == "A [] 12\n"


def _pipelined(mode: str, pipeline: int = 2, workers: int = 1) -> LocalSandbox:
    if mode == "bwrap":
        need_bwrap()
    return LocalSandbox(workers=workers, isolation=mode, pipeline=pipeline)


def _outcome(r: ExecResult) -> tuple:
    if r.status == "output_limit":  # (whether the writer was still alive when it was stopped is a race)
        return (r.status, len(r.stdout), r.stdout_truncated)
    return (r.status, r.exit_code, r.signal, r.stdout, r.stderr.splitlines()[-1:] if r.stderr else [],
            r.stdout_truncated)


@pytest.mark.parametrize("mode", MODES)
def test_run_many_pipelined_equals_one_at_a_time(mode):
    # the next request waits in the slot's pipe while the current one runs: every
    # outcome (ok, errors, limits, big inputs and outputs both past the pipe
    # buffers) must be what one request at a time gives
    src = ("import sys, time\ndata = sys.stdin.buffer.read()\nk = data[:1]\n"
           "if k == b'e':\n    raise ValueError('bad')\n"
           "if k == b't':\n    time.sleep(5)\n"
           "if k == b'f':\n    sys.stdout.write('y' * 5_000_000)\n"
           "if k == b'x':\n    raise SystemExit(3)\n"
           "sys.stdout.buffer.write(data[::-1])\n")
    big = b"b" + bytes(range(256)) * 12_000  # 3 MB in, 3 MB out
    # (two big ones in a row: the second is written while the first's answer is written back)
    kinds = [b"a1", b"e", b"a2", big, big, b"t", b"f", b"x", b"a3", big, b"a4"]
    reqs = [RunRequest(stdin=k) for k in kinds]
    lim = Limits(time_s=1, wall_s=0.5, output_bytes=4 << 20)
    got = {}
    for depth in (1, 2):
        s = _pipelined(mode, pipeline=depth)
        try:
            b = s.build("python", {"main.py": src})
            got[depth] = [_outcome(r) for r in s.run_many(b, reqs, limits=lim)]
            assert s.stats["slot_restarts"] == 0
        finally:
            s.close()
    for a, c in zip(got[1], got[2]):
        assert [x if not isinstance(x, str) or len(x) < 80 else (len(x), x[:20]) for x in a] == \
            [x if not isinstance(x, str) or len(x) < 80 else (len(x), x[:20]) for x in c]
    assert [g[0] for g in got[2]] == ["ok", "runtime_error", "ok", "ok", "ok", "timeout", "output_limit",
                                      "runtime_error", "ok", "ok", "ok"]
    assert len(got[2][3][3]) > 3_000_000 and got[2][3][3] == got[2][4][3]


@pytest.mark.parametrize("mode", MODES)
def test_run_many_pipelined_survives_a_broken_supervisor(mode):
    # (rlimits mode) a program kills its supervisor while the next request already
    # waits in the pipe: its own verdict is never a sandbox error, and every request
    # behind it still gets its real answer
    s = _pipelined(mode)
    try:
        b = s.build("python", {"main.py": "import os, signal, sys, time\nn = sys.stdin.read()\n"
                                          "if n == 'kill':\n    os.kill(os.getppid(), signal.SIGKILL)\n"
                                          "    time.sleep(1)\nprint(n)"})
        stdins = ["0", "1", "kill", "3", "4", "kill", "6"]
        res = s.run_many(b, [RunRequest(stdin=x) for x in stdins], limits=Limits(time_s=2))
        for x, r in zip(stdins, res):
            assert r is not None and r.status != "sandbox_error", r
            if x != "kill":
                assert r.status == "ok" and r.stdout == f"{x}\n", r
        assert s.run(b, stdin="next").stdout == "next\n"
    finally:
        s.close()


@pytest.mark.parametrize("mode", MODES)
def test_run_many_pipelined_mixed_disk_sizes_and_stop(mode):
    s = _pipelined(mode, workers=2)
    try:
        b = s.build("python", {"main.py": "import sys\nn = int(sys.stdin.read())\nprint(n)\n"
                                          "raise SystemExit(1 if n == 9 else 0)"})
        reqs = [RunRequest(stdin=str(i), limits=Limits(disk_mb=32 if i % 4 == 0 else 64)) for i in range(24)]
        res = s.run_many(b, reqs)
        assert [r.stdout for r in res] == [f"{i}\n" for i in range(24)]
        seen = []
        res = s.run_many(b, [RunRequest(stdin=str(i)) for i in range(40)],
                         stop=lambda i, r: seen.append(i) or r.status != "ok")
        started = [i for i, r in enumerate(res) if r is not None]
        assert res[9].status == "runtime_error" and sorted(seen) == started and len(started) < 40
    finally:
        s.close()


def _slots_of_sends(monkeypatch) -> list[int]:
    """The slot (index) of every request a `run_many` sends, in order."""
    sent: list[int] = []
    send = ProcessSlot.send_request

    def spy(self, header, blobs):
        sent.append(self.index)
        return send(self, header, blobs)
    monkeypatch.setattr(ProcessSlot, "send_request", spy)
    return sent


def test_run_many_of_as_many_requests_as_slots_runs_one_on_each(sb, monkeypatch):
    """Two requests on a 2-slot sandbox go one to each slot, not both down one slot's pipe
    while the other slot idles (`claim(ahead=True)` is refused once fewer requests than
    threads are left), even when the second thread starts late: each request runs long
    enough for it to claim the second (0.3 s, it comes 0.1 s late)."""
    assert sb.workers == 2 and sb.pipeline >= 2
    stream, started, lock = sb._stream, [], threading.Lock()

    def late_stream(*a):
        with lock:
            started.append(1)
            late = len(started) > 1
        if late:  # every thread but the first: the first has claimed and sent its request by then
            time.sleep(0.1)
        return stream(*a)
    monkeypatch.setattr(sb, "_stream", late_stream)
    b = sb.build("python", {"main.py": "import os, sys, time\ntime.sleep(0.3)\n"
                                       "print(sys.stdin.read(), os.getppid())"})
    sent = _slots_of_sends(monkeypatch)
    for _ in range(3):
        del sent[:], started[:]
        res = sb.run_many(b, [RunRequest(stdin="a"), RunRequest(stdin="b")])
        assert [r.stdout.split()[0] for r in res] == ["a", "b"]
        assert len(sent) == 2 and len(set(sent)) == 2, sent
        if sb.isolation == "rlimits":  # (bubblewrap: each slot's fork server is pid 1 of its own namespace)
            assert res[0].stdout.split()[1] != res[1].stdout.split()[1]    # two fork servers
    del sent[:], started[:]
    res = sb.run_many(b, [RunRequest(stdin=str(i)) for i in range(4)])
    assert [r.stdout.split()[0] for r in res] == ["0", "1", "2", "3"]
    assert len(sent) == 4 and len(set(sent)) == 2                 # 4 on 2 slots: both used


class _Threads(Sandbox):
    """A sandbox of nothing but `_run_many_threads` (its serve functions are the tests')."""

    def build(self, language, files, limits=None):
        raise NotImplementedError

    def run(self, build, stdin="", limits=None, argv=(), extra_files=None, wrapper=None, randomize_layout=False):
        return ExecResult("ok", stdout=str(stdin))

    def run_many(self, build, requests, limits=None, stop=None):
        raise NotImplementedError


def test_run_many_threads_claim_ahead_only_while_one_request_per_thread_is_left():
    """`claim(ahead=True)` is granted while at least one request per worker thread (k = min(n,
    workers)) is left unclaimed; a plain `claim()` takes any request left."""
    n, k = 6, 2
    barrier = threading.Barrier(k)
    log: dict[str, list] = {}

    def serve(claim, done):
        me = threading.current_thread().name
        mine = log.setdefault(me, [])
        mine.append(("first", claim()))
        barrier.wait()                               # both threads hold one: 4 left
        if me == "MainThread":
            mine += [("ahead", claim(ahead=True)),   # 4 left: granted
                     ("ahead", claim(ahead=True)),   # 3 left: granted
                     ("ahead", claim(ahead=True)),   # 2 left: granted
                     ("ahead", claim(ahead=True)),   # 1 left < 2 threads: refused
                     ("plain", claim()),             # ... but a free thread takes it
                     ("plain", claim())]             # none left
        barrier.wait()
        mine.append(("last", claim()))
        for _, i in mine:
            if i is not None:
                done(i, ExecResult("ok", stdout=f"{i} {me}"))

    res = _Threads()._run_many_threads(None, [RunRequest(stdin=str(i)) for i in range(n)], None, None, k,
                                       serve=serve)
    main = log.pop("MainThread")
    (other,) = log.values()
    firsts = sorted([main[0][1], other[0][1]])
    assert firsts == [0, 1]
    assert main[1:] == [("ahead", 2), ("ahead", 3), ("ahead", 4), ("ahead", None),
                                     ("plain", 5), ("plain", None), ("last", None)]
    assert other[1:] == [("last", None)]
    assert [r.stdout.split()[0] for r in res] == [str(i) for i in range(n)]


@pytest.mark.parametrize("n, workers", [(2, 2), (1, 4), (3, 8)])
def test_run_many_threads_refuses_every_ahead_claim_when_no_more_requests_than_threads(n, workers):
    """n <= workers: k = n threads, and no request is ever queued behind another."""
    seen: list = []
    lock = threading.Lock()

    def serve(claim, done):
        i = claim()
        a = claim(ahead=True)
        with lock:
            seen.append((i, a))
        if i is not None:
            done(i, ExecResult("ok"))
        assert a is None

    res = _Threads()._run_many_threads(None, [RunRequest()] * n, None, None, workers, serve=serve)
    assert len(seen) == n and sorted(i for i, _ in seen) == list(range(n))
    assert all(a is None for _, a in seen) and all(r is not None for r in res)


def test_run_many_threads_claims_nothing_after_a_stop():
    def serve(claim, done):
        while (i := claim(ahead=True)) is not None or (i := claim()) is not None:
            done(i, ExecResult("ok" if i != 2 else "runtime_error"))

    res = _Threads()._run_many_threads(None, [RunRequest()] * 8, None, lambda i, r: not r.ok, 1, serve=serve)
    assert [r is not None for r in res] == [True, True, True] + [False] * 5


def test_concurrent_callers(sb):
    b = sb.build("python", {"main.py": "print(int(input()) + 1)"})
    out: dict[int, str] = {}

    def work(k: int) -> None:
        for j in range(5):
            out[k * 10 + j] = sb.run(b, stdin=str(k * 10 + j)).stdout

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert out == {n: f"{n + 1}\n" for n in out} and len(out) == 20


# --------------------------------------------------------------------------- lifecycle

def _children() -> set[int]:
    me = os.getpid()
    kids = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        kids.add(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return kids


@pytest.mark.parametrize("mode", MODES)
def test_close_leaves_nothing(mode):
    if mode == "bwrap":
        need_bwrap()
    fds = len(os.listdir("/proc/self/fd"))
    kids = _children()
    s = LocalSandbox(workers=2, isolation=mode)
    d = s._dir
    b = s.build("c", {"main.c": C_OK})
    s.run_many(b, [RunRequest(stdin="1 1")] * 4)
    s.execute("python", {"main.py": "import subprocess\nsubprocess.Popen(['sleep', '30'], start_new_session=True)"})
    assert _children() - kids  # slots are running
    s.close()
    s.close()  # idempotent
    assert _children() == kids
    assert len(os.listdir("/proc/self/fd")) == fds
    assert not os.path.exists(d)
    with pytest.raises(RuntimeError):
        s.execute("python", {"main.py": "print(1)"})


def test_programs_see_and_report_the_same_paths_in_every_mode(sb):
    """Output names the run directory /box and /tmp whatever the mode and the slot, so
    records of the same episode are equal with and without bubblewrap (in the rlimits
    mode they are host directories of each slot and process)."""
    r = py(sb, "import os, tempfile\nprint(os.getcwd(), tempfile.gettempdir())\nraise ValueError(__file__)")
    assert r.status == "runtime_error"
    assert r.stdout == "/box /tmp\n"
    assert 'File "/box/main.py", line 3' in r.stderr and "ValueError: /box/main.py" in r.stderr


def test_make_sandbox_shared_instance():
    a = make_sandbox("local")
    assert make_sandbox() is a and make_sandbox("local") is a
    assert a.isolation in ("bwrap", "rlimits")
    with pytest.raises(ValueError):
        make_sandbox("no-such-backend")


def test_slots_are_handed_out_first_come_first_served():
    """A freed slot goes to the caller that has waited longest, not to whoever asks
    next (at high concurrency the latter starved some callers for seconds)."""
    sb = LocalSandbox(workers=1, isolation="rlimits")
    try:
        held = sb._take(Limits().disk_mb, "run")
        order: list[int] = []
        threads = []
        for k in range(5):
            def waiter(k=k):
                for _ in range(2):  # give the slot back and ask again at once
                    slot = sb._take(Limits().disk_mb, "run")
                    order.append(k)
                    sb._give(slot)
            t = threading.Thread(target=waiter)
            t.start()
            threads.append(t)
            while len(sb._waiters) < k + 1:  # the next waiter queues only after this one
                time.sleep(0.001)            # (no deadline: pytest's timeout guards a hang)
        assert len(sb._waiters) == 5
        sb._give(held)
        for t in threads:
            t.join()
        # a caller that gives a slot back and asks again queues behind the others
        assert order == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]
    finally:
        sb.close()


# --------------------------------------------------------------------------- the launcher

LAUNCHED_PROBE = """\
import os, sys
import helper
print(__name__, os.path.relpath(__file__), sys.argv[0] == __file__, sys.argv[1:], os.path.relpath(sys.path[0]), helper.X)
print(sorted(k for k in globals() if not k.startswith('__') or k == '__file__'))
data = sys.stdin.read()
with open(__file__, 'a') as f:  # a program that edits its own file changes no later run
    f.write('\\nprint("tampered")\\n')
print(len(data))
if data.startswith('boom'):
    def inner():
        raise ValueError('boom')
    inner()
sys.exit(int(data) if data.strip().isdigit() else 0)
"""  # noqa: E501 -- (a program's text: its line numbers are part of the test)


@pytest.mark.parametrize("stdin", ["", "7", "boom"])
def test_launched_program_runs_as_under_the_real_launcher(sb, stdin):
    """The server runs the launcher's hidden program itself, its code compiled once
    (`_launched_program`); what the program sees and reports is what the launcher,
    run by a fresh interpreter (the exec path under a wrapper), gives it."""
    b = sb.build("python", {"main.py": launcher.LAUNCHER})
    extra = launcher.hidden_files({"main.py": LAUNCHED_PROBE, "helper.py": "X = 41 + 1\n"})
    runs = [sb.run(b, stdin=stdin, argv=["main.py", "a", "b"], extra_files=extra) for _ in range(2)]
    ref = sb.run(b, stdin=stdin, argv=["main.py", "a", "b"], extra_files=extra, wrapper=["env"])
    for r in runs:
        assert (r.status, r.exit_code, r.stdout) == (ref.status, ref.exit_code, ref.stdout), (r, ref)
        assert "tampered" not in r.stdout
    assert ref.stdout.startswith("__main__ hidden/main.py True ['a', 'b'] hidden 42\n"), ref.stdout
    if stdin == "boom":
        assert runs[0].status == "runtime_error" and runs[0].exit_code == 1
        for r in (*runs, ref):  # the program's frames only, the launcher's and the server's hidden
            assert "ValueError: boom" in r.stderr and "inner()" in r.stderr and "launch" not in r.stderr
            assert 'main.py", line 12, in <module>' in r.stderr, r.stderr
    else:
        assert runs[0].exit_code == (7 if stdin == "7" else 0)


def test_launched_program_code_follows_its_content(sb):
    b = sb.build("python", {"main.py": launcher.LAUNCHER})
    # run by the server itself, not through the launcher's frame
    r = sb.run(b, argv=["main.py"], extra_files=launcher.hidden_files(
        {"main.py": "import sys\nprint(sys._getframe().f_back.f_code.co_name)"}))
    assert r.stdout == "run_python_main\n", r
    outs = [sb.run(b, argv=["main.py"], extra_files=launcher.hidden_files({"main.py": f"print({v})"})).stdout
            for v in (1, 2, 1)]
    assert outs == ["1\n", "2\n", "1\n"]
    r = sb.run(b, argv=["main.py"], extra_files=launcher.hidden_files({"main.py": "print(1"}))
    assert r.status == "runtime_error" and r.exit_code == 1 and "SyntaxError" in r.stderr, r
    r = sb.run(b, argv=["missing.py"], extra_files=launcher.hidden_files({"main.py": "print(1)"}))
    assert r.status == "runtime_error" and "missing.py" in r.stderr, r


def test_python_main_module_and_path_are_fresh_every_run(sb):
    # the server prepares __main__ and sys.path before forking (the same objects every
    # run): what a program does to them stays in its own process
    src = ("import sys, __main__\n"
           "print(getattr(__main__, 'mark', None), sys.path.count('/added'),"
           " sys.path[0] == __import__('os').getcwd())\n"
           "mark = 1\n__main__.__dict__['other'] = 2\nsys.path.insert(0, '/added')\nsys.path.append('/added')\n"
           "sys.modules['__main__'] = None\n")
    b = sb.build("python", {"main.py": src})
    outs = {sb.run(b).stdout for _ in range(4)}
    assert outs == {"None 0 True\n"}, outs
