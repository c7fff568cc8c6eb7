#!/bin/sh
# install.sh: installs shogun from a release, without Go, on Linux and macOS.
#
#   curl -fsSL https://raw.githubusercontent.com/shogun-dev/shogun/main/scripts/install.sh | sh
#   sh install.sh [-v VERSION] [-d DIR] [-b BASE_URL]
#
# Picks the archive for this machine (shogun-OS-ARCH.tar.gz), downloads it and
# SHA256SUMS, refuses it unless its SHA-256 is the one listed, and puts
# `shogun` in DIR: $SHOGUN_INSTALL_DIR, else /usr/local/bin as root, else
# ~/.local/bin. Says where, and how to put DIR on PATH when it is not.
#
# BASE_URL ($SHOGUN_INSTALL_BASE_URL) is where the archives are: the GitHub
# release by default (the newest, or VERSION's), else an http(s):// or
# file:// URL or a local folder, e.g. the dist/ of `make release`.
set -eu

repo=shogun-dev/shogun
usage="usage: install.sh [-v VERSION] [-d DIR] [-b BASE_URL]
  -v VERSION   a release tag such as v1.2.0 (default: the newest release)
  -d DIR       folder to install shogun into (default: \$SHOGUN_INSTALL_DIR,
               else /usr/local/bin as root, else ~/.local/bin)
  -b BASE_URL  where the archives and SHA256SUMS are: an http(s):// or file://
               URL or a folder (default: \$SHOGUN_INSTALL_BASE_URL, else the
               GitHub release)"

die() {
	echo "install.sh: $*" >&2
	exit 1
}

version=${SHOGUN_VERSION:-}
dir=${SHOGUN_INSTALL_DIR:-}
base=${SHOGUN_INSTALL_BASE_URL:-}
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		echo "$usage"
		exit 0
		;;
	-v | --version | -d | --dir | -b | --base-url)
		[ $# -ge 2 ] || {
			echo "install.sh: $1 needs a value" >&2
			echo "$usage" >&2
			exit 2
		}
		case $1 in
		-v | --version) version=$2 ;;
		-d | --dir) dir=$2 ;;
		*) base=$2 ;;
		esac
		shift 2
		;;
	*)
		echo "install.sh: unknown argument $1" >&2
		echo "$usage" >&2
		exit 2
		;;
	esac
done

case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
MINGW* | MSYS* | CYGWIN*) die "this is Windows: use scripts/install.ps1 in PowerShell" ;;
*) die "no release for $(uname -s): build from source with Go (see README)" ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) die "no release for the $(uname -m) processor: build from source with Go (see README)" ;;
esac
# A shell under Rosetta reports x86_64 on an Apple processor: take the native build.
if [ "$os" = darwin ] && [ "$arch" = amd64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
	arch=arm64
fi
archive=shogun-$os-$arch.tar.gz

if [ -z "$base" ]; then
	if [ -n "$version" ]; then
		base=https://github.com/$repo/releases/download/$version
	else
		base=https://github.com/$repo/releases/latest/download
	fi
fi
base=${base%/}

if [ -z "$dir" ]; then
	if [ "$(id -u)" = 0 ]; then
		dir=/usr/local/bin
	else
		[ -n "${HOME:-}" ] || die "HOME is not set: name the folder with -d DIR"
		dir=$HOME/.local/bin
	fi
fi

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t shogun-install)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# fetch NAME: copies $base/NAME to $tmp/NAME.
fetch() {
	case $base in
	http://* | https://*)
		if command -v curl >/dev/null 2>&1; then
			curl -fsSL --proto '=http,https' -o "$tmp/$1" "$base/$1" || die "download $base/$1 failed"
		elif command -v wget >/dev/null 2>&1; then
			wget -q -O "$tmp/$1" "$base/$1" || die "download $base/$1 failed"
		else
			die "neither curl nor wget is installed: install one, or download $base/$1 and run install.sh -b FOLDER"
		fi
		;;
	file://*)
		cp "${base#file://}/$1" "$tmp/$1" 2>/dev/null || die "${base#file://}/$1: no such file"
		;;
	*://*)
		die "$base: only http://, https:// and file:// URLs, or a folder"
		;;
	*)
		cp "$base/$1" "$tmp/$1" 2>/dev/null || die "$base/$1: no such file"
		;;
	esac
}

echo "downloading $base/$archive"
fetch "$archive"
fetch SHA256SUMS

want=$(awk -v name="$archive" '($2 == name || $2 == "*" name) { print $1; exit }' "$tmp/SHA256SUMS")
[ -n "$want" ] || die "SHA256SUMS at $base lists no $archive"
if command -v sha256sum >/dev/null 2>&1; then
	got=$(sha256sum "$tmp/$archive" | awk '{ print $1 }')
elif command -v shasum >/dev/null 2>&1; then
	got=$(shasum -a 256 "$tmp/$archive" | awk '{ print $1 }')
else
	die "neither sha256sum nor shasum is installed: cannot verify the download"
fi
want=$(echo "$want" | tr 'A-F' 'a-f')
[ "$got" = "$want" ] || die "$archive: SHA-256 is $got, SHA256SUMS says $want: not installed (a broken or tampered download)"

mkdir "$tmp/x"
tar -xzf "$tmp/$archive" -C "$tmp/x" shogun || die "$archive: cannot unpack shogun"
mkdir -p "$dir" || die "cannot create $dir: name another folder with -d DIR"
# Copy next to the target, then rename: a running shogun keeps its old file,
# and a failed copy leaves no half-written program behind.
cp "$tmp/x/shogun" "$dir/.shogun.new" 2>/dev/null || die "cannot write to $dir: run as root or name another folder with -d DIR"
chmod 755 "$dir/.shogun.new"
mv -f "$dir/.shogun.new" "$dir/shogun" || die "cannot replace $dir/shogun"

installed=$("$dir/shogun" --version 2>/dev/null | head -n 1) || installed="shogun"
echo "installed $dir/shogun ($installed)"
case ":${PATH:-}:" in
*":$dir:"*) ;;
*)
	echo "$dir is not on PATH, so a shell will not find shogun: add it, e.g."
	# shellcheck disable=SC2016 # $PATH is for the profile, not expanded here
	echo "  echo 'export PATH=\"$dir:\$PATH\"' >> ~/.profile   # then open a new shell"
	;;
esac
