"""codegym command runner (repo tasks): runs setup commands once, then test commands, in ws/.

Request (stdin, JSON): {"commands": [{"argv": [...], "collect": [rel, ...]}], "setup": [sh, ...],
"env": {NAME: value}, "path": [dir, ...] (put before PATH), "timeout": s (each command)}.
Answer (last line): "@cgcmd " + {"setup": {"rc", "output"} | null, "runs": [{"rc", "output", "files"}]};
rc "missing" names a test tool that is not there, "timeout" / "error" say the runner's own failure.
"""
import json, os, resource, shutil, subprocess, sys
req = json.loads(sys.stdin.read() or "{}")
os.chdir("ws")
env = dict(os.environ)
env.update({str(k): str(v) for k, v in (req.get("env") or {}).items()})
if req.get("path"):
    env["PATH"] = os.pathsep.join([*req["path"], env.get("PATH", "")])
# the tests run with a shell's stack (8 MiB): every thread they start reserves the stack
# rlimit as address space, and this run's own limit is the memory limit (deep recursion)
soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
want = 8 << 20
if soft == resource.RLIM_INFINITY or soft > want:
    resource.setrlimit(resource.RLIMIT_STACK, (want, hard))


def missing(argv):
    """What of the command's own tool is absent (None: it is there). Checked outside ws,
    so the candidate's files can neither provide nor hide it."""
    prog = argv[0]
    if "/" in prog:
        exe = prog if os.access(prog, os.X_OK) else None
    else:
        exe = shutil.which(prog, path=env.get("PATH"))
    if exe is None:
        return "the test command's program %r is not installed in the sandbox (PATH=%s)" % (prog, env.get("PATH"))
    if len(argv) > 2 and argv[1] == "-m" and os.path.basename(prog).startswith("python"):
        mod = argv[2]
        probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)"
        p = subprocess.run([exe, "-c", probe, mod.split(".")[0]], cwd="/", env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if p.returncode != 0:
            return "the test command's Python module %r is not installed for %s" % (mod, exe)
    return None


def run(argv, shell=False):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=req.get("timeout"), env=env, shell=shell)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        return "timeout", (e.stdout or b"").decode("utf-8", "replace")
    except OSError as e:
        return "error", "cannot run %r: %s" % (argv, e)


setup = None
if req.get("setup"):
    rc, out = run("set -e\n" + "\n".join(req["setup"]) + "\n", shell=True)
    if rc == 127:
        rc = "missing"
    setup = {"rc": rc, "output": out[-(1 << 20):]}
runs = []
for cmd in req.get("commands", []):
    if setup is not None and setup["rc"] != 0:
        break
    argv = [str(a) for a in cmd["argv"]]
    for rel in cmd.get("collect", []):  # a report file left in the tree is not the run's
        try:
            os.unlink(rel)
        except OSError:
            pass
    why = missing(argv) if argv else "empty test command"
    if why is not None:
        runs.append({"rc": "missing", "output": why, "files": {}})
        continue
    rc, out = run(argv)
    files = {}
    for rel in cmd.get("collect", []):
        try:
            with open(rel, "rb") as f:
                files[rel] = f.read(8 << 20).decode("utf-8", "replace")
        except OSError:
            pass
    runs.append({"rc": rc, "output": out[-(2 << 20):], "files": files})
sys.stdout.write("@cgcmd " + json.dumps({"setup": setup, "runs": runs}) + "\n")
