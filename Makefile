# sapsam: every target installs what it needs into .venv first, so a fresh clone needs no setup.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test lint typecheck unit bench clean proto serve demo demo-ofc demo-pineapple demo-tournament torture \
	cluster cluster-test web-unit web-proto web-test web-browser web

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall whenever the project's metadata changes.
$(STAMP): $(BIN)/python pyproject.toml clients/sapsam_client/pyproject.toml clients/sapsam_proto/pyproject.toml
	$(BIN)/python -m pip install --quiet -e clients/sapsam_proto -e '.[dev,bench]' \
		-e 'clients/sapsam_client[rules]'
	touch $(STAMP)

install: $(STAMP)

# buf breaking compares proto/ with the last release: the newest v* tag reachable from HEAD, or,
# in a clone made without tags, the commit that v0.1.0 tags.
RELEASE_TAG := $(shell git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null)
RELEASE_REF := $(if $(RELEASE_TAG),tag=$(RELEASE_TAG),ref=3e21771e8e74593c0abdca98c623922f89eeb624)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/buf lint
	$(BIN)/buf breaking proto --against '.git#$(RELEASE_REF),subdir=proto'

typecheck: $(STAMP)
	$(BIN)/mypy --strict service/sapsam clients/sapsam_client/src

# pytest exits 5 when it collects nothing; that is a failure here, and make stops on it.
# TEST_WORKERS pytest processes (pytest-xdist) share the suite a file at a time, so a module's
# shared server or fixture starts once; each worker starts its own embedded PostgreSQL. They take
# the files in collection order (--no-loadscope-reorder), which tests/conftest.py makes the longest
# files first (LONGEST_FILES), so that no worker is left with one at the end while the others idle.
# Much of the suite waits on servers and subprocesses, so two workers on two cores cut the wall
# time by about a third, and a third worker some 8 % more (make test in 577 s against 626 s, at a
# load of ~5: docs/performance.md); TEST_WORKERS=0 runs it in one process. The 25 slowest tests
# are listed at the end (make test must stay under 10 minutes on a 2-core machine: that list says
# where it goes). The browser step (web-browser) runs beside pytest: it waits on its server and
# Chromium about half of its ~80 s, which pytest's workers fill. Its output goes to a file shown
# when pytest is done (so neither interleaves with the other); make test fails when either fails.
TEST_WORKERS ?= 3
test: lint typecheck web-unit $(STAMP)
	@browser_log=$$(mktemp); \
	$(MAKE) --no-print-directory -o $(STAMP) web-browser >$$browser_log 2>&1 & browser=$$!; \
	trap 'kill $$browser 2>/dev/null; rm -f $$browser_log' EXIT; \
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25; \
	tests=$$?; wait $$browser; browser_status=$$?; \
	echo "== the browser tests (make web-browser), run beside pytest:"; cat $$browser_log; \
	if [ $$tests != 0 ]; then echo "== make test: pytest failed ($$tests)"; fi; \
	if [ $$browser_status != 0 ]; then echo "== make test: the browser tests failed ($$browser_status)"; fi; \
	[ $$tests = 0 ] && [ $$browser_status = 0 ]

# web/node_modules as web/package-lock.json pins it: npm ci from npm's cache when it has the
# packages (about 2 s), nothing global. It runs again only when the lock file is newer than the last
# install (npm ci writes node_modules/.package-lock.json), so make test installs once for web-unit
# and web-test; `rm -rf web/node_modules` forces a fresh one.
WEB_MODULES := web/node_modules/.package-lock.json
$(WEB_MODULES): web/package-lock.json
	cd web && npm ci --prefer-offline --no-audit --no-fund --loglevel=error
	touch $@

# The browser's independent verifier (web/, TypeScript, written from docs/ alone) against every
# vector of docs/: web/node_modules (above), the type check (tsc --strict, 1 s) and Vitest (2 s);
# nothing global. It also fails when web/src/gen/ (the page's TypeScript for proto/, committed)
# differs from what `make web-proto` would write now.
web-unit: $(STAMP) $(WEB_MODULES)
	@gen=$$(mktemp -d) && $(BIN)/buf generate --template web/buf.gen.yaml -o $$gen \
		&& diff -r web/src/gen $$gen/web/src/gen >/dev/null \
		|| { rm -rf $$gen; echo "web/src/gen/ is stale: run make web-proto"; exit 1; }; rm -rf $$gen
	cd web && npx tsc --noEmit && npx vitest run

# The browser tests (web/e2e/, Playwright): the built page (vite build) in the machine's Chromium
# (CHROMIUM, default /usr/bin/chromium, Debian's `chromium`; Playwright downloads nothing) against a
# real `sapsam serve --http` on a fresh embedded PostgreSQL (SAPSAM_E2E_DATABASE_URL: that server
# instead), with bots from sapsam-bot; screenshots in web/e2e-artifacts/ (web/playwright.config.ts).
web-test: $(STAMP) $(WEB_MODULES)
	cd web && npx vite build --logLevel warn
	cd web && SAPSAM_BIN=$(abspath $(BIN)) npx playwright test

# make test's browser step: web-test where Chromium is present or installable (as root, by apt-get),
# else a line saying the browser tests were skipped. The venv is this make's to install: the inner
# make takes it as made (-o), as `make -o $(STAMP) web-browser` meant it (make passes no -o on).
web-browser: $(STAMP)
	@chromium=$${CHROMIUM:-/usr/bin/chromium}; \
	if [ ! -x "$$chromium" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "== installing Debian's chromium for the browser tests"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq chromium >/dev/null 2>&1 \
			|| { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; } || true; \
	fi; \
	if [ -x "$$chromium" ]; then $(MAKE) --no-print-directory -o $(STAMP) web-test; \
	else echo "== no Chromium at $$chromium and none installable: the browser tests (make web-test) skipped"; fi

# Regenerate the page's TypeScript for the API contract (proto/ -> web/src/gen/, @bufbuild/protobuf
# v2 by protoc-gen-es from web/node_modules, through buf; web/buf.gen.yaml).
web-proto: $(STAMP) $(WEB_MODULES)
	rm -rf web/src/gen && $(BIN)/buf generate --template web/buf.gen.yaml

# Regenerate the committed Python code of the API contract (proto/ -> sapsam_proto.v1, the one copy
# the server and the SDK share); tests/api/test_generated_code.py fails when the committed code
# differs from what this produces.
proto: $(STAMP)
	$(BIN)/python -m sapsam.api.codegen --proto-root proto --output clients/sapsam_proto/src/sapsam_proto

# Run the game service on 127.0.0.1:50051 (embedded PostgreSQL unless DATABASE_URL is set);
# extra flags go in SERVE_ARGS, e.g. `make serve SERVE_ARGS="--workers 2"`.
serve: $(STAMP)
	$(BIN)/sapsam serve $(SERVE_ARGS)

# Play in a browser (issue #21): the service as `make serve` runs it, also serving Connect on
# WEB_HTTP (127.0.0.1:8080), and the page (Vite, which passes /sapsam.v1.* to it) on
# http://127.0.0.1:WEB_PORT (5173): lobby.html to play, history.html for your deals, index.html
# to verify and replay any export. Ctrl-C stops both.
WEB_HTTP ?= 127.0.0.1:8080
WEB_PORT ?= 5173
web: $(STAMP) $(WEB_MODULES)
	@$(BIN)/sapsam serve --http $(WEB_HTTP) $(SERVE_ARGS) & server=$$!; \
	trap 'kill $$server 2>/dev/null; wait $$server' EXIT INT TERM; \
	echo "== play at http://127.0.0.1:$(WEB_PORT)/lobby.html (Ctrl-C stops the page and the server)"; \
	cd web && SAPSAM_HTTP=$(WEB_HTTP) npx vite --host 127.0.0.1 --port $(WEB_PORT) --strictPort --clearScreen false

# A server on a fresh embedded database in a temporary folder, four bots over gRPC playing an
# 8-deal series, every deal's reveal and scores, the standings, and every deal verified from the log.
demo: $(STAMP)
	$(BIN)/sapsam demo

# Open face (issue #18): four solver bots over gRPC play an ofc_classic set with a Fantasyland and a
# timeout (deal 1's seed chosen and seat 0 setting the rows that earn it), each deal's rows and
# scores, every deal verified.
demo-ofc: $(STAMP)
	$(BIN)/sapsam demo --preset ofc_classic

# Twelve bots play a 3-table, 2-round tournament over gRPC on a fresh embedded database; prints each
# round's tables and the standings, then verifies the seating draw, every deal and the standings.
# Pineapple (issue #19): three solver bots play a pineapple set, each discard committed as a hash and
# opened (signed) at the end of its deal, with a Fantasyland (deal 1's seed chosen so seat 0 earns
# it by playing as it always plays); every deal verified. Exits 0 every time.
demo-pineapple: $(STAMP)
	$(BIN)/sapsam demo --preset pineapple

demo-tournament: $(STAMP)
	$(BIN)/sapsam tournament demo

bench: $(STAMP)
	@for script in bench/[!_]*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

# SIGKILLs of the server and PostgreSQL crashes under bot load, with a ledger of every acknowledged
# call checked against the log (torture/run.py, docs/reliability.md); never part of `make test`.
# PROFILE=short is the CI-sized run (about 5 minutes); TORTURE_ARGS e.g. "--seed 7 --keep".
PROFILE ?= full
torture: $(STAMP)
	$(BIN)/python -m torture.run --profile $(PROFILE) $(TORTURE_ARGS)

# Three `sapsam serve` behind HAProxy (HTTP/2 to each, /ready checks), a PostgreSQL primary and a
# synchronous streaming standby (initdb, pg_basebackup -R), until Ctrl-C; prints the addresses.
# Needs haproxy (`apt-get install -y haproxy`) and PostgreSQL's tools. docs/operations.md,
# "A cluster on one machine". CLUSTER_ARGS e.g. "--replicas 2 --keep".
cluster: $(STAMP)
	$(BIN)/python -m cluster.run $(CLUSTER_ARGS)

# The cluster under bot load: a replica SIGKILLed, watchers on two replicas, the standby promoted
# (cluster/tests; a few minutes, so not part of `make test`).
cluster-test: $(STAMP)
	$(BIN)/python -m pytest cluster/tests -v

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
