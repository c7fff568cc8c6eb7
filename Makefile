# shogun — build, test, demo, bench. Every target works on a fresh Debian
# machine with Go 1.26; `make test` also needs Node.js and npm for the
# PowerShell syntax check, and Chromium (apt-get install chromium) for the web
# console's browser tests, which skip without it (.ci/run installs them when
# missing).

GO       ?= go
BIN      := bin/shogun
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
# The build date is the commit's: the same commit builds the same archives.
BUILD_DATE ?= $(shell git log -1 --format=%cI 2>/dev/null)
# shogun version prints all three (cmd/shogun/usage.go; what is empty comes
# from the vcs information go build records).
LDFLAGS  := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.buildDate=$(BUILD_DATE)
DIST     ?= dist
PKGS     := ./...

.PHONY: all build install test test-only lint demo bench soak cross release clean fixtures test-real test-e2e screenshots console-vendor

all: build

## build: the shogun binary in bin/
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/shogun

## install: the shogun binary where `go install` puts it: $$GOBIN, else the bin
## folder of the first GOPATH entry (~/go/bin by default). Says which, and
## how to put it on PATH when it is not.
install:
	$(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/shogun
	@dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir=$$($(GO) env GOPATH | cut -d: -f1)/bin; \
	echo "installed $$dir/shogun"; \
	case ":$$PATH:" in *":$$dir:"*) ;; *) \
		echo "$$dir is not on PATH, so a shell will not find shogun: add it, e.g."; \
		echo "  echo 'export PATH=\"$$dir:\$$PATH\"' >> ~/.profile   # then open a new shell";; esac

## lint: formatting, vet on Linux and Windows, and builds for Windows and macOS
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	GOOS=windows GOARCH=amd64 $(GO) vet $(PKGS)
	GOOS=windows GOARCH=amd64 $(GO) build $(PKGS)
	GOOS=windows GOARCH=arm64 $(GO) build $(PKGS)
	GOOS=darwin GOARCH=arm64 $(GO) build $(PKGS)

## test: lint, the script checks, then the whole suite with the race detector.
## Downloads the modules of go.mod (module proxy, once) and tools/psparse's npm
## packages (once). tools/testreport prints a line per package as it finishes,
## which packages are still running every minute, failed tests' output, and at
## the end every skipped test's reason (e.g. the browser tests without Chromium).
test: lint check-scripts test-only

test-only:
	GO='$(GO)' $(GO) run ./tools/testreport -race -count=1 -timeout 15m $(PKGS)

## test-real: the supervisor with the real CLIs (Claude Code, Codex, Gemini CLI,
## Copilot CLI at pinned versions) as roles, offline. Installs them with npm into
## $$SHOGUN_REALCLI_CACHE (default ~/.cache/shogun-realcli) unless there; skips
## when Node.js or npm is missing. See tools/realcli.
test-real:
	$(GO) test -tags realcli -count=1 -timeout 9m -v -run TestRealCLIsUnderShogun ./tools/realcli

## test-e2e: the real CLIs do whole tasks under shogun start, against the scripted
## model of tools/fakemodel on 127.0.0.1 (every report route, a task handed on through
## MCP, a permission prompt answered through attach, Claude Code's approvals hook
## allowing, denying and asking, screen prompts answered with shogun answer, Codex and
## Gemini CLI refusing the policy's deny rules, their hooks allowing, denying and asking, a
## sandboxed Claude Code, Codex, Gemini CLI and Copilot CLI refused by the kernel, a hostile
## Claude Code and Codex refused
## every route past their supervisor, a usage limit that lifts by itself, a limited Codex
## role handing its tasks to its Claude fallback, shogun
## usage equal to what the model served a Claude, a Codex and a Gemini role, a Claude role
## that moves to its second account at the first one's limit, a Codex role that moves
## before its next task at a share of its usage window, a role that
## sleeps when idle and wakes with its own conversation (two roles of a CLI in one folder), the four CLIs
## quitting on their stop keys right after a between_tasks /clear, README's tour, and the team as users
## have it: three CLIs and a worktree role at once in a git repository with shogun init's
## policy, on a sloppy model). Installs the CLIs like test-real; skips when Node.js or npm
## is missing.
test-e2e:
	$(GO) test -tags realcli -count=1 -timeout 25m -v -run 'TestTeamAsUsersHaveIt|TestWholeTasks|TestCodexTasksInAGit|TestTaskHandedOn|TestPermissionAnswered|TestApprovals|TestScreenQuestion|TestUsageLimit|TestRealCLIsWake|TestTourAsWritten|RefusesThePolicysDenyRules|TestSandboxedClaudeIsRefusedByTheKernel|TestSandboxedCLIsDoWholeTasks|TestRealCLIsQuitOnTheirStopKeys|TestUsageEqualsWhatTheModelServed|TestHostileAgent|TestFallbackFinishes|TestClaudeMovesToItsSecondAccount|TestCodexSwitchesAccountAtTheThreshold|TestWokenRoleResumesItsOwnConversation|TestWakeFollowsTheSessionAfterBetweenTasks' ./tools/realcli

## fixtures: install the pinned real CLIs and record their screens, raw, into
## supervisor/testdata/screens (what supervisor/screens_test.go replays)
fixtures:
	$(GO) run ./tools/realcli fixtures

## demo: a team of simulated agents, start to clean stop
demo: build
	./$(BIN) demo

## bench: Go benchmarks and the measurement driver; writes docs/benchmarks.md
bench: build
	$(GO) run ./bench -shogun ./$(BIN) -out docs/benchmarks.md

## soak: only the soak of make bench, longer: a misbehaving agent-sim team under a
## command every 2-5 s, kill -9 of the supervisor every 5 minutes, 30 minutes in all
## (SOAK_FOR=2h SOAK_KILL_EVERY=10m make soak); its section of docs/benchmarks.md is replaced, the rest kept.
## Exits non-zero when a command was lost or doubled.
SOAK_FOR ?= 30m
SOAK_KILL_EVERY ?= 5m
soak: build
	$(GO) run ./bench -shogun ./$(BIN) -out docs/benchmarks.md -only soak -soak-for $(SOAK_FOR) -soak-kill-every $(SOAK_KILL_EVERY) -soak-sample 30s

## screenshots: PNGs of every page of the web console in docs/console/, taken by
## headless Chromium from a running demo team (needs apt-get install chromium)
screenshots:
	SHOGUN_SCREENSHOTS=$(CURDIR)/docs/console $(GO) test -count=1 -run TestScreenshots -v ./console

## console-vendor: the browser terminal (xterm.js, pinned in console/web/package-lock.json)
## copied into console/assets/vendor; the copies are committed
console-vendor:
	$(GO) generate ./console

## cross: release binaries for Windows, macOS and Linux in dist/
cross:
	GOOS=windows GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/shogun-windows-amd64.exe ./cmd/shogun
	GOOS=windows GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/shogun-windows-arm64.exe ./cmd/shogun
	GOOS=darwin GOARCH=arm64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/shogun-darwin-arm64 ./cmd/shogun
	GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o dist/shogun-linux-amd64 ./cmd/shogun

## release: archives for Windows (zip), Linux and macOS (tar.gz) on amd64 and arm64
## in $$(DIST) (default dist/), the version, commit and date stamped in, with
## SHA256SUMS and the Scoop and winget manifests (tools/release). TARGETS=linux/amd64
## builds only those.
release:
	$(GO) run ./tools/release -go '$(GO)' -version '$(VERSION)' -commit '$(COMMIT)' -date '$(BUILD_DATE)' -out '$(DIST)' $(if $(TARGETS),-targets '$(TARGETS)')

clean:
	rm -rf bin dist

## check-scripts: scripts/*.ps1 and the workflow's .github/scripts/*.ps1 parse (tree-sitter PowerShell grammar
## from npm, run by Node.js), scripts/*.sh pass sh -n (and shellcheck if installed)
.PHONY: check-scripts
check-scripts:
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || \
		{ echo "check-scripts: needs Node.js 18+ and npm (Debian: apt-get install nodejs npm)" >&2; exit 1; }
	@if [ ! -f tools/psparse/node_modules/.package-lock.json ] || \
		[ tools/psparse/package-lock.json -nt tools/psparse/node_modules/.package-lock.json ]; then \
		echo "cd tools/psparse && npm ci --no-audit --no-fund --ignore-scripts"; \
		cd tools/psparse && npm ci --no-audit --no-fund --ignore-scripts; fi
	node tools/psparse/check.js scripts/*.ps1 .github/scripts/*.ps1
	for f in scripts/*.sh; do sh -n $$f || exit 1; done
	@if command -v shellcheck >/dev/null 2>&1; then echo "shellcheck scripts/*.sh"; shellcheck scripts/*.sh; \
	else echo "shellcheck not installed: skipped (sh -n passed)"; fi

## test-windows: the Windows build's tests under Wine 8 (Debian's wine64; installed
## with mingw when missing, as root), in a Windows 10 prefix kept in ~/.cache/shogun-wine.
## Prints package → ran/passed/failed/skipped, and why tests were skipped.
.PHONY: test-windows
test-windows:
	$(GO) run ./tools/wine/run
