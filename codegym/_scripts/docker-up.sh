#!/usr/bin/env bash
# docker-up.sh - bring up a local Docker engine and build the codegym base images
# WITHOUT any registry pull (for machines where Docker Hub is unreachable).
#
# Shipped inside the codegym package and run by `codegym images build --method debootstrap`
# (or `--method auto` when no registry answers); the Dockerfiles next to it
# (docker/*.Dockerfile) build the same images from debian:bookworm-slim when a
# registry is reachable. The images and their contents must stay in step with
# codegym.sandbox.docker.DEFAULT_IMAGES / IMAGE_RECIPES.
#
# Target: Debian 12 (bookworm) x86_64, run as root, network limited to the
# Debian/PyPI/npm package registries.  Idempotent: re-running reuses a running
# engine and skips images that already exist (CODEGYM_REBUILD=1 forces rebuild).
#
# Steps
#   1. apt-get install docker.io + mmdebstrap if missing (service start is
#      suppressed on init-less machines; we start dockerd ourselves).
#   2. make sure cgroups are mounted (memory/pids limits need them).
#   3. reuse a responding engine, else start dockerd (overlay2, falling back to
#      vfs) with --iptables=false --bridge=none and wait until it answers.
#   4. build rootfs tarballs with mmdebstrap (minbase, no docs/man/locales)
#      from the Debian mirror configured in the host's apt sources, and
#      `docker import` them:
#         python   -> codegym/python:3.11          (python3 stdlib, no pip)
#         cpp      -> codegym/cpp:latest, :gcc12   (g++, gcc, make)
#         polyglot -> codegym/polyglot:latest      (python3 + g++ + make; opt-in)
#         node     -> codegym/node:latest          (python3 + Debian's nodejs; opt-in; `codegym
#                                                   images build node --method host` copies the
#                                                   host's own node instead: the local backend's)
#   5. smoke-test: limited `docker run --network none`, memory limit, no network.
#
# Environment knobs (all optional):
#   CODEGYM_IMAGES="python cpp"     which images to build (add "polyglot", "node")
#   CODEGYM_REBUILD=0|1             rebuild images even if present
#   CODEGYM_STORAGE_DRIVER=overlay2 storage driver when we start dockerd
#   CODEGYM_APT_MIRROR=URI          Debian archive URI (default: from apt sources)
#   CODEGYM_SUITE=bookworm          Debian suite for the images
#   CODEGYM_DOCKER_SOCK=/var/run/docker.sock
#   CODEGYM_DOCKER_DATA_ROOT=/var/lib/docker
#   CODEGYM_DOCKER_EXEC_ROOT=/var/run/docker
#   CODEGYM_DOCKERD_LOG=/var/log/codegym-dockerd.log
#   CODEGYM_READY_TIMEOUT=60        seconds to wait for dockerd
#   CODEGYM_SKIP_VERIFY=0|1         skip the smoke tests
set -Eeuo pipefail

SUITE=${CODEGYM_SUITE:-bookworm}
IMAGES=${CODEGYM_IMAGES:-python cpp}
REBUILD=${CODEGYM_REBUILD:-0}
DRIVER=${CODEGYM_STORAGE_DRIVER:-overlay2}
SOCK=${CODEGYM_DOCKER_SOCK:-/var/run/docker.sock}
DATA_ROOT=${CODEGYM_DOCKER_DATA_ROOT:-/var/lib/docker}
EXEC_ROOT=${CODEGYM_DOCKER_EXEC_ROOT:-/var/run/docker}
DLOG=${CODEGYM_DOCKERD_LOG:-/var/log/codegym-dockerd.log}
READY_TIMEOUT=${CODEGYM_READY_TIMEOUT:-60}
SKIP_VERIFY=${CODEGYM_SKIP_VERIFY:-0}
export DOCKER_HOST="unix://$SOCK"

T_START=$SECONDS
log()  { printf '[docker-up +%3ds] %s\n' "$((SECONDS - T_START))" "$*" >&2; }
die()  { printf '[docker-up] ERROR: %s\n' "$*" >&2; exit 1; }
trap 'die "command failed (line $LINENO): $BASH_COMMAND"' ERR

[[ $(id -u) -eq 0 ]] || die "must run as root"
command -v apt-get >/dev/null || die "apt-get not found: this script targets Debian"

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/codegym-docker-up.XXXXXX")
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

# ---------------------------------------------------------------- 1. packages
install_pkgs() {  # install_pkgs pkg... ; suppresses service auto-start
	local policy_created=0 rc=0
	if [[ ! -e /usr/sbin/policy-rc.d && "$(cat /proc/1/comm 2>/dev/null)" != systemd ]]; then
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
		policy_created=1
	fi
	log "apt-get install $*"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$WORK/apt.log" 2>&1; then
		log "install failed; running apt-get update and retrying"
		DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$WORK/apt.log" 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >>"$WORK/apt.log" 2>&1 || rc=$?
	fi
	[[ $policy_created -eq 1 ]] && rm -f /usr/sbin/policy-rc.d
	if [[ $rc -ne 0 ]]; then tail -20 "$WORK/apt.log" >&2; die "apt-get install $* failed"; fi
}

need=()
command -v dockerd    >/dev/null || need+=(docker.io)
command -v docker     >/dev/null || need+=(docker.io)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
if [[ ${#need[@]} -gt 0 ]]; then
	install_pkgs $(printf '%s\n' "${need[@]}" | sort -u)
else
	log "docker.io and mmdebstrap already installed"
fi

# ----------------------------------------------------------------- 2. cgroups
if ! grep -q ' cgroup2\? ' /proc/mounts; then
	log "no cgroup filesystem mounted; mounting with cgroupfs-mount"
	command -v cgroupfs-mount >/dev/null || install_pkgs cgroupfs-mount
	cgroupfs-mount || die "cgroupfs-mount failed"
fi
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then cg_ctl=$(cat /sys/fs/cgroup/cgroup.controllers)
else cg_ctl=$(ls /sys/fs/cgroup 2>/dev/null | tr '\n' ' '); fi
for c in memory pids; do
	[[ " $cg_ctl " == *" $c "* ]] || log "WARNING: cgroup controller '$c' not available: --${c/pids/pids-limit} will not be enforced"
done

# ------------------------------------------------------------------ 3. engine
engine_ok() { timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

start_dockerd() {  # start_dockerd DRIVER ; returns 0 when the engine answers
	local drv=$1 pid t0=$SECONDS
	mkdir -p "$(dirname "$DLOG")" "$(dirname "$SOCK")"
	log "starting dockerd (storage-driver=$drv, --iptables=false --bridge=none), log: $DLOG"
	setsid nohup dockerd \
		--host "unix://$SOCK" --data-root "$DATA_ROOT" --exec-root "$EXEC_ROOT" \
		--pidfile "$EXEC_ROOT.pid" --storage-driver "$drv" \
		--iptables=false --ip-masq=false --bridge=none \
		--log-opt max-size=10m </dev/null >>"$DLOG" 2>&1 &
	pid=$!
	while (( SECONDS - t0 < READY_TIMEOUT )); do
		if engine_ok; then log "dockerd ready after $((SECONDS - t0))s (pid $pid)"; return 0; fi
		if ! kill -0 "$pid" 2>/dev/null; then
			log "dockerd exited; last log lines:"; tail -5 "$DLOG" >&2; return 1
		fi
		sleep 0.2
	done
	log "dockerd did not answer within ${READY_TIMEOUT}s; killing pid $pid"
	kill "$pid" 2>/dev/null || true
	return 1
}

if engine_ok; then
	log "docker engine already answering on $SOCK; reusing it"
else
	if pgrep -x dockerd >/dev/null; then
		# a busy engine on a loaded machine can take long to answer: never start a second
		# dockerd on the same data root beside it (the second removes the first's socket and
		# neither answers again)
		wait_s=$(( READY_TIMEOUT > 300 ? READY_TIMEOUT : 300 ))
		log "a dockerd process exists ($(pgrep -x dockerd | tr '\n' ' ')) but $SOCK does not answer; waiting up to ${wait_s}s"
		end=$((SECONDS + wait_s))
		until engine_ok || (( SECONDS > end )); do sleep 1; done
		engine_ok || die "a dockerd process runs ($(pgrep -x dockerd | tr '\n' ' ')) but does not answer on $SOCK; not starting a second engine beside it: stop it (kill $(pgrep -x dockerd | tr '\n' ' ')) and run this again"
	fi
	if ! engine_ok; then
		if ! start_dockerd "$DRIVER"; then
			[[ $DRIVER != vfs ]] || die "dockerd failed to start (see $DLOG)"
			log "retrying with the slow but universal vfs storage driver"
			start_dockerd vfs || die "dockerd failed to start (see $DLOG)"
		fi
	fi
fi
actual_driver=$(docker info --format '{{.Driver}}')
log "engine: $(docker version --format 'server {{.Server.Version}}, client {{.Client.Version}}'), storage driver: $actual_driver"
[[ $actual_driver == vfs ]] && log "NOTE: vfs copies the whole image per container: docker run costs ~3s instead of ~0.25s"

# ------------------------------------------------------------ 4. base images
# Debian sources from the host's apt configuration: prints "URI SUITE" per entry.
apt_source_entries() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -r $f ]] || continue
		sed -e 's/#.*//' "$f" | awk '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
			if (i + 1 <= NF) print $i, $(i + 1) }'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -r $f ]] || continue
		awk 'function flush(  n, m, a, b, U, S) {
			if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled != "no") {
				n = split(uris, U, /[ \t]+/); m = split(suites, S, /[ \t]+/)
				for (a = 1; a <= n; a++) for (b = 1; b <= m; b++) if (U[a] != "" && S[b] != "") print U[a], S[b]
			}
			types = uris = suites = ""; enabled = "yes" }
		BEGIN { enabled = "yes" }
		/^[ \t]*#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[A-Za-z-]+:/ { key = tolower($1); sub(/:$/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
			if (key == "types") types = val; else if (key == "uris") uris = val
			else if (key == "suites") suites = val; else if (key == "enabled") enabled = tolower(val) }
		END { flush() }' "$f"
	done
}

SOURCES=()
if [[ -n ${CODEGYM_APT_MIRROR:-} ]]; then
	SOURCES=("deb $CODEGYM_APT_MIRROR $SUITE main")
else
	entries=$(apt_source_entries | awk '$1 ~ /^(https?|file):\/\//' | sort -u)
	for s in "$SUITE" "$SUITE-updates" "$SUITE-security"; do
		uri=$(awk -v s="$s" '$2 == s { print $1; exit }' <<<"$entries")
		[[ -n $uri ]] && SOURCES+=("deb $uri $s main")
	done
	[[ ${#SOURCES[@]} -gt 0 && ${SOURCES[0]} == *" $SUITE main" ]] ||
		die "no '$SUITE' entry found in /etc/apt/sources.list*; set CODEGYM_APT_MIRROR=<debian archive URI>"
fi

MMDEB_OPTS=(
	--quiet --variant=minbase --mode=root --format=tar
	--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr   # merged /usr without pulling usrmerge+perl
	--aptopt='APT::Install-Recommends "false"'
	--dpkgopt='force-unsafe-io'
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-include=/usr/share/locale/locale.alias'
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/lintian/*'
)
IMPORT_CHANGES=(
	--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
	--change 'ENV LANG=C.UTF-8'
)

build_image() {  # build_image "pkg,pkg" CMD TAG [TAG...]
	local pkgs=$1 cmd=$2 ref=$3 t0=$SECONDS tar id old_id
	shift 2
	old_id=$(docker image inspect --format '{{.Id}}' "$ref" 2>/dev/null || true)
	if [[ $REBUILD != 1 && -n $old_id ]]; then
		log "image $ref exists; skipping (CODEGYM_REBUILD=1 to rebuild)"
		for t in "$@"; do docker tag "$ref" "$t"; done
		return 0
	fi
	tar="$WORK/${ref//[\/:]/_}.tar"
	log "mmdebstrap $SUITE minbase + [$pkgs] -> $tar"
	mmdebstrap "${MMDEB_OPTS[@]}" --include="$pkgs" "$SUITE" "$tar" "${SOURCES[@]}" >"$WORK/mmdebstrap.log" 2>&1 ||
		{ tail -20 "$WORK/mmdebstrap.log" >&2; die "mmdebstrap failed for $ref"; }
	log "rootfs built in $((SECONDS - t0))s ($(du -m "$tar" | cut -f1) MB); docker import -> $ref"
	id=$(docker import "${IMPORT_CHANGES[@]}" --change "CMD $cmd" "$tar" "$ref") || die "docker import failed for $ref"
	for t in "$@"; do docker tag "$id" "$t"; done
	rm -f "$tar"
	# drop the image this rebuild replaced, if nothing else uses it
	if [[ -n $old_id && $old_id != "$id" ]]; then docker rmi "$old_id" >/dev/null 2>&1 || true; fi
	log "built $* in $((SECONDS - t0))s: $(docker image inspect --format '{{.Size}}' "$ref" | awk '{printf "%.0f MB", $1/1e6}')"
}

for img in $IMAGES; do
	case $img in
		python)   build_image python3          '["python3"]' codegym/python:3.11 ;;
		cpp)      build_image g++,make         '["bash"]'    codegym/cpp:latest codegym/cpp:gcc12 ;;
		polyglot) build_image python3,g++,make '["bash"]'    codegym/polyglot:latest ;;
		node)     build_image python3,nodejs   '["bash"]'    codegym/node:latest ;;
		*) die "unknown image '$img' in CODEGYM_IMAGES (known: python cpp polyglot node)" ;;
	esac
done

# --------------------------------------------------------------- 5. verify
if [[ $SKIP_VERIFY != 1 ]]; then
	RUN=(docker run --rm --network none --memory 256m --pids-limit 64 --cpus 1)
	if [[ " $IMAGES " == *" python "* ]]; then
		out=$("${RUN[@]}" codegym/python:3.11 python3 -c 'import sys; print(sys.version.split()[0])') ||
			die "smoke test failed: python3 does not run in codegym/python:3.11"
		[[ $out == 3.11.* ]] || die "codegym/python:3.11 runs python $out"
		log "verify: python $out runs under --network none --memory 256m --pids-limit 64 --cpus 1"
		rc=0; "${RUN[@]}" codegym/python:3.11 python3 -c 'b = bytearray(512 << 20)' >/dev/null 2>&1 || rc=$?
		[[ $rc -eq 137 ]] && log "verify: 512 MB allocation under --memory 256m was OOM-killed (rc 137)" ||
			log "WARNING: memory limit not enforced (rc $rc)"
		nets=$("${RUN[@]}" codegym/python:3.11 ls /sys/class/net | tr '\n' ' ')
		[[ $nets == "lo " ]] && log "verify: --network none leaves only 'lo'" || log "WARNING: --network none shows interfaces: $nets"
	fi
	if [[ " $IMAGES " == *" cpp "* ]]; then
		"${RUN[@]}" codegym/cpp:latest sh -c 'cd /tmp && printf "#include <cstdio>\nint main(){std::puts(\"ok\");}\n" > t.cpp && g++ -O2 t.cpp -o t && ./t' | grep -qx ok ||
			die "smoke test failed: g++ cannot compile+run in codegym/cpp"
		log "verify: g++ compiles and runs in codegym/cpp"
	fi
fi

log "done in $((SECONDS - T_START))s; images:"
docker images --format '{{.Repository}}:{{.Tag}}  {{.Size}}' | grep '^codegym/' | sed 's/^/    /' >&2 || true
[[ $SOCK == /var/run/docker.sock || $SOCK == /run/docker.sock ]] || log "use: export DOCKER_HOST=unix://$SOCK"
