#!/bin/sh
# start.sh: build bin/shogun when needed, then run `shogun start`.
#
# The Unix counterpart of scripts/start.ps1. Run `scripts/start.sh -h` for
# the options. POSIX sh only: works with dash, bash, zsh (sh mode) and the
# BSD/macOS sh.
set -eu

prog=start.sh

usage() {
	cat <<'USAGE'
usage: scripts/start.sh [-w DIR] [-r ROLE,ROLE...] [-n] [-l LEVEL] [-B] [-h]

Builds bin/shogun (go build -o bin/shogun ./cmd/shogun) when it is missing,
older than any *.go file, go.mod, go.sum or embedded default (config/defaults/,
roles/), or when -B is given; then runs
  bin/shogun --log-level LEVEL start --workspace DIR [--roles ROLES] [--dry-run]
in place of this script, so its exit code is shogun's.

  -w DIR      workspace folder (default: the current folder)
  -r ROLES    start only these role ids, comma-separated
  -n          dry run: validate the configuration and print what would run
  -l LEVEL    log level on stderr: debug, info, warn, error (default: info)
  -B          rebuild bin/shogun even if it looks up to date
  -h          print this help and exit

Exit codes: 2 for a bad option; 1 when the build fails or Go is missing;
otherwise the exit code of shogun start.
USAGE
}

die() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 1
}

workspace=.
roles=
dryrun=
loglevel=info
rebuild=

while getopts 'w:r:nl:Bh' opt; do
	case $opt in
	w) workspace=$OPTARG ;;
	r) roles=$OPTARG ;;
	n) dryrun=1 ;;
	l) loglevel=$OPTARG ;;
	B) rebuild=1 ;;
	h)
		usage
		exit 0
		;;
	*)
		usage >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
	printf '%s: unexpected argument: %s\n' "$prog" "$1" >&2
	usage >&2
	exit 2
fi

# The repository root is the folder above this script's.
script_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd -P)
root=$(dirname -- "$script_dir")
if [ ! -f "$root/go.mod" ] || [ ! -d "$root/cmd/shogun" ]; then
	die "cannot find the shogun sources (go.mod, cmd/shogun/) in $root"
fi

# An absolute workspace, so that it means the same after the build's cd.
if [ ! -d "$workspace" ]; then
	die "workspace $workspace: no such folder"
fi
workspace=$(CDPATH='' cd -- "$workspace" && pwd)

bin=$root/bin/shogun

# stale prints the first source file newer than bin/shogun, if any.
stale() {
	(
		cd "$root"
		find . \( -name .git -o -name node_modules -o -path ./bin -o -path ./dist \
			-o -path ./runtime -o -path ./data -o -path ./tools \) -prune \
			-o -type f \( -name '*.go' -o -path ./go.mod -o -path ./go.sum \
			-o -path './config/defaults/*' -o -path './roles/*' \) \
			-newer bin/shogun -print | head -n 1
	)
}

reason=
if [ -n "$rebuild" ]; then
	reason="-B given"
elif [ ! -x "$bin" ]; then
	reason="bin/shogun is missing"
else
	newer=$(stale)
	if [ -n "$newer" ]; then
		reason="${newer#./} is newer than bin/shogun"
	fi
fi

if [ -n "$reason" ]; then
	if ! command -v go >/dev/null 2>&1; then
		die "bin/shogun needs building ($reason) but 'go' is not on PATH; install Go 1.26 (see go.mod) and add its bin folder to PATH"
	fi
	printf '%s: building bin/shogun (%s)\n' "$prog" "$reason" >&2
	# Build next to the target and rename it into place: a running shogun
	# keeps its old file, and a failed build leaves the old binary alone.
	tmp=$root/bin/.shogun.$$.tmp
	mkdir -p "$root/bin"
	if ! (cd "$root" && go build -o "$tmp" ./cmd/shogun); then
		rm -f "$tmp"
		die "go build failed"
	fi
	mv -f "$tmp" "$bin"
fi

set -- "$bin" --log-level "$loglevel" start --workspace "$workspace"
if [ -n "$roles" ]; then
	set -- "$@" --roles "$roles"
fi
if [ -n "$dryrun" ]; then
	set -- "$@" --dry-run
fi
exec "$@"
