"""What a request to a fork server holds: files, stdin, rlimits, and how a Python run starts.

Every file of a run travels with its request (no store of other builds is ever
reachable from inside a sandbox: a program could read reference solutions).
The functions here build those requests from a `Build` and `Limits`; a
backend adds an id and sends them (`codegym.sandbox.server_sandbox`).  For a
Python run they also list the PRELOAD modules the run's files import
(`preload_list`), so that the server imports them before it forks.
"""

from __future__ import annotations

import hashlib
import math
import opcode
import os
import types
from collections.abc import Mapping, Sequence

from codegym.core.languages import LanguageSpec, get_language
from codegym.core.limits import Limits
from codegym.sandbox.buildcache import BuildFiles, norm_files
from codegym.sandbox.forkserver.pyrun import PRELOAD
from codegym.sandbox.launcher import launched_program
from codegym.sandbox.types import Build

#: a request as sent: its JSON header and its payloads
Request = tuple[dict, list[bytes]]
#: a thread's stack, MiB: a shell's default stack rlimit (glibc's default thread stack)
THREAD_STACK_MB = 8
#: address space glibc's malloc reserves per arena (64-bit), MiB
MALLOC_ARENA_MB = 64


def imported_modules(code) -> set[str]:
    """Names of the imports (``import a.b``, ``from a import b``) in `code` and in the
    functions and classes it defines, read from the bytecode.  Imports built at run
    time (``__import__(name)``) are not seen; a relative import names its module
    without the dots."""
    imp, ext = opcode.opmap["IMPORT_NAME"], opcode.opmap["EXTENDED_ARG"]
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


#: modules a Python file imports, by the file's content hash (see `preload_list`)
_IMPORTS: dict[bytes, frozenset[str]] = {}
_IMPORTS_MAX = 4096


def imports_of(data: bytes) -> frozenset[str]:
    """Modules a Python source imports (anywhere in it: `imported_modules`); nothing
    if it does not compile."""
    key = hashlib.sha1(data).digest()
    got = _IMPORTS.get(key)
    if got is None:
        names: set[str] = set()
        if len(data) <= 1 << 20:
            try:
                names = imported_modules(compile(data, "<run file>", "exec", dont_inherit=True))
            except Exception:  # noqa: BLE001 -- (SyntaxError, ValueError, RecursionError, ...)
                pass
        got = frozenset(names)
        if len(_IMPORTS) >= _IMPORTS_MAX:
            _IMPORTS.pop(next(iter(_IMPORTS)), None)
        _IMPORTS[key] = got
    return got


def preload_list(files: Mapping[str, bytes | tuple[bytes, int]]) -> list[str]:
    """The fork server's PRELOAD modules that the run's Python files import (any of them:
    a driver's candidate sits in a folder of its own), except names the run's own files
    or folders provide (its module must stay the one it imports).  `files`: path ->
    content, or (content, mode) as a build lays them out."""
    own: set[str] = set()
    wanted: set[str] = set()
    for rel, data in files.items():
        *dirs, name = rel.split("/")
        own.update(dirs)
        own.add(name.partition(".")[0])
        if name.endswith(".py"):
            wanted |= imports_of(data[0] if isinstance(data, tuple) else data)
    out: set[str] = set()
    for n in wanted:
        top = n.partition(".")[0]
        if top not in own:
            out.update(x for x in (top, n) if x in PRELOAD)
    return sorted(out)


def rlimits(spec: LanguageSpec, limits: Limits, count_nproc: bool, wrapper: bool = False,
            phase: str = "run") -> dict:
    """The server's ``limits`` of a request.  `count_nproc`: RLIMIT_NPROC applies (the
    slot has a uid, or a user namespace, of its own)."""
    mib = 1 << 20
    as_mb = limits.memory_mb + spec.as_overhead_mb
    # programs of languages that do not want an address-space limit (C, C++: a failed
    # malloc would be a segfault, not a memory verdict) are held by resident memory only
    use_as = not wrapper and (spec.limit_address_space or phase == "compile")
    # the server and the program itself count too (per uid, per user namespace)
    nproc = limits.processes + spec.extra_processes + 2 if count_nproc else None
    # every thread reserves its whole stack as address space when it starts (glibc: the
    # stack rlimit when the process started, 8 MiB in the fork server), and glibc's malloc
    # reserves 64 MiB per arena (one per thread, up to 8 per core): reserved, not resident
    # (resident memory is what `memory_mb` holds), so what the threads a run may start
    # reserve is added to the address-space limit -- else 19 threads fill 512 MiB
    threads = limits.processes + spec.extra_processes
    as_mb += THREAD_STACK_MB * threads + MALLOC_ARENA_MB * min(threads, 8 * (os.cpu_count() or 1))
    # C/C++ programs get the whole memory as stack (like most judges), and so does the main
    # thread of an in-process Python run (as EvalPlus's and LiveCodeBench's harnesses set
    # it; deep recursion through C, e.g. lru_cache); a runtime started by exec (node, julia,
    # a wrapped Python) would reserve that much for every thread: it gets a shell's 8 MiB
    big_stack = spec.as_overhead_mb == 0 and (not spec.limit_address_space or (spec.inprocess and not wrapper))
    return {
        "cpu": max(1, math.ceil(limits.time_s)),
        "wall": limits.wall(),
        "as": as_mb * mib if use_as else None,
        "rss": limits.memory_mb * mib,
        "nproc": nproc,
        "fsize": limits.file_size_mb * mib,
        "nofile": limits.open_files,
        "stack": (min(limits.memory_mb, 1024) if big_stack else THREAD_STACK_MB) * mib,
        "out": limits.output_bytes,
    }


def files_header(layout: Mapping[str, tuple[bytes, int]], extra: Mapping[str, bytes]) -> Request:
    """The files of a request: the layout's (unless an extra file replaces one), then the extra files."""
    blobs: list[bytes] = []
    fl = []
    for rel, (data, mode) in layout.items():
        if rel not in extra:
            fl.append([rel, len(blobs), mode])
            blobs.append(data)
    for rel, data in extra.items():
        fl.append([rel, len(blobs), 0o644])
        blobs.append(data)
    return {"files": fl}, blobs


def compile_request(spec: LanguageSpec, layout: Mapping[str, tuple[bytes, int]], climits: Limits,
                    count_nproc: bool) -> tuple[dict, list[bytes], int]:
    """The request that compiles `layout`, and the largest size of one collected file."""
    max_collect = climits.file_size_mb << 20
    header, blobs = files_header(layout, {})
    header.update({"op": "run", "exec": spec.compile_argv(climits.memory_mb), "env": dict(spec.env),
                   "limits": rlimits(spec, climits, count_nproc, phase="compile"),
                   "collect": list(spec.artifacts), "collect_max": max_collect * max(1, len(spec.artifacts))})
    return header, blobs, max_collect


def with_stdin(header: dict, blobs: list[bytes], stdin: str | bytes) -> Request:
    """A request from a base (`run_request_base`, not changed) and its stdin."""
    header, blobs = dict(header), list(blobs)
    data = stdin.encode() if isinstance(stdin, str) else bytes(stdin)
    if data:
        header["stdin"] = len(blobs)
        blobs.append(data)
    return header, blobs


def run_request_base(build: Build, limits: Limits, argv: Sequence[str],
                     extra_files: Mapping[str, str | bytes] | None, wrapper: Sequence[str] | None,
                     count_nproc: bool) -> Request:
    """Everything of a run request but its stdin and id (ValueError: not a build of a
    fork-server backend, or an unusable extra file)."""
    spec = get_language(build.language)
    art = build.artifacts
    if not isinstance(art, BuildFiles):
        raise ValueError("this build was not made by a LocalSandbox")
    extra = norm_files(extra_files) if extra_files else {}
    args = [str(a) for a in argv]
    inprocess = spec.inprocess == "python" and not wrapper
    launched = launched_program(build, spec, args, extra) if inprocess else None
    layout = art.files
    if launched is not None:  # (nothing runs the launcher's own file)
        layout = {k: v for k, v in layout.items() if k != spec.main_file}
    header, blobs = files_header(layout, extra)
    header.update({"op": "run", "limits": rlimits(spec, limits, count_nproc, wrapper=bool(wrapper)),
                   "env": dict(spec.env)})
    if spec.main_file not in extra:
        header["build"] = build.key  # lets the server reuse the compiled main module
    if launched is not None:
        # the launcher's work done by the server: the hidden program runs as the
        # main file, its code compiled once per content (not in every child)
        header["python"] = {"main": launched[0], "argv": args[1:], "argv0": "path"}
        header["build"] = launched[1]
    elif inprocess:
        header["python"] = {"main": spec.main_file, "argv": args}
    if inprocess:
        preload = preload_list({**layout, **extra} if extra else layout)
        if preload:
            header["python"]["preload"] = preload
    else:
        header["exec"] = [*(wrapper or ()), *spec.run_argv(limits.memory_mb), *args]
    return header, blobs


