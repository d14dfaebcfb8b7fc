# Two commands on a fresh machine:
#   make demo   installs tfprof_nb with TensorFlow (CPU), profiles a small Keras model and
#               writes an offline report
#   make test   installs everything the tests need and runs the whole suite
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check

.PHONY: demo test bench screenshots clean js wheels

JS_SOURCES := $(wildcard js/src/*.ts js/src/*/*.ts) js/package.json js/package-lock.json \
	js/build.mjs tfprof_nb/widgets/manifest.json
BUNDLE := tfprof_nb/static/views.js

$(PY):
	$(PYTHON) -m venv $(VENV)

# Installs with uv (parallel downloads, unpacking and byte-compiling: about 1 min against pip's
# 2-2.5 min on the 2-core VM, the same versions); with pip where uv cannot be had or fails.
# Compiled at install as pip does: where PYTHONDONTWRITEBYTECODE is set (this VM), nothing is
# cached later and every test process would compile TensorFlow again (pytest 18.7 min, not 13)
UV := $(VENV)/bin/uv
define install
	( $(PIP) install -q uv==0.13.8 && \
		$(UV) pip install -q --compile-bytecode --python $(PY) $(1) ) || \
		$(PIP) install -q $(1)
endef

$(VENV)/.demo-installed: pyproject.toml | $(PY)
	$(call install,-e ".[demo]")
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(PY)
	$(call install,-e ".[test]")
	touch $@

# Widgets: TypeScript in js/, bundled by esbuild into the package.  npm ci installs exactly
# the committed lock file and never rewrites it (it holds every platform's optional packages).
js/node_modules/.installed: js/package.json js/package-lock.json
	cd js && npm ci --no-audit --no-fund
	touch $@

$(BUNDLE): $(JS_SOURCES) js/node_modules/.installed
	cd js && npm run build

js: $(BUNDLE)

# Wheels for manylinux2014 x86_64 and aarch64, macOS arm64 and x86_64 (the native library
# cross-built by zig, checked against each wheel's tag) and the sdist, into dist/
$(VENV)/.wheel-tools-installed: | $(PY)
	$(PIP) install -q ziglang==0.17.1 auditwheel==6.8.2
	touch $@

wheels: $(BUNDLE) $(VENV)/.wheel-tools-installed
	$(PY) -m tools.build_wheels --out dist

# Browser tests drive Debian's Chromium (never a downloaded browser build).
/usr/bin/chromium:
	apt-get update -qq && apt-get install -y -qq chromium

demo: $(VENV)/.demo-installed $(BUNDLE)
	$(PY) -m tfprof_nb.demo --out demo_out

# pytest-xdist: the suite runs in TEST_WORKERS processes, each test module in one of them (its
# module fixtures, a Jupyter server or a browser, made once); the TensorFlow captures the
# session fixtures make are shared by the workers (tests/conftest.py)
TEST_WORKERS ?= 2

# The tests a busy machine can break (a Ctrl-C landing as a run ends, a slow load's progress
# output in JupyterLab) run beside a CPU-bound job on every core, after the rest of the suite.
LOAD_TESTS := tests/test_interrupt_scope.py tests/analysis/test_interrupt.py \
	tests/widgets/test_jupyterlab.py::test_views_in_jupyterlab

test: $(VENV)/.test-installed $(BUNDLE) /usr/bin/chromium
	cd js && npx tsc --noEmit && npx vitest run
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=20 $(addprefix --deselect ,$(LOAD_TESTS))
	$(PY) -m tools.under_cpu_load -- $(PY) -m pytest -q -p no:cacheprovider $(LOAD_TESTS)

bench: $(VENV)/.test-installed $(BUNDLE) /usr/bin/chromium
	$(PY) benchmarks/bench_load.py
	$(PY) benchmarks/bench_capture.py
	$(PY) benchmarks/bench_monitor.py
	$(PY) benchmarks/bench_analysis.py
	$(PY) benchmarks/bench_engine.py --pod --big
	$(PY) benchmarks/bench_report.py
	$(PY) benchmarks/bench_notebook.py
	$(PY) benchmarks/bench_plot.py
	$(PY) benchmarks/bench_object_store.py

# docs/screenshots: every tab of the CPU, GPU and TPU reports, the TPU trace viewer on a step,
# an AMD GPU launch linked to its kernel (taken by the report tests), and the trace viewer's
# area summary, flows, counters, track menu, keys and a kernel table's row shown in the trace;
# the Source view of a notebook cell's JAX program and of the command-buffer capture, and that
# capture's XLA tab (its ops attributed inside the command buffers)
screenshots: $(VENV)/.test-installed $(BUNDLE) /usr/bin/chromium
	TFPROF_NB_SCREENSHOTS=docs/screenshots $(PY) -m pytest -q tests/reporting/test_report.py \
		-k "captured_cpu_profile or gpu_fixture or tpu_profile or gpu_launch or command_buffer"
	TFPROF_NB_SCREENSHOTS=docs/screenshots $(PY) -m pytest -q tests/widgets/test_trace_viewer.py
	TFPROF_NB_SCREENSHOTS=docs/screenshots $(PY) -m pytest -q tests/widgets/test_source_view.py

clean:
	rm -rf $(VENV) demo_out .pytest_cache
