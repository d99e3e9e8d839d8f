# Two commands do everything on a fresh Debian 12 machine:
#   make demo   -- install, then run the main job on the bundled default suite
#   make test   -- install, then run the whole test suite
PYTHON ?= python3
PIP ?= $(PYTHON) -m pip
PYTEST_ARGS ?=

.PHONY: install demo test bench

install:
	@# torch: the CPU wheel (a bare `torch` requirement would pull a multi-GB CUDA build)
	$(PYTHON) -c 'import torch' 2>/dev/null || $(PIP) install -q 'torch==2.13.0' || \
		$(PIP) install -q torch --index-url https://download.pytorch.org/whl/cpu
	$(PIP) install -q -e '.[test]'

demo: install
	$(PYTHON) -m codegym.cli.demo

test: install
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest -q -n 2 $(PYTEST_ARGS)

bench: install
	$(PYTHON) benchmarks/sandbox_throughput.py
	$(PYTHON) benchmarks/timing_noise.py
