# Set-up, the two everyday commands and the paper's reproduction. `make run`,
# `make test` and `make reproduce` create the virtual environment in .venv/ on
# first use (from the pinned requirements.txt) and reuse it afterwards; the
# install builds the compiled extensions (setup.py: the fast engine's draws,
# the found words' dict), again whenever their source changes.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: setup run test check reproduce clean

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml setup.py triehh/engines/_compiled_draws.pyx \
    triehh/core/_compiled_word_votes.pyx
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/python -m experiments.run_triehh $(ARGS)

# Both lanes run on every core (pytest-xdist, one worker process per logical
# CPU); the tests that share a module's fixture go to one worker
# (tests/conftest.py). TEST_WORKERS=0 runs in this process, one test after
# the other. See docs/testing.md.
TEST_WORKERS ?= logical
PYTEST_PARALLEL = -n $(TEST_WORKERS) --dist loadgroup

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q $(PYTEST_PARALLEL) $(ARGS)

# The fast lane: the tests marked neither slow nor tff (tests/conftest.py);
# the TensorFlow Federated modules are not even imported.
check: $(STAMP)
	$(VENV)/bin/python -m pytest -q $(PYTEST_PARALLEL) -m "not slow and not tff" $(ARGS)

# The paper's tables and figures beside its numbers: docs/results/REPORT.md.
reproduce: $(STAMP)
	$(VENV)/bin/python -m experiments.reproduce_paper \
	    --output_dir=results/reproduce --report_dir=docs/results $(ARGS)

clean:
	rm -rf $(VENV)
