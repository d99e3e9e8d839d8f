"""Harbor task folders for the tests: a small good task, and each attack of issue 28 on the Harbor door.

`good_folder` writes a task as people write them: ``environment/Dockerfile`` FROM
codegym's local Python image with ``/app/main.py`` (a wrong ``add``), ``tests/test.sh``
**mode 644** (as in the public repositories) that writes ``reward.txt``,
``solution/solve.sh`` (also 644) that fixes ``main.py``. `ATTACKS` maps an attack name to
a function that writes one hostile folder and returns the text its refusal must hold
(None: it must import). Used by tests/importers/test_harbor_attacks.py, test_harbor_import.py and
benchmarks/harbor_attacks.py.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

BASE_IMAGE = "codegym/python:3.11"
DOCKERFILE = f"FROM {BASE_IMAGE}\nWORKDIR /app\nCOPY app/ /app/\n"
TEST_SH = """#!/bin/bash
# Harbor verifier: 1 when add() adds
mkdir -p /logs/verifier
if python3 -c 'import sys; sys.path.insert(0, "."); import main; assert main.add(2, 3) == 5' ; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
SOLVE_SH = """#!/bin/bash
cat > /app/main.py <<'EOF'
def add(a, b):
    return a + b
EOF
"""
STARTER = "def add(a, b):\n    return 0\n"


def docker_ready() -> bool:
    try:
        return subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def good_folder(root: Path, name: str = "good", task_name: str | None = None, dockerfile: str = DOCKERFILE,
                toml: str = "", test_sh: str = TEST_SH, solve_sh: str | None = SOLVE_SH,
                app: dict[str, str] | None = None) -> Path:
    f = Path(root) / name
    (f / "environment" / "app").mkdir(parents=True)
    (f / "tests").mkdir()
    (f / "task.toml").write_text(f'schema_version = "1.4"\n[task]\nname = "org/{task_name or name}"\n'
                                 f"[verifier]\ntimeout_sec = 120.0\n{toml}")
    (f / "instruction.md").write_text("Make `add` in /app/main.py add its arguments.\n")
    (f / "environment" / "Dockerfile").write_text(dockerfile)
    for rel, text in (app or {"main.py": STARTER}).items():
        (f / "environment" / "app" / rel).parent.mkdir(parents=True, exist_ok=True)
        (f / "environment" / "app" / rel).write_text(text)
    (f / "tests" / "test.sh").write_text(test_sh)
    os.chmod(f / "tests" / "test.sh", 0o644)
    if solve_sh is not None:
        (f / "solution").mkdir()
        (f / "solution" / "solve.sh").write_text(solve_sh)
        os.chmod(f / "solution" / "solve.sh", 0o644)
    return f


# --------------------------------------------------------------------------- attacks
# each writes one folder under `root` and returns what the refusal says (None: imports)


def fifo_in_environment(root: Path) -> str:
    f = good_folder(root, "fifo-env")
    os.mkfifo(f / "environment" / "app" / "pipe")
    return "a FIFO"


def fifo_in_tests(root: Path) -> str:
    f = good_folder(root, "fifo-tests")
    os.mkfifo(f / "tests" / "pipe")
    return "a FIFO"


def device_in_tests(root: Path) -> str:
    f = good_folder(root, "device")
    try:
        os.mknod(f / "tests" / "null", 0o600 | 0o020000, os.makedev(1, 3))   # a character device: /dev/null
    except (PermissionError, OSError):
        os.mkfifo(f / "tests" / "null")
        return "a FIFO"
    return "a device"


def hard_link_out(root: Path) -> str:
    outside = Path(root) / "secret-outside.txt"
    outside.write_text("CODEGYM-SECRET\n")
    f = good_folder(root, "hardlink")
    os.link(outside, f / "tests" / "leak.txt")
    return "a hard link to a file outside"


def too_many_files(root: Path) -> str:
    f = good_folder(root, "many")
    for i in range(21_000):
        (f / "environment" / "app" / f"f{i}").touch()
    return "more than 20000 files"


def file_too_big(root: Path) -> str:
    f = good_folder(root, "bigfile")
    with open(f / "environment" / "app" / "blob", "wb") as fh:
        fh.truncate(300 << 20)      # sparse: no disk used
    return "larger than the 256 MiB"


def deep_toml(root: Path) -> str:
    good_folder(root, "deep-toml", toml="[metadata]\nx = " + "[" * 50_000 + "]" * 50_000 + "\n")
    return "nested deeper than 32 levels"


def long_dotted_key(root: Path) -> str:
    good_folder(root, "dotted", toml="[metadata." + ".".join("k" for _ in range(50_000)) + "]\nx = 1\n")
    return "a dotted key of more than 32 parts"


def infinite_timeout(root: Path) -> str:
    f = good_folder(root, "inf-timeout")
    (f / "task.toml").write_text('[task]\nname = "org/inf-timeout"\n[verifier]\ntimeout_sec = inf\n')
    return "verifier.timeout_sec: not a finite number"


def nan_anywhere(root: Path) -> str:
    good_folder(root, "nan", toml="[metadata]\nscore = nan\n")
    return "metadata.score: not a finite number"


def negative_memory(root: Path) -> str:
    good_folder(root, "neg-memory", toml="[environment]\nmemory_mb = -5\n")
    return "environment.memory_mb = -5: out of range"


def huge_timeout(root: Path) -> str:
    good_folder(root, "huge-timeout", toml="[agent]\ntimeout_sec = 1e300\n")
    return "agent.timeout_sec = 1e+300: out of range"


def copy_from_registry(root: Path) -> str:
    good_folder(root, "copy-from", dockerfile=DOCKERFILE + "COPY --from=busybox:1.36-codegym-test /bin/busybox /bb\n")
    return "COPY --from 'busybox:1.36-codegym-test' is not available locally"


def mount_from_registry(root: Path) -> str:
    good_folder(root, "mount-from", dockerfile=DOCKERFILE + "RUN --mount=type=bind,from=alpine:3-codegym-test,"
                                                            "target=/m true\n")
    return "RUN --mount 'alpine:3-codegym-test' is not available locally"


def add_url(root: Path) -> str:
    good_folder(root, "add-url", dockerfile=DOCKERFILE + "ADD https://example.invalid/x.tgz /tmp/\n")
    return "ADD https://example.invalid/x.tgz: the engine would download it"


def escaped_from(root: Path) -> None:
    good_folder(root, "escaped-from", dockerfile=f"FROM \\\n    {BASE_IMAGE}\nWORKDIR /app\nCOPY app/ /app/\n")
    return None


def build_reaches_network(root: Path) -> None:
    """A build step that fails when it has a network interface besides loopback (before: the
    environment's build had Docker's default network); it must import."""
    good_folder(root, "network", dockerfile=DOCKERFILE + "RUN python3 -c \"import os, sys; "
                                                         "sys.exit('NETWORK: ' + str(os.listdir('/sys/class/net')) "
                                                         "if set(os.listdir('/sys/class/net')) - {'lo'} else 0)\"\n")
    return None


def build_never_ends(root: Path) -> str:
    good_folder(root, "slow-build", dockerfile=DOCKERFILE + "RUN sleep 3600\n",
                toml="[environment]\nbuild_timeout_sec = 8.0\n")
    return "stopped after"


def big_workdir_file(root: Path) -> None:
    test_sh = TEST_SH.replace("assert main.add(2, 3) == 5", "import os; assert main.add(2, 3) == 5 and "
                              "os.path.getsize(\"big.bin\") == 200 << 20")
    good_folder(root, "big-workdir", test_sh=test_sh,
                dockerfile=DOCKERFILE + "RUN dd if=/dev/zero of=/app/big.bin bs=1M count=200 status=none\n")
    return None


def multi_step(root: Path) -> str:
    f = good_folder(root, "multi-step", toml='[[steps]]\nname = "one"\n[[steps]]\nname = "two"\n')
    (f / "steps" / "one").mkdir(parents=True)
    return "a multi-step task ([[steps]]: 2 steps)"


def host_env_in_verifier(root: Path) -> str:
    good_folder(root, "host-env", toml='[verifier.env]\nTOKEN = "${GITHUB_TOKEN}"\n')
    return "takes a value from the host's environment"


#: attack -> (writer, needs docker to reach the check)
ATTACKS: dict[str, tuple[Callable[[Path], str | None], bool]] = {
    "FIFO in environment/": (fifo_in_environment, False),
    "FIFO in tests/": (fifo_in_tests, False),
    "device in tests/": (device_in_tests, False),
    "hard link to a host file": (hard_link_out, False),
    "21,000 files": (too_many_files, False),
    "300 MB file in the folder": (file_too_big, False),
    "task.toml nested 50,000 deep": (deep_toml, False),
    "task.toml 50,000-part dotted key": (long_dotted_key, False),
    "timeout_sec = inf": (infinite_timeout, False),
    "nan in [metadata]": (nan_anywhere, False),
    "memory_mb = -5": (negative_memory, False),
    "agent timeout 1e300": (huge_timeout, False),
    "multi-step task": (multi_step, False),
    "${VAR} from the host in verifier.env": (host_env_in_verifier, False),
    "COPY --from=<image not local>": (copy_from_registry, True),
    "RUN --mount=from=<image not local>": (mount_from_registry, True),
    "ADD <url>": (add_url, True),
    "FROM with an escaped continuation": (escaped_from, True),
    "RUN with a network interface": (build_reaches_network, True),
    "RUN sleep 3600 (build bound 8 s)": (build_never_ends, True),
    "200 MB file in the working directory": (big_workdir_file, True),
}
