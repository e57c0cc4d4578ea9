# Entry points for a fresh machine with Python 3.11+:
#   make demo   run the main job on the bundled data
#   make check  the fast loop: ruff, mypy and the tests that need neither live servers nor
#               full reports (about 2 minutes on two idle cores)
#   make test   run the whole test suite (ruff, mypy, every test: live, reports, notebooks)
# Each creates (or reuses) the virtualenv in .venv and installs what it needs.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.perfkit-installed

# the fast tier: tests/ only (the notebooks under nbval are slow), no test marked live (nginx,
# wrk, Locust) or slow (a full report, a browser, a simulation: tests/conftest.py marks every
# test that takes a report), on two processes (pytest-xdist: make check took 220 s of CPU,
# user + sys, on 2026-11-29, so about 110 s on two idle cores), without the plugins only the
# full suite uses (nbval's import alone takes seconds; addopts holds its options)
FAST_TESTS := tests -m "not live and not slow" -n 2 -o addopts=-ra -p no:nbval -p no:locust \
              -p no:anyio -q --durations=10

.PHONY: demo check test lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m perfkit report -p params/demo.yaml -o reports/demo
	@echo "open reports/demo/index.html in a browser (it works offline)"

check: $(STAMP)
	$(PY) -m ruff check perfkit tests benchmarks
	$(PY) -m mypy
	$(PY) -m pytest $(FAST_TESTS)

test: $(STAMP)
	bash scripts/install-system-packages.sh
	$(PY) -m ruff check perfkit tests benchmarks
	$(PY) -m mypy
	$(PY) -m pytest

clean:
	rm -rf $(VENV) reports .pytest_cache .mypy_cache .ruff_cache
