# Two entry points, both self-installing into .venv on a fresh machine:
#   make example   run the gate on the bundled example (offline, no API key)
#   make test      lint and run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BASE := rubrics/cloud-security-review.yaml

.PHONY: example test lint bench install

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

example: $(STAMP)
	@echo "== sound revision: expect PASS (exit 0)"
	$(BIN)/rubric-gate check --base $(BASE) --head examples/sound-revision.yaml
	@echo
	@echo "== drifting revision: expect FAIL (exit 1)"
	@status=0; $(BIN)/rubric-gate check --base $(BASE) --head examples/drifting-revision.yaml || status=$$?; \
	  if [ $$status -ne 1 ]; then echo "unexpected exit $$status (expected 1: gate failed)"; exit 1; fi; \
	  echo "(exit 1: the gate rejected the drifting revision, as expected)"

lint: $(STAMP)
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/attribution.py
	$(BIN)/python benchmarks/judging.py
	$(BIN)/python benchmarks/scale.py
