# attack: look inside the interpreter for the supervisor's state (a fork server that runs code without exec leaks its modules, objects, descriptors)
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# check: canary_hidden
import gc
import sys

suspicious = sorted(m for m in sys.modules if m.split(".")[0] in ("codegym", "pytest", "_pytest"))
if suspicious:
    print(f"ESCAPED: supervisor modules loaded in the program's interpreter: {suspicious[:5]}", flush=True)
hits = 0
for obj in gc.get_objects():
    if isinstance(obj, dict):
        for v in list(obj.values())[:1000]:
            if isinstance(v, str) and "cgcanary" in v:
                hits += 1
                print(f"ESCAPED: canary in interpreter memory: {v}", flush=True)
        if hits:
            break
print(f"argv={sys.argv[:1]} modules={len(sys.modules)}", flush=True)
