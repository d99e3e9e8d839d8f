# Two commands do everything on a fresh Debian 12 machine (as root; elsewhere they print the one
# command that installs the system packages, scripts/system.sh):
#   make demo   -- the system packages of the demo (scripts/system-packages.txt: bubblewrap, gcc,
#                  g++, make, git, python3-venv), codegym, then a sample of every family (oracle /
#                  baseline / mutant) and the HTML report (FULL=1: every task)
#   make test   -- every system package of the list, the Docker engine and the sandbox images,
#                  codegym with its test dependencies, then the whole test suite
PYTHON ?= python3
# the interpreter codegym goes into: $(PYTHON), or the virtualenv $(VENV) made from it when pip
# may not install into it (Debian's /usr/bin/python3 is "externally managed", PEP 668)
VENV ?= .venv
PY = $(shell scripts/python.sh $(PYTHON) $(VENV))
PIP = $(PY) -m pip
PYTEST_ARGS ?=

.PHONY: system system-test install demo test bench test-debian-python

# torch, explicitly its CPU build (a bare `torch` requirement, such as the trl extra's, would
# pull a multi-GB CUDA build): from the local wheel folder machines of this kind have
# (TORCH_WHEELS), else from PyTorch's own CPU index (TORCH_INDEX; the README's "Install" says
# what that needs). A torch that is already installed is kept.
TORCH_VERSION ?= 2.13.0
TORCH_WHEELS ?= /opt/wheels
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

# the system packages (scripts/system-packages.txt), said before they are installed
system:
	@scripts/system.sh demo $(PYTHON)

system-test:
	@scripts/system.sh test $(PYTHON)

install:
	@if $(PY) -c 'import torch' 2>/dev/null; then \
		echo "torch $$($(PY) -c 'import torch; print(torch.__version__)') is installed: kept"; \
	elif ls $(TORCH_WHEELS)/torch-$(TORCH_VERSION)+cpu-*.whl >/dev/null 2>&1; then \
		echo "torch $(TORCH_VERSION)+cpu (CPU build) from $(TORCH_WHEELS)"; \
		$(PIP) install -q --find-links $(TORCH_WHEELS) 'torch==$(TORCH_VERSION)+cpu'; \
	else \
		echo "torch $(TORCH_VERSION)+cpu (CPU build) from $(TORCH_INDEX)"; \
		$(PIP) install -q 'torch==$(TORCH_VERSION)+cpu' --index-url $(TORCH_INDEX) \
			--extra-index-url https://pypi.org/simple; \
	fi
	$(PIP) install -q -e '.[test]'
	@# Harbor's task.toml schema for tests/importers/test_harbor.py (harbor needs Python >= 3.12; its
	@# schema module imports on 3.11 from the wheel, which is only downloaded)
	$(PIP) download -q harbor==0.26 --no-deps --python-version 3.12 --only-binary=:all: -d .cache/harbor

# a representative sample in well under three minutes on 2 cores; `make demo FULL=1` plays every task
demo: system install
	$(PY) -m codegym.cli.demo $(if $(FULL),--full,)

test: system-test install
	@scripts/system.sh images $(PY)
	$(PY) -m ruff check .
	$(PY) -m mypy
	@# the interpreter's own commands first on PATH (a virtualenv's `ray`, `uv`, which tests and
	@# verifiers' harness start by name; found missing on a fresh machine)
	PATH="$(abspath $(dir $(PY))):$$PATH" $(PY) -m pytest -q -n 2 $(PYTEST_ARGS)

bench: system install
	$(PY) benchmarks/sandbox_throughput.py
	$(PY) benchmarks/timing_noise.py

# The core tests (sandbox, judge, edits, tasks, env, wrappers) and the repository-task tests
# under Debian's own interpreter (3.11.2, older than the pyenv 3.11.7 the rest runs on: no
# tarfile filter=, ...), in a virtualenv made from it with the core dependencies only
DEBIAN_VENV ?= .cache/venv-debian-python
test-debian-python:
	[ -x $(DEBIAN_VENV)/bin/python ] || /usr/bin/python3 -m venv $(DEBIAN_VENV)
	$(DEBIAN_VENV)/bin/pip install -q -e '.[docker]' pytest pytest-timeout
	$(DEBIAN_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/sandbox/test_sandbox.py \
		tests/judge/test_judge.py tests/edits tests/tasks/test_task.py tests/envs/test_env.py \
		tests/wrappers/test_wrappers.py tests/tasks/test_repo.py \
		tests/judge/test_repo_grading.py tests/judge/test_repo_env.py tests/importers/test_swebench.py \
		tests/envs/test_swe_env.py tests/tasks/test_swe_real.py tests/importers/test_swebench_real.py
