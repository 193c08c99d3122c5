# Two commands: `make book` builds the book, `make test` builds it and runs every test.
# Both create .venv from requirements.txt on first use (Python 3.11 as python3: the pinned
# build environment; the library itself supports Python 3.10 and later).
SHELL  := /bin/bash
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# Where to get the pinned torch from: empty = PyPI (on Linux, the CUDA build, several GB);
# https://download.pytorch.org/whl/cpu = PyTorch's CPU-only build of the same version.
TORCH_INDEX ?=
TORCH_PIN   := $(shell grep -o '^torch==[^ ]*' requirements.txt)

.PHONY: book book-quick book-replay solutions exercises reference test test-fast benchmarks publish clean

$(STAMP): requirements.txt pyproject.toml
	@mkdir -p _build && date +%s > _build/venv.start
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(if $(TORCH_INDEX),$(PY) -m pip install --quiet "$(TORCH_PIN)" --index-url $(TORCH_INDEX))
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	@echo "venv installed in $$(( $$(date +%s) - $$(cat _build/venv.start) )) s" | tee _build/venv.log
	touch $(STAMP)

# The full book, as readers get it: every chapter executed on this machine at full size,
# warnings are errors. The log (with the exit status and the time) goes to _build/book.log,
# which the tests read.
book: $(STAMP)
	@mkdir -p _build
	@start=$$(date +%s); set -o pipefail; \
	$(VENV)/bin/jupyter-book build . --all -W -n --keep-going 2>&1 | tee _build/book.log; \
	status=$$?; echo "exit status: $$status" >> _build/book.log; \
	echo "full book built in $$(( $$(date +%s) - start )) s (log: _build/book.log)" | tee -a _build/book.log; \
	exit $$status

# The quick book (small sizes, short budgets) for fast local iteration; every page says so.
book-quick: $(STAMP)
	BRRR_QUICK=1 $(VENV)/bin/jupyter-book build . --all -W -n --keep-going --path-output _build/quick

# The published book: every chapter replayed from the newest GPU record set in brrr/data/reference
# (REPLAY=<set> picks another). Nothing is measured, so it takes minutes. Its log, which first
# lists the measurements the set has no record of, goes to _build/replay.log.
REPLAY ?=
book-replay: $(STAMP)
	@mkdir -p _build
	@start=$$(date +%s); set -o pipefail; \
	set_name="$(REPLAY)"; [ -n "$$set_name" ] || set_name=$$($(PY) scripts/replay_coverage.py --newest); \
	{ $(PY) scripts/replay_coverage.py $$set_name && \
	  BRRR_REPLAY=$$set_name $(VENV)/bin/jupyter-book build . --all -W -n --keep-going --path-output _build/replay; } \
	  2>&1 | tee _build/replay.log; \
	status=$$?; echo "exit status: $$status" >> _build/replay.log; \
	echo "replayed book ($$set_name) built in $$(( $$(date +%s) - start )) s (log: _build/replay.log)" | tee -a _build/replay.log; \
	exit $$status

# The instructor build: the same book with the solution notebooks rendered.
solutions: $(STAMP)
	$(PY) scripts/build_solutions_book.py

# Regenerate exercises/ from solutions/ (byte-identical when nothing changed).
exercises: $(STAMP)
	$(PY) scripts/build_exercises.py

# Reference runs of every chapter on this machine (run it on a quiet GPU; see the script).
reference: $(STAMP)
	$(PY) scripts/make_reference.py

# Everything CI checks: the full book and the replayed book, then every test (which also builds
# the quick book, grades the exercises and checks the builds' HTML).
test: book book-replay
	@start=$$(date +%s); BRRR_BUILT_BOOKS=1 $(PY) -m pytest -q -ra --durations=15; status=$$?; \
	echo "Phases:"; cat _build/venv.log 2>/dev/null || echo "venv was already installed"; \
	grep -h "built in" _build/book.log _build/replay.log; \
	echo "tests ran in $$(( $$(date +%s) - start )) s"; \
	exit $$status

test-fast: $(STAMP)
	$(PY) -m pytest -q -ra -m "not slow"

benchmarks: $(STAMP)
	$(PY) benchmarks/run_all.py

# A release: check that every copy of the published location agrees with _config.yml, build
# the replayed book (the newest GPU run) into the deployable site _build/site (GitHub Pages:
# .nojekyll), and the sdist and wheel into dist/. README "Publishing a release" says what to do.
publish: $(STAMP)
	$(PY) scripts/sync_release.py --check
	$(MAKE) book-replay
	rm -rf _build/site dist
	cp -r _build/replay/_build/html _build/site
	touch _build/site/.nojekyll
	$(PY) -m build --outdir dist .
	@echo "site: _build/site  (publish at $$($(PY) -c 'from brrr import _release; print(_release.SITE)'))"
	@echo "package: $$(ls dist)"

clean:
	rm -rf _build dist
