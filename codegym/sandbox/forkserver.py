"""The fork server: the trusted core that runs inside every sandbox slot.

Owns: the long-lived per-slot supervisor process, the host <-> server wire
protocol (frames), and what happens around one execution inside the slot.

It is started by ``codegym.sandbox.local`` as ``python3 -I -S -c <bootstrap>
<config json>``, the bootstrap reading this file's source from stdin --
inside bubblewrap, where it is PID 1 of its own pid namespace, or as a plain
process in the rlimits-only mode.  Standard library only, and it never
imports codegym: it must run with the system interpreter inside a sandbox
that cannot see the repository.

One execution at a time:

1. read a request frame (JSON header + raw payloads) from the host;
2. lay out the run directory (``box``): the build's files and extra files are
   written from the payloads (nothing of other builds is reachable), stdin is
   streamed into a sealed memfd (it never sits in this process's heap, so a
   forked child's address space does not carry it);
3. fork a child that inherits fds 0/1/2 (stdin file, stdout and stderr
   pipes), closes every other descriptor, sets rlimits and either
   ``execve``s the program or -- for Python -- runs the source in this
   already warm interpreter (a fresh ``__main__`` and its ``sys.path``, both
   prepared before the fork, the code compiled once per content and the
   PRELOAD modules it imports imported here first; see ``run_python_main``,
   ``Server.prepare_main`` and ``Server.program_for``);
4. supervise: wait up to FIRST_WAIT for the exit alone (most programs end
   there), then read stdout/stderr with a byte cap, enforce the wall-clock
   deadline, sample the total resident memory of the program's processes,
   ``wait4`` the child for its exit status and rusage;
5. kill every other process of the slot (``kill(-1, SIGKILL)`` as PID 1 of the
   namespace -- skipped when no child is left --, or as the slot's own uid),
   reap them with their rusage (the
   run's CPU time is that of all its processes: work hidden in a child the
   program never waits for still counts), collect requested files
   (compiler output), wipe the run directory and the private /tmp;
6. answer with one frame: raw facts (exit code, signal, CPU, RSS, why it was
   killed) plus the captured bytes.  Verdicts are decided by the host, which
   also treats everything in this answer as untrusted.

Protection that lives here (the rest is bubblewrap and rlimits): the server
is not dumpable (same-uid children cannot ptrace it or open /proc/1/fd/*), it
ignores SIGINT, its protocol descriptors are closed in every child, every
child applies the seccomp filter (`SeccompFilter`) before the program runs,
and the server holds no secrets (expected outputs never leave the host).
"""

from __future__ import annotations

import sys

#: what a fresh ``python3 -I -S`` has imported before it runs a program (the bootstrap
#: that runs this file imports nothing more)
FRESH_MODULES = frozenset(sys.modules)

import atexit
import builtins
import fcntl
import json
import os
import resource
import select
import signal
import stat
import struct
import time
import types

#: bump when the frame layout or the request/response fields change
PROTOCOL = 3
#: frame = MAGIC + u32 header length + JSON header + payloads (lengths in header["blobs"])
MAGIC = b"CGFS"
HEADER = struct.Struct(">4sI")
#: largest JSON header either side accepts
MAX_HEADER = 1 << 20
#: pipe buffer size requested for output and protocol pipes (Linux default max for users)
PIPE_SIZE = 1 << 20
CHUNK = 1 << 20
#: output pipe size from the start of every run (a big writer's pipe grows to PIPE_SIZE)
FIRST_PIPE_SIZE = 1 << 18
#: read size for output pipes and protocol headers: big reads allocate big
#: buffers, which grow the heap that every fork then has to copy
SMALL_READ = 1 << 16
#: when the server first samples the program's total resident memory, and how often after
MEM_FIRST = 0.005
MEM_EVERY = 0.005
#: how long the server first waits for the program's exit alone (see `Server.execute`)
FIRST_WAIT = 0.002
PAGE = os.sysconf("SC_PAGE_SIZE")

F_SETPIPE_SZ = 1031
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36

#: stdlib modules the server imports at start (besides its own imports above)
BASE_IMPORTS = ("_sitebuiltins", "importlib.machinery")
#: stdlib modules the server imports before it forks a Python program that imports
#: them (the host lists the imports of the run's Python files, ``python.preload``;
#: see `imported_modules`), so that the program starts warm.  They stay imported for
#: every later run of the slot; a program that imports none of them forks from a
#: smaller process: every page of this process's heap is one more page table entry to
#: copy at each fork and to drop at each exit (the whole list imported up front made a
#: trivial program's run ~9 % dearer).  Only these: importing
#: whatever a program names would run arbitrary stdlib code here (``antigravity``
#: starts a browser).  Not threading: its at-fork hook costs every execution ~0.3 ms,
#: more than the import saves the few programs that use it (measured with fork
#: microbenchmarks)
PRELOAD = frozenset(("collections", "itertools", "heapq", "bisect", "math", "functools", "re",
                     "json", "io", "random", "string", "array", "operator", "typing",
                     "dataclasses", "fractions", "decimal", "traceback", "copy", "struct",
                     "time", "statistics", "types", "atexit", "collections.abc", "abc"))


# --------------------------------------------------------------------------- frames

#: one encoder for every frame (``json.dumps`` with separators builds a new one per call;
#: headers are plain trees, never circular)
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def pack_frame(header: dict, blobs: list[bytes] | tuple = ()) -> list[bytes]:
    """Encode one frame as a list of buffers (for writev)."""
    header = dict(header)
    header["blobs"] = [len(b) for b in blobs]
    raw = _encode(header).encode()
    if len(raw) > MAX_HEADER:
        raise ValueError("frame header too large")
    return [HEADER.pack(MAGIC, len(raw)) + raw, *blobs]


def _write_all(fd: int, bufs: list[bytes]) -> None:
    bufs = [memoryview(b) for b in bufs if len(b)]
    while bufs:
        n = os.writev(fd, bufs[:64])
        while n and bufs:
            if n >= len(bufs[0]):
                n -= len(bufs[0])
                bufs.pop(0)
            else:
                bufs[0] = bufs[0][n:]
                n = 0


class _Reader:
    """Blocking buffered reader over the protocol descriptor (server side)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()

    def _fill(self, want: int = SMALL_READ) -> bool:
        data = os.read(self.fd, max(SMALL_READ, min(want, CHUNK)))
        if not data:
            return False
        self.buf += data
        return True

    def read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill(n - len(self.buf)):
                raise EOFError
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def copy_to(self, n: int, out_fd: int | None) -> str | None:
        """Move n payload bytes to out_fd (None: discard). Returns an error text or None."""
        err = None
        while n:
            if not self.buf and not self._fill(n):
                raise EOFError
            take = memoryview(self.buf)[:n]
            k = len(take)
            if out_fd is not None and err is None:
                try:
                    _write_all(out_fd, [take])
                except OSError as e:
                    err = f"{e.strerror or e}"
            take.release()
            del self.buf[:k]
            n -= k
        return err

    def header(self) -> dict:
        magic, n = HEADER.unpack(self.read_exact(HEADER.size))
        if magic != MAGIC or n > MAX_HEADER:
            raise ValueError("bad frame")
        return json.loads(self.read_exact(n))


# --------------------------------------------------------------------------- helpers

_prctl_fn = None


def _libc_prctl():
    """libc's prctl as one typed ctypes function (no errno swapping), made once in the
    server and shared by every caller: each ctypes object a child touches is a page copy."""
    global _prctl_fn
    if _prctl_fn is None:
        import ctypes
        fn = ctypes.CDLL(None).prctl
        fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        fn.restype = ctypes.c_int
        _prctl_fn = fn
    return _prctl_fn


def _prctl(option: int, value: int) -> None:
    try:
        _libc_prctl()(option, value, 0, 0, 0)
    except Exception:  # not fatal: the namespace is the main barrier
        pass


#: syscalls a program must not use, by architecture: kernel objects that outlive the
#: program's processes (keyrings, System V IPC, POSIX message queues) would let one
#: execution leave state for the next; io_uring, bpf and userfaultfd are attack surface;
#: memfd_create (ENOSYS, so runtimes fall back) makes memory that no process maps, so
#: neither the address-space limit nor the resident-memory sampling would see it
_SECCOMP_BLOCK = {
    # AUDIT_ARCH: (x32 bit or None, {nr: errno})
    "x86_64": (0xC000003E, 0x40000000, {248: 1, 249: 1, 250: 1, 29: 1, 64: 1, 68: 1, 240: 1,
                                        321: 1, 323: 1, 425: 38, 426: 38, 427: 38, 319: 38}),
    "aarch64": (0xC00000B7, None, {217: 1, 218: 1, 219: 1, 194: 1, 190: 1, 186: 1, 180: 1,
                                   280: 1, 282: 1, 425: 38, 426: 38, 427: 38, 279: 38}),
}


def _seccomp_program(machine: str) -> bytes | None:
    """A classic-BPF seccomp filter: EPERM (ENOSYS for io_uring) for the blocked
    syscalls, EPERM for every syscall of a foreign ABI (int 0x80, x32), else allow."""
    spec = _SECCOMP_BLOCK.get(machine)
    if spec is None:
        return None
    arch, x32, block = spec
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, errno_ = 0x7FFF0000, 0x00050000
    body: list[tuple] = [(ld, 0, 0, 4), ("jeq_arch",), (ld, 0, 0, 0)]
    if x32 is not None:
        body.append(("jge", x32, "eperm"))
    for nr, err in block.items():
        body.append(("jeq", nr, "eperm" if err == 1 else "enosys"))
    body.append((ret, 0, 0, allow))
    labels = {"eperm": len(body), "enosys": len(body) + 1}
    body += [(ret, 0, 0, errno_ | 1), (ret, 0, 0, errno_ | 38)]
    out = []
    for i, ins in enumerate(body):
        if ins[0] == "jeq_arch":
            ins = (jeq, 0, labels["eperm"] - (i + 1), arch)
        elif ins[0] in ("jeq", "jge"):
            ins = (jeq if ins[0] == "jeq" else jge, labels[ins[2]] - (i + 1), 0, ins[1])
        out.append(struct.pack("=HBBI", *ins))
    return b"".join(out)


class SeccompFilter:
    """The programs' filter (`_seccomp_program`), prepared once in the server and applied
    in every forked child before the program runs. The server itself stays unfiltered:
    it makes each run's stdin memfd, which programs may not."""

    def __init__(self, prog: bytes):
        import ctypes

        class FProg(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
        self._buf = ctypes.create_string_buffer(prog)
        self._fprog = FProg(len(prog) // 8, ctypes.addressof(self._buf))
        self._addr = ctypes.addressof(self._fprog)
        self._prctl = _libc_prctl()

    def apply(self) -> bool:
        """Filter this process (a forked child) and everything it starts."""
        return self._prctl(22, 2, self._addr, 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


def prepare_seccomp() -> SeccompFilter | None:
    """The filter for this machine, None when it cannot be applied here. Sets
    no_new_privs on this process (inherited by every child; required by the filter),
    and applies the filter once in a throwaway child to know it works."""
    import platform
    prog = _seccomp_program(platform.machine())
    if prog is None:
        return None
    if _libc_prctl()(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return None
    flt = SeccompFilter(prog)
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if flt.apply() and os.getpid() > 0 else 1)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return flt if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else None


def _safe_rel(path: str) -> str:
    if not isinstance(path, str) or not path or "\0" in path or path.startswith("/"):
        raise ValueError(f"bad path {path!r}")
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"bad path {path!r}")
    return path


def _open_for_write(root: str, rel: str, mode: int) -> int:
    rel = _safe_rel(rel)
    d = os.path.dirname(rel)
    if d:
        try:
            os.mkdir(os.path.join(root, d))
        except FileExistsError:
            pass
        except FileNotFoundError:  # (nested)
            os.makedirs(os.path.join(root, d), exist_ok=True)
    return os.open(os.path.join(root, rel), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                   | os.O_CLOEXEC, mode & 0o777)


def _wipe(root: str) -> None:
    """Remove everything below root (root itself stays: it is a mount point or slot dir).

    Entries belong to the slot's uid, so permission games (chmod 000) are undone
    by chmod; anything else raises and the host restarts the slot.
    """
    try:
        os.chmod(root, 0o755)
    except OSError:
        pass
    stack = [root]
    dirs = []
    while stack:
        d = stack.pop()
        try:
            it = list(os.scandir(d))
        except PermissionError:
            os.chmod(d, 0o700)
            it = list(os.scandir(d))
        for e in it:
            if e.is_dir(follow_symlinks=False):
                try:
                    os.chmod(e.path, 0o700)
                except OSError:
                    pass
                stack.append(e.path)
                dirs.append(e.path)
            else:
                os.unlink(e.path)
    for d in reversed(dirs):
        os.rmdir(d)


_HARD: dict[int, int] = {}


def rlimit_plan(lim: dict) -> list[tuple[int, tuple[int, int]]]:
    """setrlimit calls for one execution, computed in the server (the child only applies them)."""
    R = resource
    # no core files; no POSIX message queues (they would outlive the program)
    plan = [(R.RLIMIT_CORE, (0, 0)), (R.RLIMIT_MSGQUEUE, (0, 0))]
    cpu = lim.get("cpu")
    if cpu is not None:
        # soft limit sends SIGXCPU, hard limit one second later SIGKILL
        plan.append((R.RLIMIT_CPU, (int(cpu), int(cpu) + 1)))
    for which, key in ((R.RLIMIT_FSIZE, "fsize"), (R.RLIMIT_STACK, "stack"), (R.RLIMIT_NOFILE, "nofile"),
                       (R.RLIMIT_NPROC, "nproc"), (R.RLIMIT_AS, "as")):
        v = lim.get(key)
        if v is None:
            continue
        v = int(v)
        hard = _HARD.get(which)
        if hard is None:
            hard = _HARD[which] = R.getrlimit(which)[1]  # the server's hard limits never change
        if hard != R.RLIM_INFINITY and v > hard:
            v = hard
        plan.append((which, (v, v)))
    return plan


def apply_rlimits(plan: list) -> None:
    for which, value in plan:
        try:
            resource.setrlimit(which, value)
        except (ValueError, OSError):
            pass


# --------------------------------------------------------------------------- Python in the warm interpreter
#
# Work done in the forked child is expensive: every page it writes is copied
# (copy-on-write), ~3 us a page on this kind of VM.  So what does not depend on
# the program's behaviour is prepared in the server before the fork: the std
# streams (created on the very descriptors the child inherits), the compiled
# code (cached per build), the module loader.


def make_stream(fd: int, write: bool, errors: str, line_buffering: bool, name: str):
    """sys.stdin/stdout/stderr as CPython builds them (create_stdio), for a UTF-8 locale."""
    import io
    buf = io.open(fd, "wb" if write else "rb", buffering=-1, closefd=False)
    try:
        buf.raw.name = name
    except AttributeError:
        pass
    s = io.TextIOWrapper(buf, encoding="utf-8", errors=errors, newline="\n",
                         line_buffering=line_buffering, write_through=False)
    s.mode = "w" if write else "r"
    return s


def std_streams() -> tuple:
    """The three streams over the current fds 0, 1, 2."""
    return (make_stream(0, False, "surrogateescape", False, "<stdin>"),
            make_stream(1, True, "surrogateescape", False, "<stdout>"),
            make_stream(2, True, "backslashreplace", True, "<stderr>"))


def compile_main(path: str):
    """The program's code object, or None when it does not compile (the child then
    compiles it again so that the SyntaxError is reported by the program itself)."""
    try:
        with open(path, "rb") as f:
            source = f.read()
        return compile(source, path, "exec", dont_inherit=True)
    except BaseException:
        return None


def relocated(code):
    """A copy of `code` and of the code objects it holds (its functions' and classes'),
    allocated now: wherever the allocator puts them, not where the cached originals
    sit."""
    consts = code.co_consts
    if any(isinstance(c, types.CodeType) for c in consts):
        consts = tuple(relocated(c) if isinstance(c, types.CodeType) else c for c in consts)
    return code.replace(co_consts=consts)


def scattered_heap(seed: int) -> list:
    """Objects that take a random number (0-15) of blocks of every small-object size
    class of the allocator, and a few random-sized larger blocks: held across a fork,
    they move where the child's own allocations land, by chance (see
    `Server.execute`, ``layout: random``)."""
    held: list = []
    r = seed
    for size in range(16, 513, 16):  # pymalloc's size classes (16-byte alignment)
        r = (r * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        k = (r >> 33) % 16
        if size == 16:
            held += [object() for _ in range(k)]
        elif size == 32:
            held += [float(i) + 0.5 for i in range(k)]
        else:  # a bytes object of n bytes takes n + 33
            held += [bytes(size - 33) for _ in range(k)]
    for _ in range(4):
        r = (r * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        held.append(bytes(513 + (r >> 33) % 16384))
    return held


def imported_modules(code) -> set[str]:
    """Names of the imports (``import a.b``, ``from a import b``) in `code` and in the
    functions and classes it defines, read from the bytecode (the host lists a run's
    PRELOAD candidates with it).  Imports built at run time (``__import__(name)``) are
    not seen; a relative import names its module without the dots."""
    try:
        import opcode
        imp, ext = opcode.opmap["IMPORT_NAME"], opcode.opmap["EXTENDED_ARG"]
    except (ImportError, KeyError):
        return set()
    found: set[str] = set()
    todo = [code]
    while todo:
        co = todo.pop()
        raw, names, arg = co.co_code, co.co_names, 0
        for i in range(0, len(raw) - 1, 2):
            op = raw[i]
            arg = arg << 8 | raw[i + 1]
            if op == ext:
                continue
            if op == imp and arg < len(names):
                found.add(names[arg])
            arg = 0
        todo.extend(c for c in co.co_consts if isinstance(c, types.CodeType))
    return found


def _report(exc: BaseException, skip_frames: int) -> None:
    """Print an uncaught exception as the interpreter does, without our frames."""
    tb = exc.__traceback__
    for _ in range(skip_frames):
        if tb is not None:
            tb = tb.tb_next
    try:
        # the default hook prints exc.__traceback__, so the runner's frame goes there too
        exc.__traceback__ = tb
        sys.excepthook(type(exc), exc, tb)
    except BaseException:
        pass


def _exit_code_of(exc: SystemExit) -> int:
    c = exc.code
    if c is None:
        return 0
    if isinstance(c, int):
        return c & 0xFF
    try:
        print(c, file=sys.stderr)
    except BaseException:
        pass
    return 1


def python_process_state(argv: list[str], streams=None) -> None:
    """sys.argv and sys.orig_argv for a program run with `argv` (and, given
    `streams`, the std streams and excepthook), set only where they differ."""
    if sys.argv != argv:
        sys.argv = list(argv)
    orig = [sys.executable, "-E", "-s", "-S", *argv]
    if sys.orig_argv != orig:
        sys.orig_argv = orig
    if sys.excepthook is not sys.__excepthook__:
        sys.excepthook = sys.__excepthook__
    if streams is not None and (sys.stdout is not streams[1] or sys.__stderr__ is not streams[2]):
        sys.stdin, sys.stdout, sys.stderr = streams
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams


def main_module(path: str, loader=None):
    """A fresh ``__main__`` module for the program at `path`."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __loader__=loader, __spec__=None,
                         __builtins__=builtins, __annotations__={}, __package__=None)
    return main


def run_python_main(path: str, argv: list[str], code, streams) -> int:
    """Run a Python program like ``python3 -E -s -S <path>`` would, in this forked child.

    The forking server has made ``sys.modules["__main__"]`` a fresh module for
    `path`, ``sys.path[0]`` its directory (`Server.prepare_main`), and the std
    streams on fds 0/1/2 with the interpreter's settings; SystemExit and uncaught
    exceptions are handled as the interpreter does.  Differences from a fresh
    interpreter: the PRELOAD modules it imports (and those earlier programs of the
    slot imported) are already imported, unless its own folder has a module of that
    name (`Server.shadowed`); the string hash seed is the server's; `exit`/`quit`
    exist as with `site`.  `code` is the compiled program (None: compiled here, so
    that its SyntaxError is the program's own).  Returns the exit code.
    """
    # (atexit, builtins, types: module globals; an import statement here would walk the
    # import machinery in every child, ~25 page copies)
    # Every page this forked process writes is copied, so what the server already
    # set up (`python_process_state`: streams, excepthook, argv) is only checked
    # here, not set again: reading a page is free.
    main = sys.modules["__main__"]
    python_process_state(argv, streams)
    if atexit._ncallbacks():
        atexit._clear()

    code_ = 0
    try:
        if code is None:
            try:
                with open(path, "rb") as f:
                    source = f.read()
            except OSError as e:
                print(f"{sys.executable}: can't open file {path!r}: [Errno {e.errno}] {e.strerror}",
                      file=sys.stderr)
                source = None
                code_ = 2
        if code is not None or source is not None:
            try:
                if code is None:
                    code = compile(source, path, "exec", dont_inherit=True)
                exec(code, main.__dict__)
            except SystemExit as e:
                code_ = _exit_code_of(e)
            except KeyboardInterrupt as e:
                _report(e, 1)
                code_ = 130
            except BaseException as e:  # what the interpreter prints for uncaught exceptions
                # a SyntaxError raised by compile() has no frame of the program: skip ours only
                _report(e, 1)
                code_ = 1
        threading = sys.modules.get("threading")
        if threading is not None:
            try:
                threading._shutdown()  # wait for non-daemon threads, as interpreter exit does
            except BaseException:
                pass
        try:
            atexit._run_exitfuncs()
        except SystemExit as e:
            code_ = _exit_code_of(e)
        except BaseException:
            pass
    except SystemExit as e:  # raised from an excepthook or a thread shutdown
        code_ = _exit_code_of(e)
    except BaseException:
        code_ = code_ or 1
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except BaseException:
            if s is sys.stdout:
                code_ = 120  # what CPython does when flushing stdout fails at exit
    for s in streams[1:]:
        try:
            s.flush()
        except BaseException:
            pass
    return code_


# --------------------------------------------------------------------------- the server

class Server:
    """One slot's supervisor; see the module docstring for the execution cycle."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.box: str = cfg["box"]
        self.tmp_dirs: list[str] = list(cfg.get("wipe", []))
        self.pid1 = os.getpid() == 1
        # kill(-1) is only safe when everything we may signal belongs to this slot
        self.kill_all = bool(cfg.get("kill_all")) or self.pid1
        self.env = dict(os.environ)
        self.env.update(cfg.get("env", {}))
        # protocol descriptors move out of 0/1; 0/1/2 become /dev/null
        self.inp = os.dup(0)
        self.out = os.dup(1)
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1) if cfg.get("keep_stderr") else (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        self.null = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
        self.null_rw = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
        self.stderr_fd = os.dup(2)  # what fd 2 is between executions (/dev/null or the debug log)
        os.set_inheritable(self.stderr_fd, False)
        self.codes: dict = {}
        self.loaders: dict = {}
        self.mains: dict = {}
        self.run_paths: dict = {}
        self.own_path = sys.path
        for fd in (self.inp, self.out):
            os.set_inheritable(fd, False)
            try:
                fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE)
            except OSError:
                pass
        self.reader = _Reader(self.inp)
        self.maxfd = 1 << 16

    # ----- lifecycle

    def setup(self) -> None:
        # a previous server of this slot may have died mid-run (rlimits mode)
        for d in [self.box, *self.tmp_dirs]:
            try:
                _wipe(d)
            except OSError:
                pass
        _prctl(PR_SET_DUMPABLE, 0)
        if not self.pid1:
            _prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of the program come back to us
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        # as PID 1 of a namespace, signals without a handler are not delivered from inside
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.reseed = None
        real_register = os.register_at_fork

        def register(**hooks):
            # `random` reseeds its generator in every forked child (an at-fork hook):
            # ~35 copy-on-write page faults per child, C programs included.  The
            # server reseeds before forking a Python program instead (the child
            # inherits fresh state) and the child registers the hook again for the
            # program's own forks (see `child`)
            rnd = sys.modules.get("random")
            hook = hooks.get("after_in_child")
            if rnd is not None and hook is not None and getattr(hook, "__self__", None) is getattr(rnd, "_inst", 0):
                self.reseed = hooks.pop("after_in_child")
            if hooks:
                real_register(**hooks)
        self.register_at_fork = register
        self.preload(BASE_IMPORTS)
        sys.dont_write_bytecode = False
        try:
            import builtins
            import _sitebuiltins  # what `site` would add; programs call exit() a lot
            builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
            builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
        except ImportError:
            pass
        _prctl(PR_SET_DUMPABLE, 0)  # (again: resolves the ctypes function before the freeze)
        rlimit_plan({"fsize": 1, "stack": 1, "nofile": 1, "nproc": 1, "as": 1})  # caches hard limits
        self.streams = self.make_streams()
        try:
            self.filter = prepare_seccomp()
        except Exception:
            self.filter = None
        self.seccomp = self.filter is not None
        import gc
        gc.collect()
        gc.freeze()  # keep the warm heap shared copy-on-write with children
        try:
            import ctypes
            ctypes.CDLL(None).malloc_trim(0)  # a smaller heap is a cheaper fork
        except Exception:
            pass

    def preload(self, names) -> None:
        """Import the modules `names` here, once, so forked programs find them imported
        (at start: BASE_IMPORTS; before a program runs: its PRELOAD modules).  What they
        import is frozen out of the garbage collector's reach, as the start-up heap is."""
        new = [n for n in names if n not in sys.modules]
        if not new:
            return
        real, os.register_at_fork = os.register_at_fork, self.register_at_fork
        write, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # never into the stdlib
        own, sys.path = sys.path, self.own_path  # (a program's directory never shadows one)
        try:
            for name in new:
                try:
                    __import__(name)
                except Exception:
                    pass
        finally:
            os.register_at_fork, sys.dont_write_bytecode, sys.path = real, write, own
        if hasattr(self, "streams"):  # (after start-up; `setup` freezes the start-up heap)
            import gc
            gc.collect()
            gc.freeze()

    def send(self, header: dict, blobs=()) -> None:
        _write_all(self.out, pack_frame(header, list(blobs)))

    def serve(self) -> None:
        self.setup()
        self.send({"op": "ready", "protocol": PROTOCOL, "pid": os.getpid(), "uid": os.getuid(),
                   "python": sys.version.split()[0], "executable": sys.executable,
                   "seccomp": self.seccomp})
        while True:
            try:
                hdr = self.reader.header()
            except EOFError:
                return
            op = hdr.get("op")
            if op == "run":
                resp, blobs = self.handle_run(hdr)
                self.send(resp, blobs)
            elif op == "ping":
                self.send({"op": "pong", "id": hdr.get("id")})
            else:
                return

    # ----- one execution

    def receive_payloads(self, hdr: dict) -> tuple[int | None, str | None]:
        """Consume every payload of the request: files into the box, stdin into a memfd."""
        lens = hdr.get("blobs", [])
        targets: dict[int, tuple] = {}
        for rel, idx, mode in hdr.get("files", []):
            targets[idx] = ("file", rel, mode)
        sidx = hdr.get("stdin")
        if sidx is not None:
            targets[sidx] = ("stdin",)
        stdin_fd = None
        err = None
        for i, n in enumerate(lens):
            t = targets.get(i)
            fd = None
            try:
                if err is None and t is not None:
                    if t[0] == "stdin":
                        stdin_fd = fd = os.memfd_create("stdin", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
                    else:
                        fd = _open_for_write(self.box, t[1], t[2])
            except (OSError, ValueError) as e:
                err = f"cannot write {t[1] if t and len(t) > 1 else 'stdin'}: {e}"
            e2 = self.reader.copy_to(n, fd)
            if fd is not None and fd != stdin_fd:
                os.close(fd)
            if e2 and err is None:
                err = f"writing request payload: {e2}"
        if stdin_fd is not None:
            try:
                # the program may read its input, never change it
                fcntl.fcntl(stdin_fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK
                            | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
            except (OSError, AttributeError):
                pass
            os.lseek(stdin_fd, 0, os.SEEK_SET)
        return stdin_fd, err

    def handle_run(self, hdr: dict) -> tuple[dict, list[bytes]]:
        rid = hdr.get("id")
        stdin_fd = None
        self.ran = False
        try:
            stdin_fd, prep_err = self.receive_payloads(hdr)
            if prep_err:
                return self.finish({"op": "result", "id": rid, "error": prep_err, "ran": False}, [])
            resp, blobs = self.execute(hdr, stdin_fd)
            resp["id"] = rid
            return resp, blobs
        except EOFError:
            raise SystemExit(0)
        except Exception as e:  # infrastructure failure inside the server
            return self.finish({"op": "result", "id": rid, "ran": self.ran,
                                "error": f"server: {type(e).__name__}: {e}"}, [])
        finally:
            self.restore_path()
            if stdin_fd is not None:
                os.close(stdin_fd)

    def finish(self, resp: dict, blobs: list[bytes], killed: bool = False) -> tuple[dict, list[bytes]]:
        if not killed:  # (execute kills and reaps everything as soon as the program ends)
            self.kill_everything()
        try:
            for d in [self.box, *self.tmp_dirs]:
                _wipe(d)
        except OSError as e:
            resp["dirty"] = f"{e}"  # host restarts the slot
        return resp, blobs

    def execute(self, hdr: dict, stdin_fd: int | None) -> tuple[dict, list[bytes]]:
        lim = hdr.get("limits", {})
        cap = int(lim.get("out", 1 << 20))
        wall = float(lim.get("wall", 10.0))
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        for fd in (out_r, err_r):
            # room for what most programs print without a reader (see the first wait
            # below); pipe pages come only as they are written
            try:
                fcntl.fcntl(fd, F_SETPIPE_SZ, FIRST_PIPE_SIZE)
            except OSError:
                pass
        in_fd = stdin_fd if stdin_fd is not None else self.null
        py = hdr.get("python")
        # exec failures are reported through a close-on-exec pipe; a Python program
        # runs here and must not hold it (it could forge a report)
        x_r, x_w = os.pipe2(os.O_CLOEXEC) if py is None else (-1, -1)
        grown = set()
        prep = drop = scatter = None
        if py is not None:
            main = _safe_rel(py["main"])
            path = os.path.join(self.box, main)
            # (argv0 "path": the absolute path, as `harness.LAUNCHER` sets it)
            code, local = self.program_for(hdr, main, path)
            prep = (path, [path if py.get("argv0") == "path" else main, *[str(a) for a in py.get("argv", [])]],
                    code)
            drop = self.shadowed(local) if local else None
            # set before the fork, so the child only reads it (a write there is a page copy)
            python_process_state(prep[1], self.streams)
            self.prepare_main(path, self.loader_for(path))
            if hdr.get("layout") == "random" and code is not None:
                # A timed run: the program's objects and code land where chance puts them.
                # A forked interpreter has no address-space randomization of its own, and
                # where the allocator places the program's hot objects follows this
                # process's history (the requests it read, the builds it compiled): a
                # fixed, build-dependent layout measurably favours some builds over
                # identical others (up to ~3 % here).  Scattered, it is noise that the
                # repeated, paired timings average out.
                scatter = scattered_heap(int.from_bytes(os.urandom(8), "little"))
                prep = (prep[0], prep[1], relocated(code))
            if self.reseed is not None:
                self.reseed()
        # the server itself wires 0/1/2 for the child to inherit (and builds the
        # Python streams on them here, where it costs no copy-on-write)
        os.dup2(in_fd, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        streams = self.streams if prep is not None else None
        plan = rlimit_plan(lim)
        # everything the supervision loop needs exists before the fork: while the
        # child lives, every page this process writes is copied (~2 us a page)
        bufs = {out_r: bytearray(), err_r: bytearray()}
        trunc = {out_r: False, err_r: False}
        killed = None
        status = rusage = None
        poller = select.poll()
        for fd in (out_r, err_r):
            poller.register(fd, select.POLLIN)
        first = select.poll()
        open_streams = 2
        exited = False
        # total resident memory of the program's processes, sampled: RLIMIT_AS is per
        # process and counts reservations, this is what the machine actually gives
        rss_cap = lim.get("rss")
        peak = 0
        start = time.monotonic()
        deadline = start + wall
        next_mem = start + MEM_FIRST
        self.ran = True
        pid = os.fork()
        if pid == 0:  # ---------------------------------------------- child
            code = 127
            try:
                code = self.child(hdr, plan, x_w, prep, streams, drop)
            except BaseException as e:
                if x_w >= 0:
                    try:
                        os.write(x_w, f"{type(e).__name__}: {e}".encode()[:2000])
                    except BaseException:
                        pass
            os._exit(code)
        # -------------------------------------------------------------- parent
        # (fds 0/1/2 still hold the child's pipes: they are reset after it exits)
        os.close(out_w)
        os.close(err_w)
        if x_w >= 0:
            os.close(x_w)
        try:
            pidfd = os.pidfd_open(pid)
            poller.register(pidfd, select.POLLIN)
        except (OSError, AttributeError):
            pidfd = None
        else:
            # Most programs end within FIRST_WAIT with their output in the pipes: a first
            # wait for the exit alone, then one drain, spares the wakeups on each write,
            # which come while the program lives and copy every page this process
            # touches (a writer that fills a pipe meanwhile waits at most FIRST_WAIT).
            first.register(pidfd, select.POLLIN)
            exited = bool(first.poll(max(1, int(min(FIRST_WAIT, wall) * 1000))))
        while not exited:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                killed = "wall"
                break
            if rss_cap is not None and now >= next_mem:
                rss, pids = self.tree_rss()
                wait = MEM_EVERY
                if rss > rss_cap:
                    # resident sizes count pages shared copy-on-write between forked
                    # processes once per process; the proportional size does not
                    rss = self.tree_pss(pids)
                    wait = max(MEM_EVERY, 4 * (time.monotonic() - now))
                peak = max(peak, rss)
                if rss > rss_cap:
                    killed = "memory"
                    break
                next_mem = now + wait
            timeout = left if pidfd is not None else min(left, 0.005)
            if rss_cap is not None:
                timeout = min(timeout, max(next_mem - now, 0.0005))
            for fd, _ev in poller.poll(max(1, int(timeout * 1000 + 0.999))):
                if fd == pidfd:
                    exited = True
                    continue
                data = os.read(fd, SMALL_READ)
                if len(data) == SMALL_READ and fd not in grown:
                    grown.add(fd)  # a big writer: fewer wakeups with a bigger pipe
                    try:
                        fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE)
                    except OSError:
                        pass
                if not data:
                    poller.unregister(fd)
                    open_streams -= 1
                    continue
                b = bufs[fd]
                room = cap - len(b)
                if len(data) > room:
                    b += data[:max(room, 0)]
                    trunc[fd] = True
                    killed = "output"
                else:
                    b += data
            if killed:
                break
            if pidfd is None:
                wpid, st, ru = os.wait4(pid, os.WNOHANG)
                if wpid:
                    status, rusage, exited = st, ru, True
            if exited:
                break
        if status is None:
            if not exited:
                self.signal_all(pid)
            _, status, rusage = os.wait4(pid, 0)
        end = time.monotonic()
        os.dup2(self.null_rw, 0)
        os.dup2(self.null_rw, 1)
        os.dup2(self.stderr_fd, 2)
        # the CPU of every other process of the run counts too: a program must not hide
        # its work in a child it never waits for (nor in one still running at its exit)
        other_cpu, other_rss = self.kill_everything()
        # every writer is dead now: drain what is left in the pipes
        for fd in (out_r, err_r):
            if self.drain(fd, bufs[fd], cap):
                trunc[fd] = True
                if killed is None:
                    killed = "output"
        exec_error = None
        if x_r >= 0:
            try:
                os.set_blocking(x_r, False)
                xe = os.read(x_r, 4096)
                exec_error = xe.decode("utf-8", "replace") if xe else None
            except (BlockingIOError, OSError):
                pass
            os.close(x_r)
        for fd in (out_r, err_r) + ((pidfd,) if pidfd is not None else ()):
            os.close(fd)
        resp = {
            "op": "result",
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "cpu_s": rusage.ru_utime + rusage.ru_stime + other_cpu,
            "wall_s": end - start,
            "maxrss_kb": max(rusage.ru_maxrss, other_rss, peak // 1024),
            "killed": killed,
            "out_trunc": trunc[out_r],
            "err_trunc": trunc[err_r],
            "exec_error": exec_error,
        }
        blobs = [bytes(bufs[out_r]), bytes(bufs[err_r])]
        del scatter  # (held until the program is gone: freed earlier, a page copy each)
        resp["collected"] = self.collect(hdr, blobs)
        return self.finish(resp, blobs, killed=True)

    @staticmethod
    def drain(fd: int, buf: bytearray, cap: int) -> bool:
        """Read what is left in a pipe whose writers are gone; True if it overflowed the cap."""
        os.set_blocking(fd, False)
        while True:
            try:
                data = os.read(fd, SMALL_READ)
            except BlockingIOError:
                return False
            if not data:
                return False
            room = cap - len(buf)
            if len(data) > room:
                buf += data[:max(room, 0)]
                return True
            buf += data

    def collect(self, hdr: dict, blobs: list[bytes]) -> list:
        """Append the requested regular files of the run directory (compiler output) to blobs."""
        collected = []
        cmax = int(hdr.get("collect_max", 0))
        for rel in hdr.get("collect", []):
            try:
                fd = os.open(os.path.join(self.box, _safe_rel(rel)),
                             os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
            except (OSError, ValueError):
                continue
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_size > cmax:
                    continue
                data = b""
                while len(data) < st.st_size:
                    part = os.read(fd, st.st_size - len(data))
                    if not part:
                        break
                    data += part
                cmax -= len(data)
                collected.append([rel, len(blobs), st.st_mode & 0o777])
                blobs.append(data)
            finally:
                os.close(fd)
        return collected

    def make_streams(self) -> tuple:
        """Python's std streams for every child, made once.

        They only name fds 0/1/2; this process never reads or writes through them,
        so each child starts with pristine ones.  They are made while 0/1/2 are of
        the kinds a child gets (a regular file, two pipes): the streams record
        whether their file is seekable.
        """
        stdin = os.memfd_create("stdin", os.MFD_CLOEXEC)
        r1, w1 = os.pipe2(os.O_CLOEXEC)
        r2, w2 = os.pipe2(os.O_CLOEXEC)
        try:
            os.dup2(stdin, 0)
            os.dup2(w1, 1)
            os.dup2(w2, 2)
            streams = std_streams()
            for s in streams:
                s.seekable()  # cache it now
        finally:
            os.dup2(self.null_rw, 0)
            os.dup2(self.null_rw, 1)
            os.dup2(self.stderr_fd, 2)
            for fd in (stdin, r1, w1, r2, w2):
                os.close(fd)
        return streams

    def program_for(self, hdr: dict, main: str, path: str) -> tuple:
        """(compiled main file, the top-level modules the run's files put next to it).
        The code is cached per build (build keys are content hashes).  The PRELOAD
        modules the host lists (``python.preload``: imported by any Python file of the
        run, the main file or e.g. a driver's candidate in a folder of its own) are
        imported here first."""
        local = self.local_modules(hdr, main)
        b = hdr.get("build")
        key = (b, main)
        code = self.codes.get(key, False) if isinstance(b, str) else False
        if code is False:
            code = compile_main(path)
            if isinstance(b, str):
                if len(self.codes) >= 16:
                    self.codes.pop(next(iter(self.codes)))
                self.codes[key] = code
        listed = hdr["python"].get("preload")
        if listed and isinstance(listed, list):
            self.preload(self.wanted(listed, local))
        return code, local

    @staticmethod
    def wanted(names, local: frozenset) -> list[str]:
        """The PRELOAD modules among `names` (``a.b`` also names ``a``) that are not the
        program's own (`local`), not imported yet, in a stable order."""
        out = set()
        for name in names:
            if not isinstance(name, str):
                continue
            top = name.partition(".")[0]
            if top not in local:
                out.update(n for n in (top, name) if n in PRELOAD and n not in sys.modules)
        return sorted(out)

    @staticmethod
    def local_modules(hdr: dict, main: str) -> frozenset:
        """Top-level modules importable from the main file's folder, from the files this
        request lays out (the run directory holds nothing else): ``x.py``, ``x.pyc``,
        extension modules (``x.<anything>.so``), packages (``x/__init__.py``)."""
        folder = main.rpartition("/")[0]
        prefix = folder + "/" if folder else ""
        names = set()
        for f in hdr.get("files", ()):
            rel = f[0] if isinstance(f, list) and f and isinstance(f[0], str) else ""
            if not rel.startswith(prefix) or rel == main:
                continue
            first, sep, rest = rel[len(prefix):].partition("/")
            if sep:
                if rest in ("__init__.py", "__init__.pyc"):
                    names.add(first)
            elif first.endswith((".py", ".pyc", ".so")):
                names.add(first.partition(".")[0])
        return frozenset(names)

    @staticmethod
    def shadowed(local: frozenset) -> list[str]:
        """Modules imported in this server that a program's own module of the same name
        hides (``python3 prog.py`` would import the program's: its folder comes first on
        sys.path), with their submodules.  Modules a fresh interpreter has imported
        before any program runs (`FRESH_MODULES`) stay, as they would there."""
        out = []
        for name in local:
            if name in sys.modules and name not in FRESH_MODULES:
                out.append(name)
                out += [m for m in sys.modules if m.startswith(name + ".")]
        return out

    def prepare_main(self, path: str, loader) -> None:
        """``sys.modules["__main__"]`` and ``sys.path`` as the program at `path` starts with,
        set here before the fork rather than in every child (each write there is a page
        copy).  The module is made once per path and stays pristine: a child's writes to
        it are its own copies.  `restore_path` (after every run, in `handle_run`) gives
        the server its own path back."""
        main = self.mains.get(path)
        if main is None or main.__loader__ is not loader:
            if len(self.mains) >= 16:
                self.mains.pop(next(iter(self.mains)))
            main = self.mains[path] = main_module(path, loader)
        if sys.modules.get("__main__") is not main:
            sys.modules["__main__"] = main
        p0 = os.path.dirname(path) or self.box
        run_path = self.run_paths.get(p0)
        if run_path is None:
            if len(self.run_paths) >= 16:
                self.run_paths.pop(next(iter(self.run_paths)))
            run_path = self.run_paths[p0] = [p0, *self.own_path]
        sys.path = run_path

    def restore_path(self) -> None:
        """The server's own import path (a program's directory must never shadow a
        module the server imports)."""
        if sys.path is not self.own_path:
            sys.path = self.own_path

    def loader_for(self, path: str):
        ld = self.loaders.get(path)
        if ld is None and len(self.loaders) < 16:
            try:
                import importlib.machinery
                ld = self.loaders[path] = importlib.machinery.SourceFileLoader("__main__", path)
            except ImportError:
                pass
        return ld

    def child(self, hdr: dict, plan: list, x_w: int, prep, streams, drop=None) -> int:
        os.setsid()
        if x_w >= 0:
            os.closerange(3, x_w)
            os.closerange(x_w + 1, self.maxfd)
        else:
            os.closerange(3, self.maxfd)
        os.chdir(self.box)
        if prep is not None:
            # SIGINT stays ignored (as in the server): resetting it costs every run ~0.1 ms
            apply_rlimits(plan)
            _prctl(PR_SET_DUMPABLE, 1)  # the program's own /proc entries stay readable to it
            if self.filter is not None and not self.filter.apply():
                raise OSError("the seccomp filter could not be applied")
            if self.reseed is not None:  # the program's forks reseed `random`, as in CPython
                os.register_at_fork(after_in_child=self.reseed)
            for name in drop or ():
                sys.modules.pop(name, None)
            return run_python_main(*prep, streams)
        argv = [str(a) for a in hdr["exec"]]
        env = dict(self.env)
        env.update({str(k): str(v) for k, v in hdr.get("env", {}).items()})
        for s in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
            signal.signal(s, signal.SIG_DFL)
        apply_rlimits(plan)
        if self.filter is not None and not self.filter.apply():
            os.write(x_w, b"the seccomp filter could not be applied")
            return 127
        try:
            os.execvpe(argv[0], argv, env)
        except OSError as e:
            os.write(x_w, f"cannot execute {argv[0]!r}: [Errno {e.errno}] {e.strerror}".encode()[:2000])
        return 127

    # ----- killing

    def signal_all(self, pid: int) -> None:
        if self.kill_all:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
        else:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def tree_pss(self, pids: list[int]) -> int:
        """Proportional resident bytes of `pids` (exact, but costs a page-table walk)."""
        total = 0
        for p in pids:
            try:
                with open(f"/proc/{p}/smaps_rollup", "rb") as f:
                    for line in f:
                        if line.startswith(b"Pss:"):
                            total += int(line.split()[1]) * 1024
                            break
            except (OSError, ValueError, IndexError):
                try:
                    with open(f"/proc/{p}/statm", "rb") as f:
                        total += int(f.read().split()[1]) * PAGE
                except (OSError, ValueError, IndexError):
                    pass
        return total

    def tree_rss(self) -> tuple[int, list[int]]:
        """Resident bytes of every process of the slot but this one, and their pids."""
        total = 0
        if self.pid1:
            pids = [int(d) for d in os.listdir("/proc") if d.isdigit() and d != "1"]
        else:
            pids, seen, stack = [], set(), self._children()
            while stack:  # the program's tree (orphans come back to us as subreaper)
                p = stack.pop()
                if p in seen:
                    continue
                seen.add(p)
                pids.append(p)
                try:
                    for tid in os.listdir(f"/proc/{p}/task"):
                        with open(f"/proc/{p}/task/{tid}/children", "rb") as f:
                            stack.extend(int(x) for x in f.read().split())
                except (OSError, ValueError):
                    pass
        for p in pids:
            try:
                with open(f"/proc/{p}/statm", "rb") as f:
                    total += int(f.read().split()[1]) * PAGE
            except (OSError, ValueError, IndexError):
                pass
        return total, pids

    def _children(self) -> list[int]:
        me = os.getpid()
        try:
            with open(f"/proc/{me}/task/{me}/children") as f:
                return [int(x) for x in f.read().split()]
        except OSError:
            return []

    def kill_everything(self) -> tuple[float, int]:
        """Kill and reap every process of the slot except this one; returns the CPU
        seconds (user + system, their reaped descendants included) and the largest
        max RSS (KiB) of the processes reaped."""
        cpu, rss = 0.0, 0

        def reaped(ru) -> None:
            nonlocal cpu, rss
            cpu += ru.ru_utime + ru.ru_stime
            rss = max(rss, ru.ru_maxrss)
        if self.pid1:
            # every process of the namespace descends from PID 1: no child left (the
            # program reaped, nothing else started) means nothing to kill -- the common
            # case, spared the kill(-1) scan of every task of the machine
            try:
                pid, _, ru = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return cpu, rss
            if pid:
                reaped(ru)
        if self.kill_all:
            while True:
                try:
                    os.kill(-1, signal.SIGKILL)
                except OSError:
                    pass
                try:
                    reaped(os.wait4(-1, 0)[2])
                except ChildProcessError:
                    return cpu, rss
                except InterruptedError:
                    continue
        # shared uid (rlimits mode without root): we are a subreaper, so every
        # orphan of the program is our child; kill children until none is left
        for _ in range(10000):
            kids = self._children()
            if not kids:
                break
            for k in kids:
                try:
                    os.killpg(k, signal.SIGKILL)
                except OSError:
                    pass
                try:
                    os.kill(k, signal.SIGKILL)
                except OSError:
                    pass
            for k in kids:
                try:
                    reaped(os.wait4(k, 0)[2])
                except ChildProcessError:
                    pass
        while True:
            try:
                pid, _, ru = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            reaped(ru)
        return cpu, rss


def main() -> None:
    cfg = json.loads(sys.argv[1])
    Server(cfg).serve()


if __name__ == "__main__":
    main()
