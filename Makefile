# Two commands on a fresh machine:
#   make demo   installs tfprof_nb with TensorFlow (CPU) and profiles a small Keras model
#   make test   installs everything the tests need and runs the whole suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check

.PHONY: demo test bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.demo-installed: pyproject.toml | $(PY)
	$(PIP) install -q -e ".[demo]"
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(PY)
	$(PIP) install -q -e ".[test]"
	touch $@

demo: $(VENV)/.demo-installed
	$(PY) -m tfprof_nb.demo --out demo_out

test: $(VENV)/.test-installed
	$(PY) -m pytest

bench: $(VENV)/.test-installed
	$(PY) benchmarks/bench_load.py
	$(PY) benchmarks/bench_capture.py
	$(PY) benchmarks/bench_analysis.py

clean:
	rm -rf $(VENV) demo_out .pytest_cache
