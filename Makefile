# Two entry points, both self-installing into .venv on a fresh machine:
#   make example   run the gate on the bundled example (offline, no API key)
#   make test      lint, type-check src/ (mypy) and run the test suite
#   make test-fast the unit tests only (tests/README.md): under a minute, for while you work
#   make test-lowest   the SDK, action and core tests at the lowest declared dependency versions
#                      (a separate .venv-lowest; not part of `make test`)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BASE := rubrics/cloud-security-review.yaml

.PHONY: example test test-fast lint typecheck bench install test-lowest test-integrations lock-image dist

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

typecheck: $(STAMP)
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m unit

bench: $(STAMP)
	$(BIN)/python benchmarks/attribution.py
	$(BIN)/python benchmarks/judging.py
	$(BIN)/python benchmarks/scale.py

# pyproject.toml's floors, installed exactly from constraints/lowest.txt on this Python.
LOWEST := .venv-lowest
LOWEST_TESTS := tests/judges tests/batch tests/action tests/audit tests/repair tests/discover tests/teach tests/preference \
  tests/ensemble tests/paraphrase tests/attribution tests/trust tests/calibration tests/gate tests/verdicts \
  tests/service tests/fakes tests/rejudge tests/drift tests/history \
  tests/test_globs.py tests/reliability tests/schema \
  tests/cli/test_bad_input.py tests/cli/test_cli.py tests/cli/test_example.py tests/cli/test_untrusted_input.py \
  tests/cli/test_startup.py tests/cli/test_dead_ends.py tests/cli/test_text_report_labels.py \
  tests/report/test_labels.py tests/report/test_markdown_gfm.py tests/report/test_terminal.py \
  tests/repository/test_docs.py tests/repository/test_packaging_metadata.py

test-lowest:
	@test -x $(LOWEST)/bin/python || $(PYTHON) -m venv $(LOWEST)
	$(LOWEST)/bin/python -m pip install --quiet --upgrade pip
	$(LOWEST)/bin/python -m pip install --quiet -c constraints/lowest.txt -e '.[test]'
	$(LOWEST)/bin/python -m pip check
	$(LOWEST)/bin/python -m pytest -q $(LOWEST_TESTS)

# The optional extras with the real packages: inspect-ai and deepeval (about 5 minutes to
# install on 2 cores, 630 MiB), and promptfoo for `promptfoo validate` (about 4 minutes, 1.4 GiB;
# 0.121.20 is the last release that runs on Node 20: 0.122 needs Node 22.22). Both installs run at
# once; without npm the promptfoo tests skip and say why. CI runs this after `make test`.
INTEGRATIONS := .venv-integrations
PROMPTFOO_VERSION := 0.121.20
PROMPTFOO_DIR := .tools/promptfoo

test-integrations:
	@test -x $(INTEGRATIONS)/bin/python || $(PYTHON) -m venv $(INTEGRATIONS)
	@if command -v npm >/dev/null 2>&1; then \
	  test -x $(PROMPTFOO_DIR)/node_modules/.bin/promptfoo || \
	    npm install --prefix $(PROMPTFOO_DIR) --no-audit --no-fund --loglevel=error promptfoo@$(PROMPTFOO_VERSION) & \
	else echo "npm not found: the promptfoo validate tests will skip"; fi; \
	$(INTEGRATIONS)/bin/python -m pip install --quiet --upgrade pip && \
	$(INTEGRATIONS)/bin/python -m pip install --quiet -e '.[test,inspect,deepeval]'; status=$$?; wait; exit $$status
	DEEPEVAL_TELEMETRY_OPT_OUT=YES PROMPTFOO_DISABLE_TELEMETRY=1 \
	  $(INTEGRATIONS)/bin/python -m pytest -q -p no:cacheprovider tests/integrations

# The action image's lock (every dependency, with hashes) from requirements/image.in.
lock-image: $(STAMP)
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile requirements/image.in --universal --python-version 3.12 --generate-hashes \
	  --quiet --custom-compile-command "make lock-image" -o requirements/image.txt

# The sdist and wheel as PyPI would get them, checked by twine.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*
