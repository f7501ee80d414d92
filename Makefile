# locktorture — the two commands of the README are `make torture` and `make test`.

GO      ?= go
BIN     := bin/torture
# The race detector needs cgo.
export CGO_ENABLED := 1

.PHONY: all build test lint torture clean

all: lint test

build:
	$(GO) build -o $(BIN) ./cmd/torture

## test: unit and integration tests against real redis-server, race detector on.
test:
	$(GO) test -race -count=1 -timeout 9m ./...

## lint: gofmt and go vet must be clean.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## torture: the release gate — a fixed set of runs, each with its expected verdict.
torture: build
	scripts/torture-gate.sh $(BIN)

clean:
	rm -rf bin results/runs
