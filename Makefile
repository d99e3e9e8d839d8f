# Two commands do everything on a fresh Debian 12 machine:
#   make demo   -- install, then play a sample of every family (oracle / baseline / mutant) and
#                  write the HTML report (FULL=1: every task)
#   make test   -- install, then run the whole test suite
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
PYTEST_ARGS ?=

.PHONY: install demo test bench test-debian-python

# torch, explicitly its CPU build (a bare `torch` requirement, such as the trl extra's, would
# pull a multi-GB CUDA build): from the local wheel folder machines of this kind have
# (TORCH_WHEELS), else from PyTorch's own CPU index (TORCH_INDEX; the README's "Install" says
# what that needs). A torch that is already installed is kept.
TORCH_VERSION ?= 2.13.0
TORCH_WHEELS ?= /opt/wheels
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

install:
	@# mmdebstrap builds the sandbox's Python roots (codegym.sandbox.roots) from the Debian mirror
	@command -v mmdebstrap >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		echo "installing mmdebstrap (apt-get)" && { apt-get install -y -q --no-install-recommends mmdebstrap || \
		{ apt-get update -q && apt-get install -y -q --no-install-recommends mmdebstrap; }; }; } || \
		echo "codegym: mmdebstrap is missing (apt-get install mmdebstrap): Python roots cannot be built"
	@if $(PYTHON) -c 'import torch' 2>/dev/null; then \
		echo "torch $$($(PYTHON) -c 'import torch; print(torch.__version__)') is installed: kept"; \
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
demo: install
	$(PYTHON) -m codegym.cli.demo $(if $(FULL),--full,)

test: install
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest -q -n 2 $(PYTEST_ARGS)

bench: install
	$(PYTHON) benchmarks/sandbox_throughput.py
	$(PYTHON) benchmarks/timing_noise.py

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
