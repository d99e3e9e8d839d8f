"""Python programs in the warm interpreter: what the server prepares before a fork, what the child runs.

Work done in the forked child is expensive: every page it writes is copied
(copy-on-write), ~3 us a page on this kind of VM.  So what does not depend on
the program's behaviour is prepared in the server before the fork (`PythonPrep`:
the compiled code, cached per build, the ``__main__`` module, ``sys.path``, the
module loader; `std_streams` on the descriptors the child inherits), and the
child only runs the program (`run_python_main`).
"""

from __future__ import annotations

import atexit
import builtins
import os
import sys
import types

from codegym.sandbox.forkserver import FRESH_MODULES

#: stdlib modules the server imports at start (besides its own imports above)
BASE_IMPORTS = ("_sitebuiltins", "importlib.machinery")
#: stdlib modules the server imports before it forks a Python program that imports
#: them (the host lists the imports of the run's Python files, ``python.preload``;
#: see `codegym.sandbox.requests.imported_modules`), so that the program starts warm.
#: They stay imported for every later run of the slot; a program that imports none of them forks from a
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


def make_stream(fd: int, write: bool, errors: str, line_buffering: bool, name: str):
    """sys.stdin/stdout/stderr as CPython builds them (create_stdio), for a UTF-8 locale."""
    import io  # noqa: PLC0415
    buf = open(fd, "wb" if write else "rb", buffering=-1, closefd=False)
    try:
        buf.raw.name = name  # type: ignore[attr-defined]  # (a FileIO; typeshed's `raw` is a RawIOBase)
    except AttributeError:
        pass
    s = io.TextIOWrapper(buf, encoding="utf-8", errors=errors, newline="\n",
                         line_buffering=line_buffering, write_through=False)
    s.mode = "w" if write else "r"  # type: ignore[misc]  # (as open() sets it; typeshed: read-only)
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
    `Server.prepare_python`, ``layout: random``)."""
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
    if getattr(sys, "orig_argv", orig) != orig:  # (3.10+; Python 3.9 has no sys.orig_argv)
        sys.orig_argv = orig
    if sys.excepthook is not sys.__excepthook__:
        sys.excepthook = sys.__excepthook__
    if streams is not None and (sys.stdout is not streams[1] or sys.__stderr__ is not streams[2]):
        sys.stdin, sys.stdout, sys.stderr = streams
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]  # (typeshed: Final)


def main_module(path: str, loader=None):
    """A fresh ``__main__`` module for the program at `path`."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __loader__=loader, __spec__=None,
                         __builtins__=builtins, __annotations__={}, __package__=None)
    return main


def run_python_main(path: str, argv: list[str], code, streams) -> int:
    """Run a Python program like ``python3 -E -s -S <path>`` would, in this forked child.

    The forking server has made ``sys.modules["__main__"]`` a fresh module for
    `path`, ``sys.path[0]`` its directory (`PythonPrep.prepare_main`), and the std
    streams on fds 0/1/2 with the interpreter's settings; SystemExit and uncaught
    exceptions are handled as the interpreter does.  Differences from a fresh
    interpreter: the PRELOAD modules it imports (and those earlier programs of the
    slot imported) are already imported, unless its own folder has a module of that
    name (`PythonPrep.shadowed`); the string hash seed is the server's; `exit`/`quit`
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
                    code = compile(source or "", path, "exec", dont_inherit=True)  # (source: read above)
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


class PythonPrep:
    """The server's per-program state for Python runs: compiled code per build, ``__main__``
    modules, loaders and import paths per path (each cache holds at most 16)."""

    def __init__(self, box: str, preload):
        self.box = box
        self.preload = preload  # the server's `Server.preload`
        self.codes: dict = {}
        self.loaders: dict = {}
        self.mains: dict = {}
        self.run_paths: dict = {}
        self.own_path = sys.path

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
        out: set[str] = set()
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
                import importlib.machinery  # noqa: PLC0415
                ld = self.loaders[path] = importlib.machinery.SourceFileLoader("__main__", path)
            except ImportError:
                pass
        return ld
