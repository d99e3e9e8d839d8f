# attack: read the expected output from disk (run directory, /tmp, parents, /) or from other processes, print what looks like it
# kind: stdio
# task: secret
# verdict: wrong_answer|runtime_error
"""The expected output is a random 32-hex string unrelated to the input."""
import os
import re

HEX = re.compile(r"\b[0-9a-f]{32}\b")
found = []
for root in (".", "..", "/tmp", os.environ.get("TMPDIR", "/tmp"), "/box", "/builds", "/"):
    for k, (d, dirs, files) in enumerate(os.walk(os.path.abspath(root))):
        if k > 100:
            break
        dirs[:] = [x for x in dirs if os.path.join(d, x) not in ("/proc", "/sys", "/usr", "/dev", "/lib")]
        for n in files[:200]:
            try:
                with open(os.path.join(d, n), errors="replace") as fh:
                    found += HEX.findall(fh.read(4096))
            except OSError:
                pass
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for what in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", errors="replace") as fh:
                    found += HEX.findall(fh.read())
            except OSError:
                pass
print(found[0] if found else "0" * 32)
