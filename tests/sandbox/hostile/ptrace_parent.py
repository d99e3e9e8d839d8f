# attack: ptrace the parent (supervisor) and the test process (PTRACE_SEIZE does not stop them)
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# rlimits_needs_root: true
"""A tracer can rewrite its tracee's memory; a seize that succeeds is ESCAPED.
Exiting detaches automatically, so a hole leaves no stopped process behind."""
import ctypes
import ctypes.util
import os
import sys

PTRACE_SEIZE = 0x4206
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
targets = {os.getppid()}
if len(sys.argv) > 4 and sys.argv[4].isdigit():
    targets.add(int(sys.argv[4]))
targets.discard(0)
for pid in sorted(targets):
    if libc.ptrace(PTRACE_SEIZE, pid, None, None) == 0:
        print(f"ESCAPED: ptrace-seized pid {pid}", flush=True)
    else:
        print(f"blocked: ptrace {pid}: {os.strerror(ctypes.get_errno())}", flush=True)
