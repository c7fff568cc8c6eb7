# shogun — build, test, demo, bench. Every target works on a fresh Debian
# machine with Go 1.26; nothing else is needed.

GO       ?= go
BIN      := bin/shogun
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
PKGS     := ./...

.PHONY: all build test test-only lint demo bench cross clean

all: build

## build: the shogun binary in bin/
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/shogun

## lint: formatting, vet on Linux and Windows, and builds for Windows and macOS
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	GOOS=windows GOARCH=amd64 $(GO) vet $(PKGS)
	GOOS=windows GOARCH=amd64 $(GO) build $(PKGS)
	GOOS=windows GOARCH=arm64 $(GO) build $(PKGS)
	GOOS=darwin GOARCH=arm64 $(GO) build $(PKGS)

## test: lint, then the whole suite with the race detector
test: lint test-only

test-only:
	$(GO) test -race -count=1 -timeout 15m $(PKGS)

## demo: a team of simulated agents, start to clean stop
demo: build
	./$(BIN) demo

## bench: Go benchmarks and the measurement driver; writes docs/benchmarks.md
bench: build
	$(GO) run ./bench -shogun ./$(BIN) -out docs/benchmarks.md

## cross: release binaries for Windows, macOS and Linux in dist/
cross:
	GOOS=windows GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/shogun-windows-amd64.exe ./cmd/shogun
	GOOS=windows GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/shogun-windows-arm64.exe ./cmd/shogun
	GOOS=darwin GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/shogun-darwin-arm64 ./cmd/shogun
	GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/shogun-linux-amd64 ./cmd/shogun

clean:
	rm -rf bin dist
