#!/usr/bin/env bash
# scripts/check-fresh-machine.sh [--full] [--tests "PYTEST ARGS"] [--keep] [--root DIR]
#
# Proves the README's claim that on a fresh Debian 12 machine, as root,
#     git clone ... && make demo && make test
# needs no manual step: it builds a clean Debian 12 (bookworm) root filesystem with mmdebstrap
# from the Debian mirror of this host's apt sources (minbase plus what it takes to type those
# commands: python3, git, make, ca-certificates -- no bubblewrap, compilers, valgrind, Docker),
# and in it, as the root of fresh mount and pid namespaces (pivot_root; everything started inside
# dies with the check):
#   1. git clone of this checkout's commit (HEAD), nothing else copied;
#   2. make demo      -- must install the demo's system packages and play confined: its own
#                        first line must say bubblewrap;
#   3. make test      -- with CI=true (a test whose tool is missing fails, not skips): installs
#                        the rest, starts a Docker engine of its own inside the root and builds the
#                        sandbox images there, installs codegym into a virtualenv (Debian's
#                        python3 is externally managed) and runs ruff and the tests: a
#                        representative subset (below), or all of them with --full.
# The host lends only what any machine of this kind has: the network to the Debian mirror and
# PyPI with the certificate authorities it trusts for it (/usr/local/share/ca-certificates, and
# the SSL_CERT_FILE / PIP_CERT / REQUESTS_CA_BUNDLE settings naming the system's bundle),
# /opt/wheels (torch's CPU wheel, read-only, when present), the kernel and /dev.
# docs/fresh-machine.md says what a pass proves and what it does not. Needs root, mmdebstrap.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
ROOT=/var/tmp/codegym-fresh-machine
KEEP=0
TESTS="tests/sandbox/test_secure_default.py tests/sandbox/test_sandbox.py tests/sandbox/test_hostile.py
tests/sandbox/test_docker_sandbox.py tests/judge/test_judge.py tests/envs/test_env.py
tests/wrappers/test_feedback.py tests/rollout/test_rollout_collect.py tests/docs tests/cli
tests/evaluation/test_report_browser.py tests/timing/test_timing.py tests/importers/test_harbor.py"
while [[ $# -gt 0 ]]; do
	case $1 in
		--full) TESTS=""; shift ;;
		--tests) TESTS=$2; shift 2 ;;
		--keep) KEEP=1; shift ;;
		--root) ROOT=$2; shift 2 ;;
		*) echo "usage: $0 [--full] [--tests 'PYTEST ARGS'] [--keep] [--root DIR]" >&2; exit 2 ;;
	esac
done
[[ $(id -u) -eq 0 ]] || { echo "needs root (mmdebstrap --mode=root, mounts, chroot)" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 2; }

REV=$(git -C "$HERE" rev-parse HEAD)
GITDIR=$(cd "$HERE" && cd "$(git rev-parse --git-common-dir)" && pwd)
T0=$SECONDS
log() { printf '[fresh-machine +%4ds] %s\n' "$((SECONDS - T0))" "$*"; }

# the Debian archive of this host's apt sources (as codegym/_scripts/docker-up.sh finds it)
sources() { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null || true; }
MIRROR=${CODEGYM_APT_MIRROR:-$(sources | grep -E '^(URIs:|deb )' | grep -o 'https\?://[^ ]*/debian/\?' | head -1 || true)}
[[ -n $MIRROR ]] || { echo "no Debian mirror in /etc/apt/sources*: set CODEGYM_APT_MIRROR" >&2; exit 2; }

if [[ -e $ROOT ]]; then
	log "removing the previous root $ROOT"
	rm -rf --one-file-system "$ROOT"
fi
log "mmdebstrap bookworm minbase + python3 git make ca-certificates from $MIRROR -> $ROOT"
mmdebstrap --quiet --variant=minbase --include=python3,git,make,ca-certificates \
	--aptopt='APT::Install-Recommends "false"' bookworm "$ROOT" "deb $MIRROR bookworm main" \
	"deb $MIRROR bookworm-updates main"
# the host's security archive too, when it has one (a fresh install has it)
SEC=$(sources | grep -E '^(URIs:|deb )' | grep -o 'https\?://[^ ]*debian-security/\?' | head -1 || true)
[[ -n $SEC ]] && echo "deb $SEC bookworm-security main" >> "$ROOT/etc/apt/sources.list"
# this machine's network trust: its extra certificate authorities (an egress proxy's)
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
	cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
	chroot "$ROOT" update-ca-certificates >/dev/null
fi
log "root filesystem ready ($(du -sm "$ROOT" | cut -f1) MB); its Python: $(chroot "$ROOT" python3 --version)"

INNER=$(cat <<EOF
set -euo pipefail
export HOME=/root LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
	REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
t0=\$SECONDS
step() { printf '[fresh-machine inside +%4ds] %s\n' "\$((SECONDS - t0))" "\$*"; }
step "git clone (commit $REV)"
git clone -q /src.git /root/codegym
cd /root/codegym
git -c advice.detachedHead=false checkout -q $REV
for tool in bwrap gcc g++ valgrind docker dockerd node; do
	if command -v \$tool >/dev/null; then echo "not fresh: \$tool is already there"; exit 1; fi
done
step "make demo"
make demo 2>&1 | tee /root/demo.log
grep -m1 '^codegym demo:' /root/demo.log | grep -q 'programs run in bubblewrap' \
	|| { echo "FAIL: the demo's first line does not say bubblewrap"; exit 1; }
step "make demo: done (\$(grep -c ' reward ' /root/demo.log || true) episode lines)"
step "make test (CI=true) PYTEST_ARGS='$TESTS'"
CI=true make test PYTEST_ARGS="$(echo $TESTS)"
step "make test: done"
EOF
)

log "into the root: fresh mount and pid namespaces, pivot_root"
set +e
unshare --mount --pid --fork --propagation private bash -c '
	set -e
	R=$1; G=$2; INNER=$3
	# the new root becomes the root of this mount namespace (pivot_root, not chroot): a chrooted
	# process may not create user namespaces, and bubblewrap needs them, as on a real machine
	mount --bind "$R" "$R"
	mount -t proc proc "$R/proc"
	mount --rbind /sys "$R/sys"
	mount --rbind /dev "$R/dev"
	cp /etc/resolv.conf "$R/etc/resolv.conf"
	mkdir -p "$R/src.git"
	mount --bind "$G" "$R/src.git"
	mount -o remount,bind,ro "$R/src.git"
	if [ -d /opt/wheels ]; then
		mkdir -p "$R/opt/wheels"
		mount --bind /opt/wheels "$R/opt/wheels"
		mount -o remount,bind,ro "$R/opt/wheels"
	fi
	cd "$R"
	mkdir -p .oldroot
	pivot_root . .oldroot
	cd /
	umount -l /.oldroot
	rmdir /.oldroot
	exec /usr/bin/env -i bash -c "$INNER"
' check "$ROOT" "$GITDIR" "$INNER"
rc=$?
set -e
log "finished: exit code $rc after $((SECONDS - T0)) s"
if [[ $KEEP -eq 0 ]]; then
	rm -rf --one-file-system "$ROOT"
fi
exit $rc
