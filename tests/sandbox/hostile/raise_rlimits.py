# attack: raise its own hard rlimits (CPU, AS, NPROC, FSIZE, NOFILE), then spin
# verdict: timeout
# limits: time_s=0.5 wall_s=1 memory_mb=128
"""Raising a hard limit needs CAP_SYS_RESOURCE; success is reported as ESCAPED."""
import resource
import time

for name in ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE"):
    r = getattr(resource, name)
    soft, hard = resource.getrlimit(r)
    if hard == resource.RLIM_INFINITY:
        print(f"{name}: hard limit already infinite (soft={soft})", flush=True)
        target = resource.RLIM_INFINITY
    else:
        target = hard * 4 + 1024
    try:
        resource.setrlimit(r, (target, target))
        if hard != resource.RLIM_INFINITY:
            print(f"ESCAPED: raised hard {name} from {hard} to {target}", flush=True)
    except (ValueError, OSError) as e:
        print(f"blocked: {name}: {e}", flush=True)
end = time.time() + 20
while time.time() < end:
    pass
