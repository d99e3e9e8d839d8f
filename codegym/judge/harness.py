"""Trusted drivers run in the sandbox, and the host side of their protocols.

Owns the programs the judge runs *around* untrusted code and how their output
is read back:

- `FUNCTION_DRIVER` (function tasks): reads a JSON request on stdin, imports the
  candidate module, calls the entry point (``f`` or ``Solution.method``) once
  per case under a per-case CPU/wall guard (``signal.setitimer``), serialises
  each return value in the child (`encode` rules below) and writes one frame per
  case, ``@cg <nonce> <json>``, to a private duplicate of the original stdout.
  The candidate's own prints go to a small in-memory buffer and raw writes to
  fd 1 land in stderr, so they cannot corrupt the channel. Expected values
  never enter the sandbox: the host decodes the values (`decode_value`) into
  plain data and compares them itself (`codegym.judge.checkers.ValueChecker`), so an
  object whose ``__eq__`` always returns True, a patched ``json`` or a faked
  frame can at most produce *some* value -- exactly what returning it would do.
- `SCRIPT_DRIVER` (script tasks, Python): runs the candidate's module and then
  assert-style test code (HumanEval ``check(candidate)`` or plain asserts).
  A run passes only if the host finds ``<nonce> PASS`` on stdout and the
  process exited cleanly, where the nonce is a fresh 128-bit secret per run
  that the untrusted code cannot learn (see "Script driver defences").
- `script_program` (script tasks, other languages): candidate + tests +
  an epilogue printing the nonce read from stdin (weaker; see residual risks).
- `LAUNCHER`: runs a hidden Python program (a reference solution, a checker)
  passed as extra files of each run, because the sandbox's build store is
  readable by every run (see residual risks). Python candidates are run the
  same way (stdio through the launcher, function/script drivers with the
  candidate's files as extra files): the store only ever holds the drivers.
- `COMMAND_RUNNER` (repo tasks): runs a test command and returns its output and
  junit XML; `parse_test_report` reads pytest junit XML, pytest ``-rA`` summary
  lines, or a generic "N passed, M failed" line.

Value encoding (function driver -> host), JSON with tags. JSON objects only
ever appear as tags ``{"#": tag, "v": ...}``: ``tuple``, ``set``,
``frozenset``, ``dict`` (list of [key, value] pairs, so non-string keys
survive), ``bytes`` (base64), ``float`` ("nan", "inf", "-inf"), ``int`` (hex,
for |x| >= 2**63: no 4300-digit str limit), ``complex``, and ``repr`` (value
could not be serialised; never equal to anything). Subclasses of builtin data
types are converted to the base type by C-level copies; objects with a
``tolist()`` method (numpy) are converted through it. A value whose encoding
exceeds the cap (default 1 MiB) fails the case with output_limit.

Script driver defences (what a candidate cannot do to fake a pass):

1. Fresh interpreter. The sandbox runs Python in a warm fork-server
   interpreter that has ``_ctypes`` loaded (raw memory reads through
   ``c_char_p(addr).value`` raise no audit event); the driver re-``exec``s a
   fresh ``python3 -E -s -S -B`` first, so no native-access module is loaded.
2. The nonce is read from stdin (a memfd) with ``os.read`` before any untrusted
   code runs; fd 0 is then replaced by /dev/null. It is kept only in the
   closure of an audit hook: no frame, module, global or class refers to it,
   and audit hooks cannot be listed or removed from Python.
3. Untrusted code (candidate and tests) runs in a worker thread. Python signal
   handlers (which receive the interrupted frame) can only be installed from
   the main thread, which runs nothing but the driver, so no frame of the
   worker can be obtained that way.
4. ``sys.addaudithook`` hooks (permanent) refuse: sys._getframe (ValueError,
   so namedtuple/typing/logging keep working), sys._current_frames,
   settrace/setprofile (also cProfile), traceback ``tb_frame``, generator /
   coroutine frames, gc.get_objects/get_referrers/get_referents, every
   ``ctypes.*`` event, importing ctypes/_ctypes/_testcapi/... or any
   extension module from outside the interpreter's own directories,
   code-object construction (``code.__new__``/``replace``), marshal.loads
   (imports compile from source: ``sys.pycache_prefix`` points nowhere),
   assigning ``__code__``, opening anything under /proc (paths resolved with
   pre-bound primitives, every symlink followed; path-like objects refused),
   opening files for writing (no binary can be planted), symlink/link/rename,
   fork/exec/spawn/system/Popen, new threads, sqlite3, sub-interpreters.
   ``RLIMIT_NPROC`` is lowered to 1 once the worker started, so even a
   builtin ``_posixsubprocess`` obtained via ``_imp.create_builtin`` cannot
   fork (a child could otherwise read this process's memory).
5. The pass marker is written by the hook itself when the worker raises the
   private audit event ``codegym.pass`` *from its own registered frame* (the
   hook checks ``sys._getframe(1) is`` the frame registered before untrusted
   code ran). Raising ``codegym.*`` events from anywhere else marks the run as
   tampered and suppresses the marker for good.
6. ``os._exit``, ``sys.exit``, ``SystemExit``/``KeyboardInterrupt`` raised in
   the tests, self-kill, printing a fake marker, closing the descriptors: all
   end the run without the marker (the host also requires exit status ok).
7. Trusted code uses only primitives bound before untrusted code ran, and a
   private copy of builtins; the tests run with their own builtins copy, so
   patching ``builtins``/``AssertionError`` does not reach them.
8. Every function of the solution the tests can reach (``check(candidate)``,
   names in the test namespace; ``Solution()`` for ``Solution.method`` gives a
   namespace of wrapped methods) is a wrapper: its
   return value is rebuilt from builtin data (subclasses -> exact base type;
   instances of plain Python classes are allowed, their attributes cleaned;
   objects of Python classes that override comparison/arithmetic/bool/len/...
   dunders, use properties or custom metaclasses are refused; immutable types
   -- builtin and extension types such as ``re.Match`` -- pass unchanged, since
   no Python code can alter them), and after every call the
   modules the tests import (plus common stdlib ones, pre-imported before the
   candidate ran) are checked, entry by entry, for replaced attributes or
   class members (``math.isclose = ...``, ``Counter.__eq__ = ...``).
9. The test namespace holds the solution's functions (wrapped) and classes,
   builtin callables and genuine protected modules, not its other globals;
   standard modules the tests use without importing them (MBPP style) are
   bound to the real, protected modules, never to the solution's objects.

Empirical notes (CPython 3.11, checked while writing this; see
tests/test_judge.py): audited as ``object.__getattr__`` are ``tb_frame``,
``gi_frame``/``cr_frame``/``ag_frame``, ``gi_code``, ``f_code`` and function
``__code__``; *not* audited are ``f_back``, ``f_locals``, ``f_globals``,
function ``__closure__``/``__globals__``/``__defaults__`` reads, and
``signal.signal`` (handlers receive frames -- hence the worker thread).
``_imp.create_builtin`` raises no ``import`` event and returns fresh module
objects (``_signal``, and ``_posixsubprocess`` which is builtin in Debian's
3.11: its ``fork_exec`` raises no event -- hence RLIMIT_NPROC). ``ctypes``:
``c_char_p(addr).value`` and ``ctypes.cast`` raise no event (hence no
``_ctypes`` in the process at all). The import system itself calls
``marshal.loads`` for .pyc files; ``code.replace`` raises ``code.__new__``;
``sys.addaudithook`` refused by a hook raising RuntimeError fails silently.
Many 3.11 extension types (``re.Match``) are heap types: classes defined in
Python are told apart by the absence of ``Py_TPFLAGS_IMMUTABLETYPE``.

Residual risks (documented, not defended):
- the local sandbox mounts its whole build store read-only in every run, so
  any *built* program is readable by later candidates: the judge keeps trusted
  Python programs out of it (references and checkers run via `LAUNCHER`,
  Python candidates likewise, function references as driver extra files;
  expected values never enter the sandbox), but compiled (C/C++) candidates,
  references and checkers, and generators remain readable to later runs until
  the sandbox isolates builds per run;
- memory-corruption bugs of CPython itself (no crafted bytecode is possible,
  but interpreter crashers exist);
- lazily produced values are not cleaned: generators/iterators returned by the
  candidate, methods of returned plain objects, callables the tests pass to the
  candidate (their ``__globals__`` expose the test namespace), mutation of
  arguments the tests inspect afterwards;
- candidate-defined helpers the tests themselves call (e.g. a ``ListNode``
  comparison helper written in the candidate file) are candidate code;
- an entry point that is a class (not ``Class.method``) is handed over
  unwrapped;
- RLIMIT_NPROC does not bind a real root (uid 0 outside a user namespace);
  the local sandbox never runs programs as such;
- non-Python script tasks (Julia, JavaScript): the epilogue reads the nonce
  from stdin, which the candidate can read first and then exit after printing
  the marker; there is no introspection barrier in those runtimes. Use
  function/stdio tasks where forging matters, or treat these as evaluation.
- repo (command) tasks: the test command runs in the same process space as
  the candidate (pytest imports it); a conftest.py can rewrite the report.
"""

from __future__ import annotations

import ast
import base64
import json
import math
import re
import secrets
import sys
import threading
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from codegym.judge.checkers import Repr

#: bump when a driver's protocol changes (part of build keys via the source itself)
HARNESS_VERSION = 1
#: directory (inside the run directory) that holds the candidate's files for driver runs
SOLUTION_DIR = "sol"
#: default cap on one serialised return value (bytes)
VALUE_CAP = 1 << 20
#: marker prefix of function-driver frames
FRAME_PREFIX = "@cg "
#: marker prefix of the script driver's failure report
FAIL_PREFIX = "@cgfail "

# ============================================================================ function driver

FUNCTION_DRIVER = r'''"""codegym function-call driver (trusted; generated by codegym/harness.py).

Reads a JSON request on stdin, imports the candidate module, calls the entry
point once per case under a CPU and wall-clock guard, and writes one frame per
case to a private duplicate of stdout. Expected values are never sent here.
"""
import os as _os
import sys as _sys


def _codegym_function_driver():
    import base64
    import importlib.util
    import io
    import json
    import resource
    import signal
    import time
    import traceback

    write, _exit = _os.write, _os._exit
    cpu, wall = time.process_time, time.perf_counter
    setitimer, ITIMER_PROF, ITIMER_REAL = signal.setitimer, signal.ITIMER_PROF, signal.ITIMER_REAL
    getrusage, RUSAGE_SELF = resource.getrusage, resource.RUSAGE_SELF
    b64 = base64.b64encode

    chunks = []
    while True:
        b = _os.read(0, 1 << 20)
        if not b:
            break
        chunks.append(b)
    req = json.loads(b"".join(chunks))
    del chunks
    fd = _os.open(_os.devnull, _os.O_RDONLY)
    _os.dup2(fd, 0)
    _os.close(fd)
    out = _os.dup(1)   # the result channel: only frames are written there
    _os.dup2(2, 1)     # raw writes to fd 1 by the candidate land in stderr
    prefix = ("@cg " + req["nonce"] + " ").encode()
    encode_json = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode

    class _Capped(io.RawIOBase):
        # what the candidate prints: the first 4 KiB are kept, the rest dropped
        def __init__(self):
            self.data = bytearray()

        def writable(self):
            return True

        def write(self, b):
            if len(self.data) < 4096:
                self.data += bytes(b)[: 4096 - len(self.data)]
            return len(b)

    sink = io.TextIOWrapper(io.BufferedWriter(_Capped()), encoding="utf-8", errors="replace",
                            line_buffering=False)
    _sys.stdout = sink

    def emit(obj):
        data = memoryview(prefix + encode_json(obj).encode() + b"\n")
        while data:
            n = write(out, data)
            data = data[n:]

    def rss():
        return getrusage(RUSAGE_SELF).ru_maxrss / 1024.0

    cur = [None, 0.0, 0.0]

    def disarm():
        setitimer(ITIMER_PROF, 0)
        setitimer(ITIMER_REAL, 0)

    def on_timer(signum, frame):
        disarm()
        i = cur[0]
        what = "cpu" if signum == signal.SIGPROF else "wall-clock"
        try:
            if i == "import":
                emit({"import": "timeout", "e": "time limit exceeded (" + what + ") while importing"})
            elif i is not None:
                emit({"i": i, "s": "timeout", "t": cpu() - cur[1], "w": wall() - cur[2], "m": rss(),
                      "e": "time limit exceeded (" + what + ")"})
        finally:
            _exit(0)

    signal.signal(signal.SIGPROF, on_timer)
    signal.signal(signal.SIGALRM, on_timer)

    def arm(cpu_s, wall_s):
        setitimer(ITIMER_PROF, max(cpu_s, 0.001))
        setitimer(ITIMER_REAL, max(wall_s, 0.001))

    def fmt(e, skip=1):
        try:
            tb = e.__traceback__
            for _ in range(skip):
                if tb is not None:
                    tb = tb.tb_next
            text = "".join(traceback.format_exception(type(e), e, tb, limit=-6))
        except BaseException:
            try:
                text = type(e).__name__ + ": " + str(e)
            except BaseException:
                text = type(e).__name__
        return text[-2000:]

    class TooLarge(Exception):
        pass

    cap = int(req.get("cap", 1 << 20))
    budget = [cap]
    INT_LIMIT = 1 << 63

    def spend(n):
        budget[0] -= n
        if budget[0] < 0:
            raise TooLarge("return value larger than %d bytes when serialised" % cap)

    def enc(x, depth):
        t = type(x)
        if x is None or t is bool:
            spend(5)
            return x
        if t is int:
            if -INT_LIMIT < x < INT_LIMIT:
                spend(20)
                return x
            spend(x.bit_length() // 4 + 8)
            return {"#": "int", "v": hex(x)}
        if t is float:
            spend(24)
            if x != x:
                return {"#": "float", "v": "nan"}
            if x == float("inf"):
                return {"#": "float", "v": "inf"}
            if x == float("-inf"):
                return {"#": "float", "v": "-inf"}
            return x
        if t is str:
            spend(len(x) + 2)
            return x
        if depth > 400:
            spend(40)
            return {"#": "repr", "t": t.__name__, "v": "<nested more than 400 levels>"}
        if t is list:
            spend(2)
            return [enc(v, depth + 1) for v in x]
        if t is tuple:
            spend(10)
            return {"#": "tuple", "v": [enc(v, depth + 1) for v in x]}
        if t is dict:
            spend(10)
            return {"#": "dict", "v": [[enc(k, depth + 1), enc(v, depth + 1)] for k, v in dict.items(x)]}
        if t is set or t is frozenset:
            spend(10)
            return {"#": t.__name__, "v": [enc(v, depth + 1) for v in x]}
        if t is bytes or t is bytearray:
            spend(len(x) * 4 // 3 + 12)
            return {"#": "bytes", "v": b64(bytes(x)).decode()}
        if t is complex:
            spend(40)
            return {"#": "complex", "v": [enc(x.real, depth + 1), enc(x.imag, depth + 1)]}
        # subclasses of builtin data types: C-level copies into the exact base type
        if isinstance(x, int):
            return enc(int.__index__(x), depth + 1)
        if isinstance(x, float):
            return enc(float.__float__(x), depth + 1)
        if isinstance(x, str):
            return enc(str.__str__(x), depth + 1)
        if isinstance(x, list):
            return enc(list.copy(x), depth + 1)
        if isinstance(x, tuple):
            return enc(tuple.__getitem__(x, slice(None)), depth + 1)
        if isinstance(x, dict):
            return enc(dict(dict.items(x)), depth + 1)
        if isinstance(x, frozenset):
            return enc(frozenset.copy(x), depth + 1)
        if isinstance(x, set):
            return enc(set.copy(x), depth + 1)
        if isinstance(x, (bytes, bytearray)):
            return enc(bytes(memoryview(x)), depth + 1)
        tolist = getattr(x, "tolist", None)   # numpy arrays and scalars
        if callable(tolist) and depth < 50:
            return enc(tolist(), depth + 1)
        try:
            r = repr(x)
        except BaseException:
            r = "<unrepresentable>"
        r = r[:1000] if type(r) is str else "<bad repr>"
        spend(len(r) + 40)
        return {"#": "repr", "t": type(x).__name__, "v": r}

    path = req["path"]
    modname = req["module"]
    entry = req["entry"]
    stop_on_error = bool(req.get("stop_on_error"))
    _sys.path.insert(0, _os.path.dirname(_os.path.abspath(path)))
    _sys.dont_write_bytecode = True

    cur[0] = "import"
    t_imp = float(req.get("import_time", 2.0))
    arm(t_imp, t_imp * 3 + 1)
    try:
        spec = importlib.util.spec_from_file_location(modname, path)
        mod = importlib.util.module_from_spec(spec)
        _sys.modules[modname] = mod
        spec.loader.exec_module(mod)
        cls = fn = None
        if "." in entry:
            cname, meth = entry.split(".", 1)
            cls = getattr(mod, cname, None)
            if cls is None:
                raise NameError("entry point %r not found: %s does not define %r" % (entry, path, cname))
        else:
            meth = None
            fn = getattr(mod, entry, None)
            if fn is None:
                raise NameError("entry point %r not found in %s" % (entry, path))
            if not callable(fn):
                raise TypeError("entry point %r is not callable" % entry)
    except SyntaxError as e:
        disarm()
        emit({"import": "compile_error", "e": fmt(e, 0)})
        _exit(0)
    except MemoryError:
        disarm()
        emit({"import": "memory_limit", "e": "MemoryError while importing"})
        _exit(0)
    except BaseException as e:
        disarm()
        emit({"import": "runtime_error", "e": fmt(e)})
        _exit(0)
    disarm()

    for i, args, kwargs, cpu_s, wall_s in req["cases"]:
        cur[0] = i
        budget[0] = cap
        status, payload, msg = "ok", None, ""
        t0 = cpu()
        w0 = wall()
        cur[1], cur[2] = t0, w0
        arm(cpu_s, wall_s)
        try:
            f = getattr(cls(), meth) if cls is not None else fn
            value = f(*args, **kwargs)
            payload = enc(value, 0)
        except TooLarge as e:
            status, msg = "output_limit", str(e)
        except MemoryError:
            status, msg = "memory_limit", "MemoryError"
        except BaseException as e:
            status, msg = "runtime_error", fmt(e)
        disarm()
        frame = {"i": i, "s": status, "t": cpu() - t0, "w": wall() - w0, "m": rss()}
        if status == "ok":
            frame["v"] = payload
        else:
            frame["e"] = msg
        value = payload = None
        emit(frame)
        if status != "ok" and stop_on_error:
            break
    emit({"done": True})
    _exit(0)


_codegym_function_driver()
'''

# ============================================================================ script driver

_SCRIPT_TRUSTED = r'''
class Refused(Exception):
    pass


def prepare(nonce, cfg, out_stream):
    import os, sys, _thread, resource, gc
    import collections

    # ---- primitives bound now, before any untrusted code can replace them
    write, getcwd, readlink, dup = os.write, os.getcwd, os.readlink, os.dup
    getframe, audit = sys._getframe, sys.audit
    gc_disable, gc_enable = gc.disable, gc.enable
    modules = sys.modules
    setrecursionlimit = sys.setrecursionlimit
    allocate_lock, start_thread = _thread.allocate_lock, _thread.start_new_thread
    flags_of = type.__dict__["__flags__"].__get__
    mro_of = type.__dict__["__mro__"].__get__
    tname_of = type.__dict__["__name__"].__get__
    cdict_of = type.__dict__["__dict__"].__get__
    subcheck = type.__subclasscheck__
    obj_getattr = object.__getattribute__
    exc_tb = BaseException.__dict__["__traceback__"].__get__
    Deque = collections.deque
    Namespace = type(sys.implementation)
    GetSet = type(cdict_of(type("_P", (), {}))["__dict__"])
    Member = type(cdict_of(type("_S", (), {"__slots__": ("a",)}))["a"])
    FunctionType = type(prepare)
    BuiltinFunction = type(len)
    MISSING = object()
    IMMUTABLE = 1 << 8   # static and extension types; never set on classes defined in Python
    O_WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    box = getcwd()

    priv = dup(1)
    marker = b"\n" + nonce + b" PASS\n"
    del nonce

    def emit_fail(info):
        try:
            data = ("\n@cgfail " + info + "\n").encode("utf-8", "replace")
            write(priv, data)
        except BaseException:
            pass

    # ---- the modules the tests rely on: imported now, snapshotted, checked after every call
    protected = []
    for name in cfg["protect"]:
        try:
            __import__(name)
        except BaseException:
            continue
        mod = modules.get(name)
        if mod is None:
            continue
        d = mod.__dict__
        classes = []
        if name not in ("typing", "abc", "enum", "builtins", "sys"):
            for v in list(d.values()):
                if type(v) is type and not flags_of(v) & IMMUTABLE and v.__module__ == name:
                    cd = cdict_of(v)
                    classes.append((name + "." + v.__name__, cd, dict(cd)))
        if name == "sys":   # sys changes as programs run (streams, last exception): its functions only
            snap = {k: v for k, v in d.items() if type(v) is BuiltinFunction}
        else:
            snap = dict(d)
        protected.append((name, mod, d, snap, classes))
    protected_names = {}   # top-level name -> module object, as a test's `import name` binds it
    for name, mod, d, snap, classes in protected:
        if "." not in name:
            protected_names[name] = mod
    Fraction = getattr(modules.get("fractions"), "Fraction", None)

    tamper = []   # reasons; any entry means the run fails

    def verify():
        for name, mod, d, snap, classes in protected:
            if modules.get(name) is not mod:
                tamper.append("sys.modules[%r] was replaced" % name)
                raise RuntimeError("codegym: " + tamper[-1])
            for k, v in snap.items():
                if d.get(k, MISSING) is not v:
                    tamper.append("%s.%s was modified" % (name, k))
                    raise RuntimeError("codegym: " + tamper[-1])
            for cname, cd, csnap in classes:
                for k, v in csnap.items():
                    if cd.get(k, MISSING) is not v:
                        tamper.append("%s.%s was modified" % (cname, k))
                        raise RuntimeError("codegym: " + tamper[-1])

    # ---- cleaning of values handed from the candidate to the tests
    SCALARS = {int, float, complex, str, bytes, bool, type(None), bytearray, range, slice,
               type(Ellipsis), type(NotImplemented)}
    SAFE_DUNDERS = {"__module__", "__qualname__", "__doc__", "__init__", "__repr__", "__slots__",
                    "__annotations__", "__match_args__", "__firstlineno__", "__static_attributes__",
                    "__orig_bases__", "__parameters__", "__dict__", "__weakref__", "__new__",
                    "__init_subclass__", "__class_getitem__", "__del__"}
    PLAIN_ATTRS = {FunctionType, staticmethod, classmethod, Member} | SCALARS | {tuple, list, dict, set, frozenset}
    class_ok = {}          # per clean() call: classes can change between calls
    test_classes = []      # [set of test-defined classes], filled once the tests ran

    def check_class(t):
        ok = class_ok.get(t)
        if ok is not None:
            return ok
        why = None
        if type(t) is not type:
            why = "its class has a custom metaclass"
        else:
            for c in mro_of(t):
                if c is object or flags_of(c) & IMMUTABLE or c in test_classes[0]:
                    continue
                if type(c) is not type:
                    why = "a base class has a custom metaclass"
                    break
                for k, v in cdict_of(c).items():
                    if type(k) is not str:
                        why = "odd class attribute"
                        break
                    if k[:2] == "__" and k[-2:] == "__":
                        if k not in SAFE_DUNDERS:
                            why = "class %s defines %s" % (tname_of(c), k)
                            break
                        if k in ("__dict__", "__weakref__") and type(v) is not GetSet:
                            why = "class %s redefines %s" % (tname_of(c), k)
                            break
                    elif type(v) not in PLAIN_ATTRS:
                        why = "class %s has a descriptor or object attribute %s" % (tname_of(c), k)
                        break
                if why:
                    break
        ok = why is None
        class_ok[t] = ok if ok else why
        return class_ok[t]

    def c(x, depth, queue, seen):
        t = type(x)
        if t in SCALARS:
            return x
        if depth > 500:
            raise Refused("return value nested more than 500 levels deep")
        if t is list:
            if set(map(type, x)) <= SCALARS:
                return x
            items = list.copy(x)
            changed = False
            for i in range(len(items)):
                v = items[i]
                nv = c(v, depth + 1, queue, seen)
                if nv is not v:
                    items[i] = nv
                    changed = True
            return items if changed else x
        if t is tuple:
            if set(map(type, x)) <= SCALARS:
                return x
            items = [c(v, depth + 1, queue, seen) for v in x]
            return tuple(items) if any(a is not b for a, b in zip(items, x)) else x
        if t is dict:
            if set(map(type, dict.keys(x))) <= SCALARS and set(map(type, dict.values(x))) <= SCALARS:
                return x
            return {c(k, depth + 1, queue, seen): c(v, depth + 1, queue, seen) for k, v in dict.items(x)}
        if t is set or t is frozenset:
            if set(map(type, x)) <= SCALARS:
                return x
            return t(c(v, depth + 1, queue, seen) for v in x)
        if t is Deque:
            return Deque([c(v, depth + 1, queue, seen) for v in list(x)], x.maxlen)
        if Fraction is not None and t is Fraction:
            n, d = obj_getattr(x, "_numerator"), obj_getattr(x, "_denominator")
            if type(n) is not int or type(d) is not int:
                raise Refused("Fraction with non-int parts")
            return Fraction(n, d)
        if t is not type and not issubclass(t, type):
            for base, conv in CONVERT:
                if subcheck(base, t):
                    return c(conv(x), depth + 1, queue, seen)
        if not flags_of(t) & IMMUTABLE:   # a class defined in Python
            if t in test_classes[0]:
                ok = True
            else:
                ok = check_class(t)
            if ok is not True:
                raise Refused("a value of type %s is not allowed: %s (return builtin data or "
                              "plain objects)" % (tname_of(t), ok))
            if id(x) not in seen:
                seen.add(id(x))
                queue.append(x)
            return x
        return x   # builtin (static) types: functions, generators, numpy arrays, ...

    CONVERT = ((int, int.__index__), (float, float.__float__), (complex, complex.__complex__),
               (str, str.__str__), (bytes, bytes.__bytes__), (list, list.copy),
               (tuple, lambda x: tuple.__getitem__(x, slice(None))),
               (dict, lambda x: dict(dict.items(x))), (frozenset, frozenset.copy), (set, set.copy),
               (bytearray, lambda x: bytearray(memoryview(x))))

    def clean_instance(x, queue, seen):
        t = type(x)
        for k2 in mro_of(t):
            if k2 is object or flags_of(k2) & IMMUTABLE:
                continue
            for name, desc in list(cdict_of(k2).items()):
                if type(desc) is Member:
                    try:
                        v = desc.__get__(x, t)
                    except AttributeError:
                        continue
                    nv = c(v, 0, queue, seen)
                    if nv is not v:
                        desc.__set__(x, nv)
        try:
            d = obj_getattr(x, "__dict__")
        except AttributeError:
            return
        if type(d) is not dict:
            raise Refused("odd instance dictionary")
        for k in list(d):
            v = d[k]
            nv = c(v, 0, queue, seen)
            if nv is not v:
                d[k] = nv

    def clean(x):
        class_ok.clear()
        tns = test_ns[0]
        cand = modules.get(modname)
        cand_ids = {id(v) for v in dict.values(cand.__dict__)} if cand is not None else set()
        test_classes[:] = [{v for v in dict.values(tns) if type(v) is type and id(v) not in cand_ids}
                           if tns is not None else set()]
        queue, seen = [], set()
        r = c(x, 0, queue, seen)
        while queue:
            clean_instance(queue.pop(), queue, seen)
        return r

    def wrap(fn, label):
        def candidate(*args, **kwargs):
            try:
                r = fn(*args, **kwargs)
                try:
                    return clean(r)
                except Refused as e:
                    tamper.append(str(e))
                    raise
            finally:
                verify()
        candidate.__name__ = candidate.__qualname__ = label
        return candidate

    def wrap_class(cls, label):
        # ``Solution()`` in the tests: a plain namespace (a builtin type, so nothing of the
        # driver is reachable through it) whose callables are wrapped and whose data is cleaned
        def factory(*args, **kwargs):
            try:
                obj = cls(*args, **kwargs)
            finally:
                verify()
            attrs = {}
            names = [k for k in dir(cls) if type(k) is str and k[:1] != "_"]
            try:
                names += [k for k in obj_getattr(obj, "__dict__") if type(k) is str and k[:1] != "_"]
            except AttributeError:
                pass
            for k in names:
                try:
                    v = getattr(obj, k)
                except AttributeError:
                    continue
                attrs[k] = wrap(v, k) if callable(v) else clean(v)
            verify()
            return Namespace(**attrs)
        factory.__name__ = factory.__qualname__ = label
        return factory

    # ---- the audit hook: holds the marker, refuses introspection and escapes
    FRAME_ATTRS = {"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"}
    DENY = {"sys._current_frames", "sys._current_exceptions", "sys.settrace", "sys.setprofile",
            "sys.addaudithook", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
            "code.__new__", "marshal.load", "marshal.loads", "os.fork", "os.forkpty", "os.exec",
            "os.posix_spawn", "os.spawn", "os.system", "subprocess.Popen", "os.startfile",
            "os.symlink", "os.link", "os.rename", "os.truncate", "os.mkfifo", "os.mknod",
            "pty.spawn", "sqlite3.connect", "sqlite3.connect/handle",
            "sqlite3.enable_load_extension", "sqlite3.load_extension",
            "cpython.PyInterpreterState_New", "os.setns", "os.unshare"}
    BLOCKED_MODULES = {"ctypes", "_ctypes", "_ctypes_test", "cffi", "_cffi_backend", "_testcapi",
                       "_testinternalcapi", "_testbuffer", "_testmultiphase", "_testsinglephase",
                       "_testimportmultiple", "_testclinic", "_xxtestfuzz", "_xxsubinterpreters",
                       "_xxinterpchannels", "_interpreters", "_interpchannels", "_posixsubprocess",
                       "_lsprof", "sqlite3", "_sqlite3", "xxsubtype"}
    EXT = (".so", ".pyd", ".dylib")
    ext_dirs = tuple(p.rstrip("/") + "/" for p in sys.path
                     if type(p) is str and p[:1] == "/" and not (p + "/").startswith(box + "/")
                     and not p.startswith("/tmp"))
    state = [None, False, False]   # registered worker frame, busy, trusted (error formatting)
    test_ns = [None]
    thread_budget = [1]

    def resolve(p):
        if p[:1] != "/":
            p = getcwd() + "/" + p
        out = []
        pending = p.split("/")
        pending.reverse()
        links = 0
        while pending:
            part = pending.pop()
            if part == "" or part == ".":
                continue
            if part == "..":
                if out:
                    out.pop()
                continue
            cand = "/" + "/".join(out) + ("/" if out else "") + part
            try:
                target = readlink(cand)
            except OSError:
                out.append(part)
                if out[0] == "proc":
                    return None   # anything passing through /proc is refused, links included
                continue
            links += 1
            if links > 40:
                return None
            if target[:1] == "/":
                out = []
            more = target.split("/")
            more.reverse()
            pending.extend(more)
        return "/" + "/".join(out)

    def as_path(p):
        t = type(p)
        if t is str:
            return p
        if t is bytes:
            return bytes.decode(p, "utf-8", "surrogateescape")
        if issubclass(t, str):
            return str.__str__(p)
        if issubclass(t, bytes):
            return bytes.decode(bytes.__bytes__(p), "utf-8", "surrogateescape")
        return None

    def check_open(args):
        p, mode, flags = args[0], args[1], args[2]
        if type(p) is int or (type(p) is not bool and isinstance(p, int)):
            return
        s = as_path(p)
        if s is None:
            raise PermissionError("codegym: open() needs a str or bytes path while judging")
        if "\0" in s:
            return
        r = resolve(s)
        if r is None or r == "/proc" or r[:6] == "/proc/":
            raise PermissionError("codegym: /proc is not accessible while judging: " + s)
        if type(flags) is int and flags & O_WRITE and r != "/dev/null":
            raise PermissionError("codegym: writing files is disabled while judging: " + s)

    def check_import(args):
        name, filename = args[0], args[1]
        if type(name) is str:
            if name in BLOCKED_MODULES or name.partition(".")[0] in BLOCKED_MODULES:
                raise ImportError("codegym: module %s is not available while judging" % name)
        if filename is not None:
            f = as_path(filename)
            if f is None:
                raise ImportError("codegym: odd module file")
            if f.endswith(EXT) or ".so." in f or f.endswith(".so"):
                r = resolve(f)
                if r is None or not r.startswith(ext_dirs):
                    raise ImportError("codegym: extension modules outside the interpreter's "
                                      "directories are not allowed: " + f)

    def hook(event, args):
        if state[1]:
            return
        if event == "open":
            return check_open(args)
        if event == "import":
            return check_import(args)
        if event == "object.__getattr__":
            if state[2]:
                return
            name = args[1]
            if name in FRAME_ATTRS:
                raise RuntimeError("codegym: frame objects are not accessible while judging")
            if name == "__code__" and test_ns[0] is not None:
                if getattr(args[0], "__globals__", None) is test_ns[0]:
                    raise RuntimeError("codegym: test code is not accessible")
            return
        if event == "sys._getframe":
            if state[2]:
                return
            raise ValueError("codegym: sys._getframe is disabled while judging")
        if event == "object.__setattr__":
            name = args[1]
            if name == "__code__":
                raise RuntimeError("codegym: assigning __code__ is disabled while judging")
            if name in ("__defaults__", "__kwdefaults__", "__globals__") and test_ns[0] is not None:
                if getattr(args[0], "__globals__", None) is test_ns[0]:
                    raise RuntimeError("codegym: test code is not modifiable")
            return
        if event[:8] == "codegym.":
            state[1] = True
            try:
                f = getframe(1)
            finally:
                state[1] = False
            if event == "codegym.register":
                if state[0] is None:
                    state[0] = f
                else:
                    tamper.append("second registration")
                return
            if state[0] is None or f is not state[0]:
                tamper.append("codegym event %s raised by untrusted code" % event)
                return
            if event == "codegym.pass":
                if not tamper:
                    try:
                        mv = memoryview(marker)
                        while mv:
                            n = write(priv, mv)
                            mv = mv[n:]
                    except BaseException:
                        pass
            elif event == "codegym.trusted":
                state[2] = bool(args[0])
            elif event == "codegym.testns":
                test_ns[0] = args[0]
            return
        if event == "_thread.start_new_thread":
            if thread_budget[0] > 0:
                thread_budget[0] -= 1
                return
            raise RuntimeError("codegym: threads are disabled while judging")
        if event in DENY or event[:7] == "ctypes.":
            raise RuntimeError("codegym: %s is disabled while judging" % event)

    # ---- what the worker thread runs
    path, modname, entry = cfg["path"], cfg["module"], cfg.get("entry")
    call_check = bool(cfg.get("call_check"))
    bind_modules = list(cfg.get("bind", ()))
    with open(path, "rb") as fh:
        source = fh.read()
    test_code = compile(cfg["test"], "<codegym-test>", "exec", dont_inherit=True)
    builtins_snapshot = dict(__builtins__)
    builtins_module = modules["builtins"]
    module_type = type(sys)
    sol_dir = path.rpartition("/")[0] or "."
    sys.path.insert(0, (box + "/" + sol_dir) if sol_dir[:1] != "/" else sol_dir)
    go, done = allocate_lock(), allocate_lock()
    go.acquire()
    done.acquire()

    def describe(e, stage):
        try:
            tn = tname_of(type(e))
        except BaseException:
            tn = "?"
        try:
            msg = str(e)
            msg = msg[:1000] if type(msg) is str else ""
        except BaseException:
            msg = "<unprintable>"
        return [stage, tn, msg, None, None]

    def tb_lines(e, info):
        # runs in trusted mode: only C-level attribute reads, no untrusted code
        try:
            tb = exc_tb(e)
            while tb is not None:
                fname = tb.tb_frame.f_code.co_filename
                if fname == "<codegym-test>":
                    info[3] = tb.tb_lineno
                elif fname == path_abs:
                    info[4] = tb.tb_lineno
                tb = tb.tb_next
        except BaseException:
            pass

    path_abs = box + "/" + path if path[:1] != "/" else path

    def worker():
        audit("codegym.register")
        go.acquire()
        ok = False
        info = None
        stage = "import"
        try:
            mod = module_type(modname)
            mod.__file__ = path_abs
            mod.__builtins__ = builtins_module
            modules[modname] = mod
            exec(compile(source, path_abs, "exec", dont_inherit=True), mod.__dict__)
            verify()
            stage = "test"
            ns = mod.__dict__
            # The tests see the solution's functions (each wrapped), its classes, builtin
            # callables and genuine protected modules -- not its other globals, which could
            # shadow names a careless test uses without importing them.
            tns = {}
            for k, v in dict.items(ns):
                if type(k) is not str or (k[:2] == "__" and k[-2:] == "__"):
                    continue
                tv = type(v)
                if tv is FunctionType:
                    tns[k] = wrap(v, k)
                elif tv is type or tv is BuiltinFunction:
                    tns[k] = v
                elif tv is module_type:
                    if k in protected_names and v is protected_names[k]:
                        tns[k] = v
            for k in bind_modules:   # modules the tests use without importing them
                if k in protected_names:
                    tns[k] = protected_names[k]
            tns["__builtins__"] = dict(builtins_snapshot)
            tns["__name__"] = "__main__"
            handed = None
            if entry:
                head, _, meth = entry.partition(".")
                target = ns.get(head, MISSING)
                if target is MISSING:
                    raise NameError("entry point %r is not defined by the solution" % entry)
                if meth and type(target) is type:
                    tns[head] = wrap_class(target, head)
                handed = tns.get(head, target)
            audit("codegym.testns", tns)
            exec(test_code, tns)
            if call_check:
                chk = tns.get("check")
                if chk is None:
                    raise NameError("the test code defines no check()")
                chk(handed)
            verify()
            ok = not tamper
        except BaseException as e:
            try:
                info = describe(e, stage)
            except BaseException:
                info = [stage, "?", "", None, None]
            gc_disable()
            audit("codegym.trusted", True)
            try:
                tb_lines(e, info)
            finally:
                audit("codegym.trusted", False)
                gc_enable()
            e = None
        try:
            if ok and not tamper:
                audit("codegym.pass")
            else:
                report(info)
        finally:
            done.release()

    def report(info):
        if info is None:
            info = ["test", "Tampered", "", None, None]
        stage_, tn, msg, line, cand_line = info
        parts = ['{"stage": ', repr_json(stage_), ', "type": ', repr_json(tn), ', "message": ',
                 repr_json(msg), ', "test_line": ', str(line) if type(line) is int else "null",
                 ', "solution_line": ', str(cand_line) if type(cand_line) is int else "null",
                 ', "tamper": ', repr_json("; ".join(tamper)[:500]), "}"]
        emit_fail("".join(parts))

    def repr_json(s):
        out = ['"']
        for ch in s:
            o = ord(ch)
            if ch == '"' or ch == "\\":
                out.append("\\" + ch)
            elif o < 32 or o > 126:
                out.append("\\u%04x" % o if o < 0x10000 else "\\ufffd")
            else:
                out.append(ch)
        out.append('"')
        return "".join(out)

    # ---- arm: no more compiled caches, the hook, the worker, no more processes
    sys.dont_write_bytecode = True
    sys.pycache_prefix = "/nonexistent/codegym-no-pycache"
    try:
        setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    except BaseException:
        pass
    sys.addaudithook(hook)
    try:
        _thread.stack_size(64 << 20)
    except BaseException:
        pass
    start_thread(worker, ())
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
    except BaseException as e:
        emit_fail('{"stage": "driver", "type": "DriverError", "message": "cannot limit processes"}')
        os._exit(3)
    return go, done
'''

SCRIPT_DRIVER = r'''"""codegym script driver (trusted; generated by codegym/harness.py).

Runs the candidate's module, then the test code, in a worker thread under
permanent audit hooks; only the hook can write the success marker, whose nonce
it read from stdin before any untrusted code ran.
"""
import os as _os
import sys as _sys

if "_ctypes" in _sys.modules or "ctypes" in _sys.modules:
    # The warm fork-server interpreter has _ctypes loaded, which allows raw
    # memory reads without audit events: continue in a fresh interpreter.
    if _sys.argv[1:2] == ["--codegym-fresh"]:
        _os.write(2, b"codegym: _ctypes is loaded in a fresh interpreter; refusing to judge\n")
        _os._exit(3)
    try:
        _os.execv(_sys.executable, [_sys.executable, "-E", "-s", "-S", "-B",
                                    _os.path.abspath(_sys.argv[0]), "--codegym-fresh"])
    except BaseException as _e:
        _os.write(2, ("codegym: cannot start a fresh interpreter: %r\n" % (_e,)).encode())
        _os._exit(3)

_TRUSTED_SOURCE = __TRUSTED__


def _codegym_script_driver():
    import builtins
    import json
    g = globals()
    src = g.pop("_TRUSTED_SOURCE")
    g.pop("_codegym_script_driver", None)
    chunks = []
    while True:
        b = _os.read(0, 1 << 20)
        if not b:
            break
        chunks.append(b)
    data = b"".join(chunks)
    del chunks, b
    nl = data.find(b"\n")
    if nl <= 0:
        _os.write(2, b"codegym: malformed driver input\n")
        _os._exit(3)
    nonce = data[:nl]
    cfg = json.loads(data[nl + 1:])
    del data
    fd = _os.open(_os.devnull, _os.O_RDONLY)
    _os.dup2(fd, 0)
    _os.close(fd)
    trusted = {"__builtins__": dict(builtins.__dict__), "__name__": "codegym_trusted"}
    exec(compile(src, "<codegym-driver>", "exec"), trusted)
    out_stream = _sys.stdout
    flush, _exit = type(out_stream).flush, _os._exit
    go, done = trusted["prepare"](nonce, cfg, out_stream)
    del nonce, cfg, trusted, src
    go.release()
    done.acquire()
    try:
        flush(out_stream)
    except BaseException:
        pass
    _exit(0)


_codegym_script_driver()
'''.replace("__TRUSTED__", repr(_SCRIPT_TRUSTED))

#: epilogues of non-Python script programs: print the nonce (read from stdin) and PASS.
#: Weak by construction (see the module docstring): the candidate can read stdin too.
SCRIPT_EPILOGUES: dict[str, str] = {
    "julia": '\nprintln(stdout, "\\n", readline(stdin), " PASS")\n',
    "javascript": ('\nprocess.stdout.write("\\n" + require("fs").readFileSync(0, "utf8").split("\\n")[0]'
                   ' + " PASS\\n");\n'),
}

#: modules the script driver always protects (in addition to those the tests import)
DEFAULT_PROTECTED = ("math", "cmath", "re", "string", "itertools", "functools", "operator",
                     "collections", "heapq", "bisect", "random", "statistics", "fractions",
                     "decimal", "copy", "numbers", "json")

# ============================================================================ hidden-program launcher

#: where a hidden program's files go in the run directory (they are extra files of the run)
HIDDEN_DIR = "hidden"

LAUNCHER = r'''"""codegym launcher (generated by codegym/harness.py).

Runs hidden/<argv[1]> as the main program with the remaining arguments. The
hidden program (a candidate's or reference solution, a checker) arrives as
extra files of this run, which the sandbox wipes afterwards, so it never sits
in the build store that other runs can read.
"""
import os as _codegym_os
import sys as _codegym_sys


def _codegym_launch():
    os, sys = _codegym_os, _codegym_sys
    path = os.path.join(os.getcwd(), "hidden", sys.argv[1])
    sys.argv = [path] + sys.argv[2:]
    sys.path[0] = os.path.dirname(path)
    with open(path, "rb") as f:
        source = f.read()
    g = globals()
    for k in [k for k in g if k not in ("__name__", "__builtins__", "__loader__", "__spec__",
                                        "__package__", "__annotations__")]:
        del g[k]
    g["__file__"] = path
    g["__cached__"] = None
    code = compile(source, path, "exec", dont_inherit=True)
    try:
        exec(code, g)
    except SystemExit:
        raise
    except BaseException as e:
        # what the interpreter prints, without the launcher's own frame
        import traceback
        sys.stdout.flush()
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        sys.exit(130 if isinstance(e, KeyboardInterrupt) else 1)


_codegym_launch()
'''


def hidden_files(files: dict[str, str | bytes]) -> dict[str, str | bytes]:
    """`files` placed under the launcher's hidden directory (extra files of a run)."""
    return {f"{HIDDEN_DIR}/{rel}": content for rel, content in files.items()
            if isinstance(rel, str) and not rel.startswith("/") and ".." not in rel.split("/")}


# ============================================================================ command runner

COMMAND_RUNNER = r'''"""codegym command runner (generated by codegym/harness.py): runs a test command in ws/."""
import json, os, subprocess, sys
req = json.loads(sys.stdin.read() or "{}")
os.chdir("ws")
try:
    p = subprocess.run(req["command"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=req.get("timeout"))
    out, rc = p.stdout.decode("utf-8", "replace"), p.returncode
except subprocess.TimeoutExpired as e:
    out, rc = (e.stdout or b"").decode("utf-8", "replace"), "timeout"
except OSError as e:
    out, rc = "cannot run %r: %s" % (req["command"], e), "error"
files = {}
for rel in req.get("collect", []):
    try:
        with open(rel, "rb") as f:
            files[rel] = f.read(8 << 20).decode("utf-8", "replace")
    except OSError:
        pass
sys.stdout.write("@cgcmd " + json.dumps({"rc": rc, "output": out[-(2 << 20):], "files": files}) + "\n")
'''


# ============================================================================ host side: function kind


def new_nonce() -> str:
    """A fresh 128-bit secret (hex)."""
    return secrets.token_hex(16)


def module_name_for(main_file: str) -> str:
    """Module name the candidate's main file is imported under (its stem when that is safe)."""
    stem = main_file.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.endswith(".py") else stem
    if not stem.isidentifier() or stem in sys.stdlib_module_names or stem in sys.builtin_module_names \
            or stem.startswith("_codegym"):
        return "solution"
    return stem


def solution_files(files: dict[str, str | bytes], only_python: bool = False,
                   main_file: str | None = None) -> dict[str, str | bytes]:
    """The candidate's files placed under ``sol/`` -- extra files of a driver run.

    Passed per run (never built) so that no candidate's code enters the sandbox's
    build store, which later runs can read. `only_python`: keep ``.py`` text files
    only (the script driver: no binary the candidate wrote can be loaded)."""
    out: dict[str, str | bytes] = {}
    for rel, content in files.items():
        if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/"):
            continue
        if only_python and not (isinstance(content, str) and (rel.endswith(".py") or rel == main_file)):
            continue
        out[f"{SOLUTION_DIR}/{rel}"] = content
    return out


def driver_files(driver: str, files: dict[str, str | bytes], only_python: bool = False,
                 main_file: str | None = None) -> dict[str, str | bytes]:
    """Driver as ``main.py`` plus the candidate's files under ``sol/`` in one file set."""
    return {"main.py": driver, **solution_files(files, only_python, main_file)}


def function_request(nonce: str, main_file: str, entry: str,
                     cases: Sequence[tuple[int, list, dict, float, float]], *, import_time: float,
                     stop_on_error: bool, cap: int = VALUE_CAP) -> str:
    """stdin of one function-driver run. `cases`: (index, args, kwargs, cpu_s, wall_s)."""
    return json.dumps({
        "nonce": nonce, "path": f"{SOLUTION_DIR}/{main_file}", "module": module_name_for(main_file),
        "entry": entry, "cases": [list(c) for c in cases], "import_time": import_time,
        "stop_on_error": stop_on_error, "cap": cap,
    }, separators=(",", ":"), allow_nan=False)


@dataclass
class FunctionFrames:
    """What one function-driver run reported."""

    results: dict[int, dict] = field(default_factory=dict)   # case index -> frame
    import_error: dict | None = None
    done: bool = False
    malformed: int = 0


def parse_function_frames(stdout: str, nonce: str) -> FunctionFrames:
    """Read the frames of a function-driver run (first frame per case wins)."""
    out = FunctionFrames()
    prefix = FRAME_PREFIX + nonce + " "
    for line in stdout.split("\n"):
        if not line.startswith(prefix):
            continue
        try:
            obj = json.loads(line[len(prefix):])
        except ValueError:
            out.malformed += 1
            continue
        if not isinstance(obj, dict):
            out.malformed += 1
            continue
        if "import" in obj:
            if out.import_error is None:
                out.import_error = obj
        elif obj.get("done") is True:
            out.done = True
        elif isinstance(obj.get("i"), int):
            out.results.setdefault(obj["i"], obj)
        else:
            out.malformed += 1
    return out


class DecodeError(ValueError):
    pass


def decode_value(obj: Any, depth: int = 0) -> Any:
    """Wire value (JSON with tags) -> plain Python data (tuple/set/bytes/nan/... rebuilt)."""
    if depth > 1000:
        raise DecodeError("value nested too deeply")
    t = type(obj)
    if t is list:
        return [decode_value(v, depth + 1) for v in obj]
    if t is not dict:
        return obj
    tag, v = obj.get("#"), obj.get("v")
    if tag == "tuple":
        return tuple(decode_value(x, depth + 1) for x in v)
    if tag == "dict":
        return {_hashable(decode_value(k, depth + 1)): decode_value(x, depth + 1) for k, x in v}
    if tag == "set":
        return {_hashable(decode_value(x, depth + 1)) for x in v}
    if tag == "frozenset":
        return frozenset(_hashable(decode_value(x, depth + 1)) for x in v)
    if tag == "float":
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    if tag == "int":
        return int(v, 16)
    if tag == "bytes":
        return base64.b64decode(v)
    if tag == "complex":
        return complex(decode_value(v[0], depth + 1), decode_value(v[1], depth + 1))
    if tag == "repr":
        return Repr(str(v), str(obj.get("t", "")))
    raise DecodeError(f"unknown tag {tag!r}")


def _hashable(x: Any) -> Any:
    if isinstance(x, list):  # cannot happen from a real set/dict key; keep the data anyway
        return tuple(_hashable(v) for v in x)
    if isinstance(x, dict):
        return Repr(repr(x), "dict")
    if isinstance(x, set):
        return frozenset(x)
    return x


# ============================================================================ host side: script kind


_AST_LOCK = threading.Lock()


def parse_python(code: str) -> ast.Module:
    """``ast.parse`` for host threads: CPython 3.11 before 3.11.9 keeps the AST
    converter's recursion depth per interpreter, not per thread, so two threads
    parsing at once can fail with "SystemError: AST constructor recursion depth
    mismatch" (CPython gh-106905); judges run in several threads."""
    with _AST_LOCK:
        return ast.parse(code)


def analyse_test_code(code: str) -> tuple[bool, list[str]]:
    """(call_check, imports) of Python test code.

    call_check: the code defines ``check`` but never calls it at module level
    (HumanEval style), so the driver must call ``check(<entry point>)``.
    imports: every module name the code imports (anywhere), for protection."""
    try:
        tree = parse_python(code)
    except SyntaxError:
        return False, []
    defines = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "check"
                  for n in tree.body)
    calls = False

    def walk_module_level(nodes: Iterable[ast.AST]) -> None:
        nonlocal calls
        for n in nodes:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            for sub in ast.iter_child_nodes(n):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "check":
                    calls = True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "check":
                calls = True
            walk_module_level(ast.iter_child_nodes(n))

    walk_module_level(tree.body)
    imports: list[str] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            imports.extend(a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            imports.append(n.module)
            imports.extend(f"{n.module}.{a.name}" for a in n.names if a.name != "*")
    seen = set()
    uniq = [m for m in imports if not (m in seen or seen.add(m))]
    return defines and not calls, uniq


def implicit_modules(code: str) -> list[str]:
    """Standard modules the test code uses without importing them (``math.isclose(...)``
    relying on the solution's ``import math``): the driver binds the genuine, protected
    modules under those names instead of whatever the solution has there."""
    try:
        tree = parse_python(code)
    except SyntaxError:
        return []
    loads, bound = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
    return sorted(n for n in loads - bound if n in sys.stdlib_module_names and not n.startswith("_"))


def script_request(nonce: str, main_file: str, test_code: str, entry: str | None) -> str:
    """stdin of one Python script-driver run: the nonce line, then the JSON config."""
    call_check, imports = analyse_test_code(test_code)
    bind = implicit_modules(test_code)
    protect = list(dict.fromkeys([*DEFAULT_PROTECTED, *imports, *bind]))
    cfg = {"path": f"{SOLUTION_DIR}/{main_file}", "module": module_name_for(main_file),
           "test": test_code, "entry": entry, "call_check": bool(call_check and entry), "protect": protect,
           "bind": bind}
    return nonce + "\n" + json.dumps(cfg)


def script_program(language: str, candidate: str, test_code: str) -> str:
    """Source of a non-Python script run: candidate, tests, then the marker epilogue."""
    epi = SCRIPT_EPILOGUES.get(language)
    if epi is None:
        raise ValueError(f"script tasks are not supported for language {language!r}")
    return candidate.rstrip("\n") + "\n\n" + test_code.rstrip("\n") + "\n" + epi


def script_passed(stdout: str, nonce: str) -> bool:
    """True iff the run printed the success marker of this nonce on a line of its own."""
    marker = f"{nonce} PASS"
    return any(line.strip() == marker for line in stdout.split("\n")[-64:]) or \
        ("\n" + marker + "\n") in stdout


def parse_script_failure(stdout: str) -> dict | None:
    """The script driver's failure report (informational only), or None."""
    for line in reversed(stdout.split("\n")):
        if line.startswith(FAIL_PREFIX):
            try:
                obj = json.loads(line[len(FAIL_PREFIX):])
            except ValueError:
                return None
            return obj if isinstance(obj, dict) else None
    return None


# ============================================================================ host side: repo kind


@dataclass
class TestReport:
    """Statuses of test ids parsed from a test run's output."""

    __test__ = False

    statuses: dict[str, str] = field(default_factory=dict)   # id -> passed|failed|error|skipped
    counts: dict[str, int] = field(default_factory=dict)     # passed/failed/error/skipped totals
    source: str = "none"                                     # junit | summary | counts | none

    def status_of(self, test_id: str) -> str | None:
        if test_id in self.statuses:
            return self.statuses[test_id]
        alt = nodeid_to_junit(test_id)
        return self.statuses.get(alt)


def nodeid_to_junit(nodeid: str) -> str:
    """pytest node id ``tests/test_x.py::TestA::test_b[1]`` -> junit ``tests.test_x.TestA::test_b[1]``."""
    parts = nodeid.split("::")
    path = parts[0]
    if path.endswith(".py"):
        path = path[:-3]
    cls = ".".join([path.replace("/", "."), *parts[1:-1]])
    return f"{cls}::{parts[-1]}" if len(parts) > 1 else cls


def parse_junit(xml_text: str) -> TestReport:
    """Parse junit XML (pytest --junitxml); ids are ``classname::name``."""
    rep = TestReport(source="junit")
    root = ET.fromstring(xml_text)
    for tc in root.iter("testcase"):
        cls, name = tc.get("classname", ""), tc.get("name", "")
        tid = f"{cls}::{name}" if cls else name
        status = "passed"
        for child in tc:
            if child.tag in ("failure",):
                status = "failed"
            elif child.tag == "error":
                status = "error"
            elif child.tag == "skipped":
                status = "skipped"
        rep.statuses[tid] = status
        rep.counts[status] = rep.counts.get(status, 0) + 1
    return rep


_SUMMARY_RE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+(\S+)")
_COUNT_RE = re.compile(r"(\d+)\s+(passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b")


def parse_test_report(output: str, junit_xml: str | None = None) -> TestReport:
    """Best available report: junit XML, else pytest ``-rA`` lines, else a count line."""
    if junit_xml:
        try:
            return parse_junit(junit_xml)
        except ET.ParseError:
            pass
    rep = TestReport(source="summary")
    mapping = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped",
               "XFAIL": "skipped", "XPASS": "passed"}
    for line in output.splitlines():
        m = _SUMMARY_RE.match(line.strip())
        if m and "::" in m.group(2) or (m and m.group(2).endswith(".py")):
            rep.statuses[m.group(2)] = mapping[m.group(1)]
    counts: dict[str, int] = {}
    for line in output.splitlines()[::-1]:
        found = _COUNT_RE.findall(line)
        if found:
            for n, what in found:
                key = "error" if what.startswith("error") else what
                counts[key] = int(n)
            break
    rep.counts = counts
    if not rep.statuses:
        rep.source = "counts" if counts else "none"
    return rep


__all__ = [
    "FUNCTION_DRIVER", "SCRIPT_DRIVER", "COMMAND_RUNNER", "SCRIPT_EPILOGUES", "HARNESS_VERSION",
    "SOLUTION_DIR", "VALUE_CAP", "new_nonce", "module_name_for", "driver_files", "solution_files",
    "function_request",
    "FunctionFrames", "parse_function_frames", "decode_value", "DecodeError", "analyse_test_code",
    "implicit_modules",
    "script_request", "script_program", "script_passed", "parse_script_failure", "TestReport",
    "parse_junit", "parse_test_report", "nodeid_to_junit", "LAUNCHER", "HIDDEN_DIR", "hidden_files",
]
