// Command release builds shogun's release: one archive per platform (a zip
// for Windows, a tar.gz otherwise) holding the binary with its version,
// commit and build date stamped in, a SHA256SUMS file over the archives, and
// the Scoop and winget manifests that point at them. `make release` runs it;
// .github/workflows/release.yml runs it for a tag and uploads dist/.
//
// usage:
//
//	go run ./tools/release [-version V] [-commit C] [-date RFC3339] [-out dist] [-targets os/arch,...]
//	go run ./tools/release manifests [-version V] [-sums dist/SHA256SUMS] [-out dist]
//
// The first form builds the archives, writes SHA256SUMS, then the manifests.
// The second writes only the manifests, from an existing SHA256SUMS (the
// archives need not be there): what a packager runs for a published release.
//
// Archive names carry no version (shogun-linux-amd64.tar.gz), so that
// https://github.com/OWNER/REPO/releases/latest/download/NAME always names
// the newest one: scripts/install.sh and scripts/install.ps1 rely on it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// defaultTargets are the platforms a release is built for.
var defaultTargets = []string{
	"linux/amd64", "linux/arm64",
	"darwin/amd64", "darwin/arm64",
	"windows/amd64", "windows/arm64",
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "manifests" {
		return runManifests(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", "dev", "version stamped into the binary (main.version) and named in the manifests")
	commit := fs.String("commit", "", "commit stamped into the binary (main.commit)")
	date := fs.String("date", "", "build date, RFC 3339, stamped into the binary (main.buildDate) and used as the archive entries' time (default: now)")
	out := fs.String("out", "dist", "folder the archives, SHA256SUMS and manifests are written to")
	targets := fs.String("targets", strings.Join(defaultTargets, ","), "comma-separated GOOS/GOARCH pairs to build")
	goCmd := fs.String("go", "go", "the go command")
	repo := fs.String("repo", defaultRepo, "GitHub OWNER/NAME the manifests' download links point at")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	when := time.Now().UTC().Truncate(time.Second)
	if *date != "" {
		t, err := time.Parse(time.RFC3339, *date)
		if err != nil {
			return fmt.Errorf("-date: %w", err)
		}
		when = t.UTC()
	}
	b := builder{
		goCmd:   *goCmd,
		version: *version,
		commit:  *commit,
		date:    when,
		out:     *out,
		log:     stdout,
	}
	var list []target
	for _, s := range strings.Split(*targets, ",") {
		t, err := parseTarget(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		list = append(list, t)
	}
	sums, err := b.buildAll(list)
	if err != nil {
		return err
	}
	m := manifestSet{version: *version, repo: *repo, sums: sums}
	if !m.hasWindows() {
		fmt.Fprintln(stdout, "no Windows archive built: Scoop and winget manifests not written")
		return nil
	}
	return m.write(*out, stdout)
}

func runManifests(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("release manifests", flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", "", "the release's version, e.g. v1.2.0 (required)")
	sumsPath := fs.String("sums", "dist/SHA256SUMS", "the release's SHA256SUMS")
	out := fs.String("out", "dist", "folder the scoop/ and winget/ manifests are written to")
	repo := fs.String("repo", defaultRepo, "GitHub OWNER/NAME the download links point at")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *version == "" || fs.NArg() != 0 {
		return fmt.Errorf("usage: release manifests -version V [-sums FILE] [-out DIR]")
	}
	data, err := os.ReadFile(*sumsPath)
	if err != nil {
		return fmt.Errorf("read checksums: %w", err)
	}
	sums, err := parseSums(string(data))
	if err != nil {
		return fmt.Errorf("%s: %w", *sumsPath, err)
	}
	m := manifestSet{version: *version, repo: *repo, sums: sums}
	if !m.hasWindows() {
		return fmt.Errorf("%s names no Windows archive (%s or %s)", *sumsPath, archiveName(target{"windows", "amd64"}), archiveName(target{"windows", "arm64"}))
	}
	return m.write(*out, stdout)
}
