
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
    # exact-type copies of a subclass's value without calling the subclass (complex.__complex__
    # and bytes.__bytes__ are Python 3.11's; before, the base type's descriptors and slicing)
    complex_of = getattr(complex, "__complex__", None) or \
        (lambda x: complex(complex.real.__get__(x), complex.imag.__get__(x)))
    bytes_of = getattr(bytes, "__bytes__", None) or (lambda x: bytes.__getitem__(x, slice(None)))
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

    if sys.version_info < (3, 11):
        # the hook below refuses frame introspection (tb_frame, gi_frame, f_back) and gc's
        # referrers through audit events that older Pythons do not raise: judging there would
        # leave the tests' frames open to the candidate
        emit_fail('{"stage": "driver", "type": "DriverError", "message": "the script kind needs '
                  'Python >= 3.11 (its defences rely on audit events older versions lack); this is '
                  'Python %d.%d"}' % sys.version_info[:2])
        os._exit(3)

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

    CONVERT = ((int, int.__index__), (float, float.__float__), (complex, complex_of),
               (str, str.__str__), (bytes, bytes_of), (list, list.copy),
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
            return bytes.decode(bytes_of(p), "utf-8", "surrogateescape")
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
    preamble = cfg.get("preamble")   # a benchmark harness's block, run as if prepended to the program
    preamble_code = compile(preamble, "<preamble>", "exec", dont_inherit=True) if preamble else None
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
            if preamble_code is not None:
                exec(preamble_code, mod.__dict__)
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
    if sys.version_info >= (3, 13):
        # frozen stdlib modules are unmarshalled when imported since 3.13 (no deep-freeze), which
        # the hook refuses (marshal.loads): import the few a program may still need now
        import _imp
        for name in _imp._frozen_module_names():
            if name[:2] != "__" and name not in modules:
                try:
                    __import__(name)
                except BaseException:
                    pass
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
