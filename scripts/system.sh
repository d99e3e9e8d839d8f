#!/usr/bin/env bash
# scripts/system.sh demo|test|node PYTHON -- the system set-up of `make demo` and `make test`.
#
#   demo   the packages marked "demo" in scripts/system-packages.txt
#   test   every package of the list, then the Docker engine and the sandbox images
#          codegym/python:3.11 and codegym/polyglot (codegym/_scripts/docker-up.sh: Debian's
#          docker.io, images built with mmdebstrap from the Debian mirror, no registry)
#   images what needs codegym installed in PYTHON: the codegym/node image (this host's node in
#          codegym/python:3.11: `codegym images build node --method host`) and the sandbox's
#          Python roots 3.9, 3.11, 3.13 (`codegym images build py3.9 py3.11 py3.13`: mmdebstrap
#          from the Debian mirror, ~2-3 minutes each the first time)
#
# It says what it installs. As root on Debian/Ubuntu (apt-get) it installs what is missing;
# elsewhere it prints the one command that would, and goes on: outside CI the tests that need a
# missing tool skip with the reason, and the sandbox refuses to run programs without bubblewrap
# (docs/sandbox.md). Idempotent and quick when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-demo}
python=${2:-python3}
LIST=scripts/system-packages.txt
UP=codegym/_scripts/docker-up.sh
IMAGES=(codegym/python:3.11 codegym/polyglot:latest)

say() { printf 'codegym set-up: %s\n' "$*"; }
root() { [[ $(id -u) -eq 0 ]]; }
debian() { command -v apt-get >/dev/null && command -v dpkg >/dev/null; }
engine_ok() { command -v docker >/dev/null && timeout 20 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }
images_ok() { engine_ok && docker image inspect "${IMAGES[@]}" >/dev/null 2>&1; }
installed() {  # installed PACKAGE: the package is there (nodejs: any node on PATH will do)
	[[ $1 == nodejs ]] && command -v node >/dev/null && return 0
	if debian; then dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'; return; fi
	case $1 in  # elsewhere: the command the package provides
		bubblewrap) command -v bwrap >/dev/null ;;
		python3-venv) "$python" -c 'import venv, ensurepip' 2>/dev/null ;;
		*) command -v "$1" >/dev/null ;;
	esac
}
elsewhere() {  # elsewhere PACKAGE...: how to install them on this system (dnf: the one command)
	if command -v dnf >/dev/null; then
		# Fedora's names: g++ is gcc-c++, the venv module comes with python3
		printf 'to install them, run once:  sudo dnf install -y'; printf ' %s' "$@" | sed -e 's/ g++/ gcc-c++/; s/ python3-venv//'; echo
	else
		printf "install them with the system's package manager (the Debian names: %s)\n" "$*"
	fi
}

packages() {  # packages demo|test: the list's names for that command
	awk -v want="$1" '!/^#/ && NF >= 2 && (want == "test" || $2 == "demo") { print $1 }' "$LIST"
}

later_images() {
	if ! engine_ok; then
		say "no Docker engine: the codegym/node image and the Python roots' images are not built"
	elif docker image inspect codegym/node:latest >/dev/null 2>&1; then
		:
	elif ! command -v node >/dev/null; then
		say "no node on PATH: the codegym/node image is not built"
	else
		say "building the codegym/node image (codegym/python:3.11 + this host's node, no network)"
		"$python" -m codegym images build node --method host
	fi
	if ! command -v mmdebstrap >/dev/null || ! root; then
		say "the sandbox's Python roots (3.9, 3.11, 3.13) need mmdebstrap and root: not built"
		return 0
	fi
	"$python" -m codegym images build py3.9 py3.11 py3.13 ||
		say "the Python roots were not all built (above): the tests that need them skip (fail in CI)"
}

if [[ $what == images ]]; then later_images; exit 0; fi
[[ $what == demo || $what == test ]] || { echo "usage: scripts/system.sh demo|test|images [PYTHON]" >&2; exit 2; }

mapfile -t want < <(packages "$what")
missing=()
for p in "${want[@]}"; do installed "$p" || missing+=("$p"); done
docker_needed=0
if [[ $what == test ]] && ! images_ok; then docker_needed=1; fi

say "make $what needs the system packages ${want[*]}$([[ $what == test ]] && printf '%s' \
	", a Docker engine and the images ${IMAGES[*]}")"
if [[ ${#missing[@]} -eq 0 && $docker_needed -eq 0 ]]; then
	say "all present"
	exit 0
fi

if ! root || ! debian; then
	[[ ${#missing[@]} -gt 0 ]] && say "missing: ${missing[*]}"
	[[ $docker_needed -eq 1 ]] && say "missing: a running Docker engine with ${IMAGES[*]}"
	if debian; then
		say "to install them, run once:  sudo scripts/system.sh $what"
	else
		[[ ${#missing[@]} -gt 0 ]] && say "this is not Debian/Ubuntu: $(elsewhere "${missing[@]}")"
		[[ $docker_needed -eq 1 ]] && say "and a Docker engine (docs/sandbox.md: the Docker backend)"
	fi
	say "going on without them: the tests that need them skip (they fail in CI), and without bubblewrap" \
		"the sandbox refuses to run programs (docs/sandbox.md)"
	exit 0
fi

if [[ ${#missing[@]} -gt 0 ]]; then
	say "installing with apt-get: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
		apt-get update -q
		apt-get install -y -q --no-install-recommends "${missing[@]}"
	fi
fi
if [[ $docker_needed -eq 1 ]]; then
	say "the Docker engine (docker.io) and the images ${IMAGES[*]}: $UP (takes 1-3 minutes the first time)"
	CODEGYM_IMAGES="python polyglot" bash "$UP"
fi
say "done"
