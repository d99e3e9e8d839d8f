# attack: become root again: setuid/setgid/setresuid(0), then look at the effective capabilities
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
"""A sandboxed program must end with no effective capabilities, whatever its uid."""
import os

for name, call in (("setgid(0)", lambda: os.setgid(0)), ("setuid(0)", lambda: os.setuid(0)),
                   ("setresuid(0,0,0)", lambda: os.setresuid(0, 0, 0)),
                   ("setgroups([0])", lambda: os.setgroups([0]))):
    try:
        call()
        print(f"{name} succeeded", flush=True)
    except OSError as e:
        print(f"blocked: {name}: {e.strerror}", flush=True)
status = open("/proc/self/status").read()
fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
cap_eff = int(fields.get("CapEff", "0").strip(), 16)
print(f"uid={os.getuid()} euid={os.geteuid()} CapEff={cap_eff:#x} NoNewPrivs={fields.get('NoNewPrivs', '?').strip()}", flush=True)
if cap_eff:
    print(f"ESCAPED: effective capabilities {cap_eff:#x}", flush=True)
