#!/bin/sh
# scripts/python.sh PYTHON VENV -- prints the interpreter `make` installs codegym into: PYTHON
# itself when pip may install into it, else (PYTHON has no pip, or is "externally managed",
# PEP 668, as Debian's /usr/bin/python3 is) the virtualenv VENV made from it, made here once.
py=${1:-python3}
venv=${2:-.venv}
if "$py" -c 'import os, sys, sysconfig, pip
sys.exit(os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))' 2>/dev/null; then
	command -v "$py"
	exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
	echo "codegym set-up: $py is externally managed (or has no pip): codegym goes into the virtualenv" \
		"$venv (use it with: . $venv/bin/activate)" >&2
	"$py" -m venv "$venv" >&2 || { echo "codegym set-up: cannot make $venv (Debian/Ubuntu: apt-get install" \
		"python3-venv)" >&2; command -v "$py"; exit 0; }
fi
echo "$venv/bin/python"
