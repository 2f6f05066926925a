# Two commands for a fresh machine (Debian, Python 3.11, no GPU): `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# A CPU build of torch from local disk; an unpinned torch pulls a multi-GB CUDA build.
TORCH  ?= torch==2.13.0

.PHONY: install demo test lint help browser

help:
	@echo "make demo   set up and run the pipeline on submissions/ and the example data"
	@echo "make test   set up and run the whole suite (lint and type checks included)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[collect,publish,serve,mcp,dev,fp8]" --config-settings editable_mode=strict
	touch $(STAMP)

install: $(STAMP)

# The browser tests drive Debian's Chromium (never a downloaded browser); installed when missing and root or sudo.
CHROMIUM ?= /usr/bin/chromium
browser:
	@test -x $(CHROMIUM) || { if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null \
	  || echo "browser tests need Debian's chromium: apt-get install -y chromium"; }

demo: $(STAMP)
	$(BIN)/python -m ecocompute show tests/data/example/submission.json --allowed-signers tests/data/example/allowed_signers
	$(BIN)/python -m ecocompute validate --allowed-signers submissions/allowed_signers
	$(BIN)/python -m ecocompute publish demo --out demo-out

lint: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" bash scripts/lint.sh

test: $(STAMP) browser
	PATH="$(abspath $(BIN)):$$PATH" bash scripts/lint.sh
	$(BIN)/python -m pytest -n auto --dist worksteal
