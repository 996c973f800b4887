# crdplay: `make run` serves the playground, `make test` runs every test, `make bench` reports sizes.
# Every target installs or generates what it needs and is cheap to repeat on a warm cache: Go's build cache
# decides what to rebuild, so the Go targets are phony rather than file rules.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
ADDR ?= 127.0.0.1:8080
# Extra flags for crdplay-server, e.g. make run RUN_FLAGS=--log-requests
RUN_FLAGS ?=
# Where make run-etcd's embedded etcd keeps its data, across restarts; delete it to start empty.
ETCD_DATA_DIR ?= build/etcd-data

# The workspace in which the engine is built for js/wasm: go.work plus copies of a few upstream modules from
# which code the browser never runs is cut (network clients, unused registrations; the list and reasons are in
# tools/wasmws, the effect in docs/architecture.md). Only commands that set GOWORK to it use it; plain
# `go build` and `go test` never do.
WASM_WS := $(CURDIR)/build/wasm
WASM_ENV := GOWORK=$(WASM_WS)/go.work GOOS=js GOARCH=wasm
# go test for js/wasm runs the test binary with go_js_wasm_exec (which calls node) found on PATH.
WASM_EXEC_DIR = $(shell $(GO) env GOROOT)/lib/wasm
# Packages whose tests also run under node: the engine, everything internal it is built from, and the
# playground (its evaluator and kubectl run in the browser over the engine).
WASM_TEST_PKGS := ./engine/... $(if $(wildcard internal),./internal/...) ./playground/...

# `make test` is every test target.
TEST_TARGETS := test-lint test-go test-fuzz test-wasm test-browser

# The playground's static site (tools/webbuild): `make run` serves SITE_DIR; the browser tests build their own
# copy with test assets; `make bench` measures a release build (brotli quality 11, slow the first time: the
# compressed wasm is then cached by content under build/cache).
SITE_DIR := build/web
TEST_SITE_DIR := build/web-test
BENCH_SITE_DIR := build/web-release
WEBBUILD_FLAGS ?=

.PHONY: help run run-etcd build site test $(TEST_TARGETS) bench soak wasm-workspace need-node need-chromium clean

help:
	@echo 'make run    build, then serve on http://$(ADDR) with in-memory storage (RUN_FLAGS=--log-requests)'
	@echo 'make run    ... and the playground at http://$(ADDR)/ (the site in $(SITE_DIR))'
	@echo 'make run-etcd  the same with objects in an etcd run inside the server (data in $(ETCD_DATA_DIR))'
	@echo 'make test   every test: vet, gofmt, templ drift, tsc; Go natively; Go under GOOS=js GOARCH=wasm in node;'
	@echo '            the bridge in node and the playground in headless Chromium (test-browser); each fuzz target'
	@echo '            for FUZZTIME=$(FUZZTIME) (test-fuzz)'
	@echo 'make bench  reports: engine size for the browser, page load and re-evaluation times, wasm/native time per'
	@echo '            evaluation phase, API throughput on memory and etcd; then crdplay beside the real API server'
	@echo '            (the oracle) on the same work: every corpus CRD to its first object, creates/s (tools/sidebyside)'
	@echo 'make soak   mixed API load for SOAK_DURATION=$(SOAK_DURATION) on memory and embedded etcd: RSS, heap,'
	@echo '            goroutines and threads at start and end, then SIGKILL and a check of every acknowledged write;'
	@echo '            then a flood of concurrent paginated LISTs over large objects for SOAK_FLOOD=$(SOAK_FLOOD),'
	@echo '            peak RSS against its bound'
	@echo 'make clean  remove bin/, build/ and test-results/'

## Running

# build makes everything `make run` serves: the server and the playground's site.
build: site
	$(GO) build -o bin/crdplay-server ./server/cmd/crdplay-server

# The site: templ pages, the esbuild bundle of web/src, the bridge wasm, all precompressed (brotli, gzip).
# WEBBUILD_FLAGS=-release compresses with brotli quality 11.
site: node_modules/.package-lock.json
	$(GO) run ./tools/webbuild -o $(SITE_DIR) $(WEBBUILD_FLAGS)

# exec, so that the server itself receives Ctrl-C and SIGTERM and shuts down gracefully.
run: build
	exec ./bin/crdplay-server --addr $(ADDR) --storage memory --site $(SITE_DIR) $(RUN_FLAGS)

# run-etcd keeps objects in a real etcd that the server starts in-process on a loopback port (nothing to install);
# they survive restarts in ETCD_DATA_DIR.
run-etcd: build
	exec ./bin/crdplay-server --addr $(ADDR) --storage etcd --etcd-embedded --data-dir $(ETCD_DATA_DIR) --site $(SITE_DIR) $(RUN_FLAGS)

## Testing

test: $(TEST_TARGETS)

test-lint:
	$(GO) vet ./...
	$(GO) -C tools/wasmsize vet ./...
	@unformatted=$$(gofmt -l $$(find . \( -path ./build -o -path ./bin -o -path ./.git -o -name node_modules \) -prune \
		-o -name '*.go' -print)); \
	if [ -n "$$unformatted" ]; then echo "gofmt -w needed for:"; echo "$$unformatted"; exit 1; fi
	@# The generated templ code is committed: regenerating must change nothing.
	$(GO) tool templ generate -path web
	@drift=$$(git status --porcelain -- 'web/*_templ.go'); \
	if [ -n "$$drift" ]; then echo "templ output differs from the committed *_templ.go (run go tool templ generate):"; \
		echo "$$drift"; git --no-pager diff --stat -- 'web/*_templ.go'; exit 1; fi

# The release histories of cmd/crdplay's TestGatewayAPIReleases take about 4 minutes alone on 2 cores, and
# go test runs packages side by side: past go test's 10-minute default on a busy machine, hence 30.
test-go:
	$(GO) test -timeout 30m ./...

# Every fuzz target of the tracked tests, each for FUZZTIME on its corpus (the seeds and testdata/fuzz), so
# that a target that no longer builds or finds a crash at once fails `make test`; longer fuzzing is by hand.
# A run fuzzes one target, so each package's instrumented test binary is built once (in FUZZ_DIR) and run per
# target from the package's directory, with the fuzz cache go test would use.
# Go 1.26's fuzz coordinator can fail a run whose -fuzztime ends while a worker is mid-input, with the bare
# error "context deadline exceeded" and no failing input (go.dev/issue/75804, fixed in Go 1.27 by suppressing
# exactly that error). Such a run is a pass here; anything else the run says after "--- FAIL" is a failure.
FUZZTIME ?= 3s
FUZZ_DIR := $(CURDIR)/build/fuzz
test-fuzz:
	@mkdir -p $(FUZZ_DIR); cache=$$($(GO) env GOCACHE)/fuzz; \
	for dir in $$(git grep -l '^func Fuzz' -- '*_test.go' | xargs -n1 dirname | sort -u); do \
		bin=$(FUZZ_DIR)/$$(echo "$$dir" | tr / _).test; pkg=$$($(GO) list "./$$dir"); \
		$(GO) test -c -fuzz . -o "$$bin" "./$$dir"; \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$dir"/*_test.go); do \
			echo "$$target ./$$dir for $(FUZZTIME)"; \
			out=$$(cd "$$dir" && "$$bin" -test.run '^$$' -test.fuzz "^$$target\$$" -test.fuzztime $(FUZZTIME) \
				-test.fuzzcachedir "$$cache/$$pkg" 2>&1) || \
				if [ -z "$$(echo "$$out" | sed -n '/^--- FAIL/,$$p' | grep -vx -e '--- FAIL: .*' -e '    context deadline exceeded' \
					-e 'FAIL')" ] && echo "$$out" | grep -q '^--- FAIL'; then \
					echo "$$target: fuzz coordinator's deadline race at the end of -fuzztime (go.dev/issue/75804), no finding"; \
				else echo "$$out"; exit 1; fi; \
			echo "$$out" | tail -n 2 | head -n 1; \
		done; \
		rm -f "$$bin"; \
	done

# The wasm tests build in the trimmed workspace, so they test the engine as the browser gets it. The emulated
# version is process-wide and node cannot start processes, so internal/versioncases runs once per version.
EMULATED_VERSIONS := 1.34 1.35 1.36 1.37
test-wasm: need-node wasm-workspace
	PATH="$$PATH:$(WASM_EXEC_DIR)" $(WASM_ENV) $(GO) test $(WASM_TEST_PKGS)
	@for v in $(EMULATED_VERSIONS); do \
		echo "internal/versioncases emulating $$v"; \
		CRDPLAY_EMULATED_VERSION=$$v PATH="$$PATH:$(WASM_EXEC_DIR)" $(WASM_ENV) $(GO) test -count=1 ./internal/versioncases || exit 1; \
	done

# The browser side: types (tsc: esbuild does not type-check), the bridge under node, and the playground and
# every oracle case in Debian's headless Chromium (web/test). Screenshots and logs land in test-results/.
test-browser: need-node need-chromium node_modules/.package-lock.json
	node_modules/.bin/tsc -p web/tsconfig.json
	$(GO) run ./tools/webbuild -test -o $(TEST_SITE_DIR)
	$(GO) build -o bin/crdplay-server ./server/cmd/crdplay-server
	CRDPLAY_WEB_DIR=$(TEST_SITE_DIR) CRDPLAY_SERVER=bin/crdplay-server node --test web/test/

## Soak: minutes of load, not part of `make test`

# How long tools/soak loads each storage, and how long its flood phase lasts on each (0s: none).
SOAK_DURATION ?= 2m
SOAK_FLOOD ?= 30s

soak:
	$(GO) build -o bin/crdplay-server ./server/cmd/crdplay-server
	$(GO) run ./tools/soak -server bin/crdplay-server -duration $(SOAK_DURATION) -flood $(SOAK_FLOOD)

## Benchmarks: reports, never pass/fail tests

# Length of each phase of the API throughput report (tools/loadbench: write and read, memory and etcd).
BENCH_DURATION ?= 5s

# Cold page loads per row of the load report (web/bench/load.mjs).
BENCH_LOAD_RUNS ?= 5

# The side-by-side report (tools/sidebyside): the real API server that crdplay is measured against, built by
# ../shared/oracle/build.sh when missing, and the repetitions of each corpus CRD (page, oracle, crdplay-server).
ORACLE ?= $(abspath $(CURDIR)/../shared/oracle/bin/oracle)
# Named without going through bin/, which is missing until the first build (a path through it does not resolve).
ORACLE_BUILD = $(abspath $(dir $(ORACLE))..)/build.sh
BENCH_REPS ?= 3

bench: wasm-workspace need-chromium node_modules/.package-lock.json
	$(WASM_ENV) $(GO) build -trimpath -ldflags='-s -w' -o build/bench/engine.wasm ./tools/enginewasm
	@PATH="$$PATH:$(WASM_EXEC_DIR)" node "$(WASM_EXEC_DIR)/wasm_exec_node.js" build/bench/engine.wasm /version \
		| sed 's/^/engine.wasm smoke run: GET /'
	$(GO) run ./tools/webbuild -release -o $(BENCH_SITE_DIR)
	$(GO) -C tools/wasmsize run . -cache $(CURDIR)/build/bench/cache \
		-max 'engine wasm=6MB' -max 'playground wasm=6MB' 'engine wasm=$(CURDIR)/build/bench/engine.wasm' \
		"playground wasm=$$(ls $(CURDIR)/$(BENCH_SITE_DIR)/assets/crdplay.*.wasm)"
	@echo
	$(GO) build -o bin/crdplay-server ./server/cmd/crdplay-server
	CRDPLAY_WEB_DIR=$(BENCH_SITE_DIR) CRDPLAY_SERVER=bin/crdplay-server node web/bench/load.mjs $(BENCH_LOAD_RUNS)
	@echo
	CRDPLAY_WEB_DIR=$(BENCH_SITE_DIR) CRDPLAY_SERVER=bin/crdplay-server node web/bench/corpus.mjs $(BENCH_REPS) build/bench/page-corpus.json
	@echo
	PATH="$$PATH:$(WASM_EXEC_DIR)" $(GO) run ./tools/wasmratio -wasm-workspace $(WASM_WS)/go.work -out build/bench
	@echo
	$(GO) run ./tools/loadbench -clients 8 -duration $(BENCH_DURATION)
	@echo
	@test -x $(ORACLE) || { test -x $(ORACLE_BUILD) || { \
		echo '$(ORACLE) not found, nor its build.sh: make bench ORACLE=/path/to/shared/oracle/bin/oracle'; exit 2; }; \
		echo '$(ORACLE) not found: building it (about 9 minutes on 2 cores)'; $(ORACLE_BUILD) --no-kubectl; }
	$(GO) run ./tools/sidebyside -oracle $(ORACLE) -server bin/crdplay-server -reps $(BENCH_REPS) \
		-page build/bench/page-corpus.json -edits build/bench/page-edits.json
	@echo
	$(GO) build -o bin/crdplay ./cmd/crdplay
	$(GO) -C tools/releases run . bench -oracle $(ORACLE) -crdplay $(CURDIR)/bin/crdplay -reps $(BENCH_REPS)

## Generated inputs and installed tools

# Idempotent: tools/wasmws returns at once when build/wasm matches go.mod's versions and its list of cuts.
wasm-workspace:
	@$(GO) run ./tools/wasmws -o $(WASM_WS)

# node runs Go's js/wasm test binaries. It is on the project's machines; elsewhere Debian's package will do.
need-node:
	@command -v node >/dev/null || { \
		echo 'node not found: installing Debian nodejs'; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs; }
	@node --version >/dev/null

# The browser tests drive Debian's Chromium (never a browser that npm would download).
need-chromium:
	@test -x /usr/bin/chromium || { \
		echo 'chromium not found: installing Debian chromium'; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# npm packages at package-lock.json's exact versions (CodeMirror for the bundle, playwright-core, typescript).
node_modules/.package-lock.json: package.json package-lock.json | need-node
	npm ci --no-audit --no-fund
	@touch $@

clean:
	rm -rf bin build test-results
