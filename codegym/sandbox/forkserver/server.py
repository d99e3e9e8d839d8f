"""The server loop of a slot: one request at a time, from its frame to its answer.

`Server.serve` answers the ready handshake, then for each request lays out the
run directory and stdin (`receive_payloads`), forks and supervises the program
(`execute`, `child`, `codegym.sandbox.forkserver.supervise.Watch`), kills and
reaps what the run started, wipes the run's directories (`finish`) and answers.
Its protection: the server is not dumpable, ignores SIGINT, closes its protocol
descriptors in every child, filters every child with seccomp and holds no secrets.
"""

from __future__ import annotations

import builtins
import fcntl
import json
import os
import signal
import sys

from codegym.sandbox.forkserver.confine import (
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_PDEATHSIG,
    apply_rlimits,
    close_fds,
    prctl,
    prepare_close_range,
    prepare_seccomp,
    rlimit_plan,
)
from codegym.sandbox.forkserver.protocol import PIPE_SIZE, PROTOCOL, Reader, pack_frame, safe_rel, write_all
from codegym.sandbox.forkserver.pyrun import (
    BASE_IMPORTS,
    PythonPrep,
    python_process_state,
    relocated,
    run_python_main,
    scattered_heap,
    std_streams,
)
from codegym.sandbox.forkserver.rundir import collect, open_for_write, wipe
from codegym.sandbox.forkserver.supervise import F_SETPIPE_SZ, FIRST_PIPE_SIZE, Watch, kill_everything


class Server:
    """One slot's supervisor: reads requests, runs them one at a time, answers each (docs/sandbox.md)."""

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
        self.python = PythonPrep(self.box, self.preload)
        for fd in (self.inp, self.out):
            os.set_inheritable(fd, False)
            try:
                fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE)
            except OSError:
                pass
        self.reader = Reader(self.inp)
        self.maxfd = 1 << 16

    # ----- lifecycle

    def setup(self) -> None:
        # a previous server of this slot may have died mid-run (rlimits mode)
        for d in [self.box, *self.tmp_dirs]:
            try:
                wipe(d)
            except OSError:
                pass
        prctl(PR_SET_DUMPABLE, 0)
        if not self.pid1:
            prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of the program come back to us
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
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
            import _sitebuiltins  # noqa: PLC0415 -- what `site` would add; programs call exit() a lot
            builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
            builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
        except ImportError:
            pass
        prctl(PR_SET_DUMPABLE, 0)  # (again: resolves the ctypes function before the freeze)
        prepare_close_range()
        rlimit_plan({"fsize": 1, "stack": 1, "nofile": 1, "nproc": 1, "as": 1})  # caches hard limits
        self.streams = self.make_streams()
        try:  # (guarding the server: a program of its uid cannot signal it or change its rlimits)
            self.filter = prepare_seccomp(os.getpid())
        except Exception:
            self.filter = None
        self.seccomp = self.filter is not None
        import gc  # noqa: PLC0415
        gc.collect()
        gc.freeze()  # keep the warm heap shared copy-on-write with children
        try:
            import ctypes  # noqa: PLC0415
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
        own, sys.path = sys.path, self.python.own_path  # (a program's directory never shadows one)
        try:
            for name in new:
                try:
                    __import__(name)
                except Exception:
                    pass
        finally:
            os.register_at_fork, sys.dont_write_bytecode, sys.path = real, write, own
        if hasattr(self, "streams"):  # (after start-up; `setup` freezes the start-up heap)
            import gc  # noqa: PLC0415
            gc.collect()
            gc.freeze()

    def send(self, header: dict, blobs=()) -> None:
        write_all(self.out, pack_frame(header, list(blobs)))

    def serve(self) -> None:
        self.setup()
        self.send({"op": "ready", "protocol": PROTOCOL, "pid": os.getpid(), "uid": os.getuid(),
                   "python": sys.version.split()[0], "executable": sys.executable,
                   "seccomp": self.seccomp, "guard": self.seccomp or self.pid1})
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
                        fd = open_for_write(self.box, t[1], t[2])
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
            raise SystemExit(0) from None
        except Exception as e:  # infrastructure failure inside the server
            return self.finish({"op": "result", "id": rid, "ran": self.ran,
                                "error": f"server: {type(e).__name__}: {e}"}, [])
        finally:
            self.python.restore_path()
            if stdin_fd is not None:
                os.close(stdin_fd)

    def finish(self, resp: dict, blobs: list[bytes], killed: bool = False) -> tuple[dict, list[bytes]]:
        if not killed:  # (execute kills and reaps everything as soon as the program ends)
            kill_everything(self.pid1, self.kill_all)
        try:
            for d in [self.box, *self.tmp_dirs]:
                wipe(d)
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
            # room for what most programs print without a reader (see `Watch.run`'s
            # first wait); pipe pages come only as they are written
            try:
                fcntl.fcntl(fd, F_SETPIPE_SZ, FIRST_PIPE_SIZE)
            except OSError:
                pass
        in_fd = stdin_fd if stdin_fd is not None else self.null
        py = hdr.get("python")
        # exec failures are reported through a close-on-exec pipe; a Python program
        # runs here and must not hold it (it could forge a report)
        x_r, x_w = os.pipe2(os.O_CLOEXEC) if py is None else (-1, -1)
        prep = drop = scatter = None
        if py is not None:
            prep, drop, scatter = self.prepare_python(hdr, py)
        # the server itself wires 0/1/2 for the child to inherit (and builds the
        # Python streams on them here, where it costs no copy-on-write)
        os.dup2(in_fd, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        streams = self.streams if prep is not None else None
        plan = rlimit_plan(lim)
        # everything the supervision needs exists before the fork: while the
        # child lives, every page this process writes is copied (~2 us a page)
        watch = Watch(out_r, err_r, lim, wall, cap)
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
        watch.run(pid, self.pid1, self.kill_all)
        os.dup2(self.null_rw, 0)
        os.dup2(self.null_rw, 1)
        os.dup2(self.stderr_fd, 2)
        # the CPU of every other process of the run counts too: a program must not hide
        # its work in a child it never waits for (nor in one still running at its exit)
        other_cpu, other_rss = kill_everything(self.pid1, self.kill_all)
        watch.drain_pipes()  # every writer is dead now
        exec_error = None
        if x_r >= 0:
            try:
                os.set_blocking(x_r, False)
                xe = os.read(x_r, 4096)
                exec_error = xe.decode("utf-8", "replace") if xe else None
            except (BlockingIOError, OSError):
                pass
            os.close(x_r)
        watch.close()
        resp = watch.facts(other_cpu, other_rss, exec_error)
        blobs = watch.outputs()
        del scatter  # (held until the program is gone: freed earlier, a page copy each)
        resp["collected"] = collect(self.box, hdr, blobs)
        return self.finish(resp, blobs, killed=True)

    def prepare_python(self, hdr: dict, py: dict) -> tuple:
        """(program for `run_python_main`, modules to drop in the child, objects to hold
        while it runs) of a Python run, with the server's state set for it."""
        main = safe_rel(py["main"])
        path = os.path.join(self.box, main)
        # (argv0 "path": the absolute path, as `codegym.sandbox.launcher.LAUNCHER` sets it)
        code, local = self.python.program_for(hdr, main, path)
        prep = (path, [path if py.get("argv0") == "path" else main, *[str(a) for a in py.get("argv", [])]],
                code)
        drop = self.python.shadowed(local) if local else None
        # set before the fork, so the child only reads it (a write there is a page copy)
        python_process_state(prep[1], self.streams)
        self.python.prepare_main(path, self.python.loader_for(path))
        scatter = None
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
        return prep, drop, scatter

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

    def child(self, hdr: dict, plan: list, x_w: int, prep: tuple[str, list[str], object] | None, streams,
              drop=None) -> int:
        os.setsid()
        if x_w >= 0:
            close_fds(3, x_w)
            close_fds(x_w + 1, self.maxfd)
        else:
            close_fds(3, self.maxfd)
        os.chdir(self.box)
        if prep is not None:
            # SIGINT stays ignored (as in the server): resetting it costs every run ~0.1 ms
            apply_rlimits(plan)
            prctl(PR_SET_DUMPABLE, 1)  # the program's own /proc entries stay readable to it
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


def connect_std(path: str) -> None:
    """Make fds 0 and 1 one unix socket connected to `path` (the host's listener, bind-mounted
    into a container): the protocol then bypasses the engine's attach stream."""
    # (the C module: `socket` would bring selectors, enum flags and more into the heap
    # that every run forks)
    import _socket  # noqa: PLC0415 -- only a container's runner needs it

    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    s.connect(path)
    fd = s.detach()
    os.dup2(fd, 0)
    os.dup2(fd, 1)
    os.close(fd)


def main() -> None:
    cfg = json.loads(sys.argv[1])
    if cfg.get("connect"):
        connect_std(cfg["connect"])
    Server(cfg).serve()


if __name__ == "__main__":
    main()
