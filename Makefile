# Two targets a newcomer needs (see README "Quick start"):
#   make demo   install into .venv and run the check on the bundled example
#   make demo-docs   the same on the bundled folder of Markdown pages (examples/docs-kb)
#   make test   install the test extras into .venv and run the whole test suite
# Any Python 3.11+ works: `make demo PYTHON=python3.12`.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo demo-docs test lint clean

# The environment is made for one Python: a .venv left by another one (say
# `make demo` with 3.11, then `.ci/run` with 3.13) is made anew.
PYVER  := $(shell $(PYTHON) -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)
MADE   := $(VENV)/.python-$(PYVER)

$(MADE):
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "rag-corpus-check needs Python 3.11+"'
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	touch $@

# Runtime dependencies come from the hash-locked file the action uses.
$(VENV)/.runtime: $(MADE) requirements/runtime.lock pyproject.toml
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements/runtime.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

$(VENV)/.test: $(VENV)/.runtime pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

demo: $(VENV)/.runtime
	$(BIN)/rag-corpus-check --config examples/kb/.rag-corpus-check.yml

demo-docs: $(VENV)/.runtime
	$(BIN)/rag-corpus-check --config examples/docs-kb/.rag-corpus-check.yml
	$(BIN)/rag-corpus-check --config examples/docs-kb/sections.rag-corpus-check.yml

test: $(VENV)/.test
	$(BIN)/python -m pytest

lint: $(VENV)/.test
	$(BIN)/ruff check check tests

clean:
	rm -rf $(VENV)
