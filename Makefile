# Two commands: `make book` builds the book, `make test` runs every test.
# Both create .venv from requirements.txt on first use (Python 3.11+ as python3).
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: book book-quick solutions exercises test test-fast benchmarks clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

# The full book, as readers get it: every chapter executed on this machine.
book: $(STAMP)
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

# The quick book (small sizes, short budgets), as CI builds it.
book-quick: $(STAMP)
	BRRR_QUICK=1 $(VENV)/bin/jupyter-book build . -W -n --keep-going --path-output _build/quick

# The instructor build: the same book with the solution notebooks rendered.
solutions: $(STAMP)
	$(PY) scripts/build_solutions_book.py

# Regenerate exercises/ from solutions/ (byte-identical when nothing changed).
exercises: $(STAMP)
	$(PY) scripts/build_exercises.py

test: $(STAMP)
	$(PY) -m pytest -q -ra

test-fast: $(STAMP)
	$(PY) -m pytest -q -ra -m "not slow"

benchmarks: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf _build
