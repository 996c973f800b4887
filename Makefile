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

# The workspace in which the engine is built for js/wasm: go.work plus a copy of k8s.io/apiserver whose
# pkg/util/webhook keeps only validation.go (see tools/wasmws and docs/architecture.md). Only commands that set
# GOWORK to it use it; plain `go build` and `go test` never do.
WASM_WS := $(CURDIR)/build/wasm
WASM_ENV := GOWORK=$(WASM_WS)/go.work GOOS=js GOARCH=wasm
# go test for js/wasm runs the test binary with go_js_wasm_exec (which calls node) found on PATH.
WASM_EXEC_DIR = $(shell $(GO) env GOROOT)/lib/wasm
# Packages whose tests also run under node: the engine and everything internal it is built from.
WASM_TEST_PKGS := ./engine/... $(if $(wildcard internal),./internal/...)

# `make test` is every test target. The browser tests will add test-browser here (it will depend on
# node_modules and chromium below).
TEST_TARGETS := test-lint test-go test-wasm

.PHONY: help run build test $(TEST_TARGETS) bench wasm-workspace need-node clean

help:
	@echo 'make run    build, then serve on http://$(ADDR) with in-memory storage (RUN_FLAGS=--log-requests)'
	@echo 'make test   every test: vet and gofmt, Go natively, Go under GOOS=js GOARCH=wasm in node'
	@echo 'make bench  reports: engine size for the browser, API throughput on memory and etcd'
	@echo 'make clean  remove bin/ and build/'

## Running

# build makes everything `make run` serves. Today that is the server; the web bundle and the wasm it loads
# will be added as prerequisites here.
build:
	$(GO) build -o bin/crdplay-server ./server/cmd/crdplay-server

# exec, so that the server itself receives Ctrl-C and SIGTERM and shuts down gracefully.
run: build
	exec ./bin/crdplay-server --addr $(ADDR) --storage memory $(RUN_FLAGS)

## Testing

test: $(TEST_TARGETS)

test-lint:
	$(GO) vet ./...
	$(GO) -C tools/wasmsize vet ./...
	@unformatted=$$(gofmt -l $$(find . \( -path ./build -o -path ./bin -o -path ./.git -o -name node_modules \) -prune \
		-o -name '*.go' -print)); \
	if [ -n "$$unformatted" ]; then echo "gofmt -w needed for:"; echo "$$unformatted"; exit 1; fi

test-go:
	$(GO) test ./...

# The wasm tests build in the trimmed workspace, so they test the engine as the browser gets it.
test-wasm: need-node wasm-workspace
	PATH="$$PATH:$(WASM_EXEC_DIR)" $(WASM_ENV) $(GO) test $(WASM_TEST_PKGS)

## Benchmarks: reports, never pass/fail tests

# Length of each phase of the API throughput report (tools/loadbench: write and read, memory and etcd).
BENCH_DURATION ?= 5s

bench: wasm-workspace
	$(WASM_ENV) $(GO) build -trimpath -ldflags='-s -w' -o build/bench/engine.wasm ./tools/enginewasm
	@PATH="$$PATH:$(WASM_EXEC_DIR)" node "$(WASM_EXEC_DIR)/wasm_exec_node.js" build/bench/engine.wasm /version \
		| sed 's/^/engine.wasm smoke run: GET /'
	$(GO) -C tools/wasmsize run . -cache $(CURDIR)/build/bench/cache \
		-max 'engine wasm=6MB' 'engine wasm=$(CURDIR)/build/bench/engine.wasm'
	@echo
	$(GO) run ./tools/loadbench -clients 8 -duration $(BENCH_DURATION)

## Generated inputs and installed tools

# Idempotent: tools/wasmws returns at once when build/wasm matches go.mod's k8s.io/apiserver.
wasm-workspace:
	@$(GO) run ./tools/wasmws -o $(WASM_WS)

# node runs Go's js/wasm test binaries. It is on the project's machines; elsewhere Debian's package will do.
# Chromium and `npm ci` (node_modules from package-lock.json) will get targets like this one.
need-node:
	@command -v node >/dev/null || { \
		echo 'node not found: installing Debian nodejs'; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs; }
	@node --version >/dev/null

clean:
	rm -rf bin build
