# Two entry points for a fresh machine with Python 3.11+:
#   make demo   run the main job on the bundled data
#   make test   run the whole test suite
# Both create (or reuse) the virtualenv in .venv and install what they need.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.perfkit-installed

.PHONY: demo test lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m perfkit report -p params/demo.yaml -o reports/demo
	@echo "open reports/demo/index.html in a browser (it works offline)"

test: $(STAMP)
	bash scripts/install-system-packages.sh
	$(PY) -m ruff check perfkit tests benchmarks
	$(PY) -m pytest

clean:
	rm -rf $(VENV) reports .pytest_cache
