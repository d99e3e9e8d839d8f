# attack: read the parent's environment (the test sets CODEGYM_CANARY before creating the sandbox)
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# check: canary_hidden
import os

for key, value in os.environ.items():
    if "CANARY" in key or "cgcanary" in value:
        print(f"ESCAPED: {key}={value}", flush=True)
print(f"{len(os.environ)} variables visible", flush=True)
