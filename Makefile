# locktorture — the two commands of the README are `make torture` and `make test`.

GO      ?= go
BIN     := bin/torture
# The race detector needs cgo.
export CGO_ENABLED := 1

.PHONY: all deps build bugs bugs-deps test kill lint torture matrix redis-image toxiproxy-image compose-up compose-down clean

all: lint test

## deps: install redis-server, redis-sentinel, redis-tools, gcc, python3-redis and
## chromium when missing (Debian/Ubuntu, apt-get; sudo only when not root). test and
## torture run it first, so each is the whole set-up of its job.
deps:
	@scripts/deps

## build: bin/torture, stamped with the commit it is built from (vcs.revision, which
## the summaries record and matrix merge compares; the environment may set
## GOFLAGS=-buildvcs=false, so build asks for the stamp). Go recognises a repository by
## its .git folder only: in a linked git worktree (.git is a file) it stamps nothing or,
## in a worktree nested inside another checkout, that checkout's commit, a wrong one
## (https://go.dev/issue/58218). There build stamps nothing, says so, and the binary
## records its commit as unknown.
GIT_DIR_ABS    := $(shell git rev-parse --absolute-git-dir 2>/dev/null)
GIT_COMMON_DIR := $(shell git rev-parse --path-format=absolute --git-common-dir 2>/dev/null)
BUILDVCS       := $(if $(filter-out $(GIT_COMMON_DIR),$(GIT_DIR_ABS)),false,true)

build:
	@[ "$(BUILDVCS)" = true ] || echo "build: a linked git worktree: Go cannot stamp its commit here, so $(BIN) records the commit as unknown (build in the main checkout to record it)" >&2
	$(GO) build -buildvcs=$(BUILDVCS) -o $(BIN) ./cmd/torture

## redis-image: the Docker image of --backend docker, built FROM scratch from this
## host's redis-server, its libraries and the clock shim (no registry needed).
REDIS_IMAGE ?= locktorture/redis:local
redis-image: deps
	$(GO) run ./cmd/redis-image -tag $(REDIS_IMAGE)

## toxiproxy-image: the toxiproxy server of the compose cluster, built from the version
## in go.mod (static, FROM scratch; nothing is pulled).
TOXIPROXY_IMAGE ?= locktorture/toxiproxy:local
toxiproxy-image:
	$(GO) run ./cmd/compose-cluster toxiproxy-image -tag $(TOXIPROXY_IMAGE)

## compose-up: five Redis nodes and a toxiproxy server, each a host of its own on a
## private network (deploy/compose/docker-compose.yml), for --backend external;
## compose-down removes them. LOCKTORTURE_NET moves the /24 (default 172.30.117).
compose-up: redis-image toxiproxy-image
	$(GO) run ./cmd/compose-cluster up

compose-down:
	$(GO) run ./cmd/compose-cluster down

## bugs: the lock bugs that shipped (bugs/, docs/bugs.md): each module built twice
## into bin/bugs/, NAME with the library version that had the bug (go.mod) and
## NAME-fixed with the version that fixed it (go.fixed.mod). bugs-deps downloads
## both versions of every module into the module cache (the only step that needs the
## network; test runs it first, and bugs/'s test then builds offline).
BUG_MODULES := $(patsubst %/go.fixed.mod,%,$(wildcard bugs/*/go.fixed.mod))
## A bug of a library in another language is kept as source (bugs/NAME/third_party, the
## version that had it) with the upstream change that fixed it (fix.patch): NAME runs
## its client (bugs/NAME/client.py, through bugs/python.sh) on a copy of lib,
## NAME-fixed on a copy with the patch applied.
PATCH_BUGS := $(patsubst %/fix.patch,%,$(wildcard bugs/*/fix.patch))

bugs-deps:
	@for d in $(BUG_MODULES); do (cd $$d && $(GO) mod download && $(GO) mod download -modfile=go.fixed.mod) || exit 1; done

bugs: bugs-deps
	@mkdir -p bin/bugs
	@for d in $(BUG_MODULES); do n=$$(basename $$d); \
	  (cd $$d && $(GO) build -o ../../bin/bugs/$$n . && $(GO) build -modfile=go.fixed.mod -o ../../bin/bugs/$$n-fixed .) || exit 1; \
	  echo "bin/bugs/$$n bin/bugs/$$n-fixed"; done
	@for d in $(PATCH_BUGS); do n=$$(basename $$d); \
	  rm -rf bin/bugs/$$n.lib bin/bugs/$$n-fixed.lib && cp -R $$d/third_party bin/bugs/$$n.lib && cp -R $$d/third_party bin/bugs/$$n-fixed.lib && \
	  patch -s -p1 -d bin/bugs/$$n-fixed.lib < $$d/fix.patch || exit 1; \
	  for v in $$n $$n-fixed; do \
	    printf '#!/bin/sh\nexec "$$(dirname "$$0")/../../bugs/python.sh" "$$(dirname "$$0")/../../%s/client.py" "$$(dirname "$$0")/%s.lib"\n' $$d $$v > bin/bugs/$$v && chmod +x bin/bugs/$$v || exit 1; \
	  done; echo "bin/bugs/$$n bin/bugs/$$n-fixed"; done

## test: unit and integration tests against real redis-server, race detector on; then
## the example of the release gate (examples/gate, a module of its own, which requires
## the published module and builds here against the checkout through examples/go.work;
## gate's TestExampleOutsideRepository also tests a copy of it outside the repository).
test: deps bugs-deps
	$(GO) test -race -count=1 -timeout 9m ./...
	cd examples/gate && $(GO) test -race -count=1 -timeout 3m ./...

## kill: the SIGKILL script in full (cmd/torture TestSIGKILLLeavesNothing): torture run
## killed with SIGKILL 20 times for each backend and topology (processes, RedLock,
## Redis Cluster, failover, power loss on FUSE disks, client processes, Docker when an
## engine answers), at random moments while it starts, runs and heals; after each, no
## process is left, what a dead run cannot remove (a FUSE mount, a container) the next
## start removes and names, and every history checks. make test kills each 3 times.
## KILLS=n changes the count; the test logs the seed that repeats the moments.
KILLS ?= 20
kill: deps
	LOCKTORTURE_KILLS=$(KILLS) $(GO) test -count=1 -timeout 60m -run 'TestSIGKILLLeavesNothing' -v ./cmd/torture

## lint: gofmt and go vet must be clean, and actionlint on the workflows when it is
## installed (go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd examples/gate && $(GO) vet ./...
	@for d in $(BUG_MODULES); do (cd $$d && $(GO) vet . && $(GO) vet -modfile=go.fixed.mod .) || exit 1; done
	@if command -v actionlint >/dev/null; then actionlint; else echo "lint: actionlint not installed: .github/workflows not checked"; fi

## torture: the release gate — the quick matrix, its runs side by side as the machine holds
## them (matrix --jobs 0); fails when a cell contradicts the literature.
torture: deps build
	$(BIN) matrix --quick --seeds 1 --duration 8s

## matrix: the full comparison matrix that results/ publishes (scripts/matrix): every
## cell on seeds 1,2,3, 8 s a run (about 45 minutes on 2 cores; MATRIX_JOBS=n runs n
## shards side by side on a bigger machine), its bundle in results/<date>/ (summaries,
## index.html, archives.json: the sha256 of runs.tar.xz, every run's report.html,
## results.json and schedule.json, which is never committed: a release asset, fetched
## back by torture matrix fetch) and results/README.md regenerated from it; exits as
## the matrix did.
matrix: deps build
	@BIN=$(BIN) scripts/matrix

clean:
	rm -rf bin results/runs results/matrix

## bench: every part of BENCHMARKS.md and BENCHMARKS.json, written by cmd/bench
## (its doc.go lists the parts). About 20 to 30 minutes on the shared 2-core
## machine: the parts of the committed BENCHMARKS.md took 21.4 minutes in all
## (load averages 8 to 24), a first pass of all eleven one after the other 27.5
## (load averages 13 to 56); the longest part is the gate (6.5 minutes), then
## targeted, adapter and detect (2.5 to 3 each). BENCHMARKS.md gives each part's.
## `bin/bench -only PART[,PART]` measures those parts again and rewrites only
## their sections.
.PHONY: bench
bench:
	$(GO) build -o bin/bench ./cmd/bench
	bin/bench -out BENCHMARKS.md
