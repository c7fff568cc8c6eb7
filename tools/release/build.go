package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// target is one platform of a release.
type target struct{ goos, goarch string }

func parseTarget(s string) (target, error) {
	goos, goarch, ok := strings.Cut(s, "/")
	if !ok || goos == "" || goarch == "" {
		return target{}, fmt.Errorf("target %q: want GOOS/GOARCH, e.g. linux/amd64", s)
	}
	return target{goos, goarch}, nil
}

// binaryName is the program's file name inside the archive.
func binaryName(t target) string {
	if t.goos == "windows" {
		return "shogun.exe"
	}
	return "shogun"
}

// archiveName is the archive's file name: the install scripts build the same
// name from the machine's OS and architecture.
func archiveName(t target) string {
	if t.goos == "windows" {
		return "shogun-" + t.goos + "-" + t.goarch + ".zip"
	}
	return "shogun-" + t.goos + "-" + t.goarch + ".tar.gz"
}

// builder builds the binaries and packs them.
type builder struct {
	goCmd   string
	version string
	commit  string
	date    time.Time
	out     string
	log     io.Writer
}

// ldflags stamps the version, commit and date into package main of
// cmd/shogun (the linker ignores -X for a variable that does not exist).
func (b builder) ldflags() string {
	return fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s -X main.buildDate=%s",
		b.version, b.commit, b.date.Format(time.RFC3339))
}

// buildAll builds every target into b.out, replaces SHA256SUMS there, and
// returns the checksums by archive name.
func (b builder) buildAll(targets []target) (map[string]string, error) {
	if err := os.MkdirAll(b.out, 0o755); err != nil {
		return nil, fmt.Errorf("create output folder: %w", err)
	}
	work, err := os.MkdirTemp("", "shogun-release-")
	if err != nil {
		return nil, fmt.Errorf("create build folder: %w", err)
	}
	defer os.RemoveAll(work)

	sums := map[string]string{}
	for _, t := range targets {
		start := time.Now()
		bin := filepath.Join(work, t.goos+"-"+t.goarch, binaryName(t))
		cmd := exec.Command(b.goCmd, "build", "-trimpath", "-ldflags", b.ldflags(), "-o", bin, "./cmd/shogun")
		cmd.Env = append(os.Environ(), "GOOS="+t.goos, "GOARCH="+t.goarch, "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = b.log, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("build %s/%s: %w", t.goos, t.goarch, err)
		}
		name := archiveName(t)
		files := []archiveFile{{name: binaryName(t), path: bin, mode: 0o755}}
		files = append(files, docFiles()...)
		dst := filepath.Join(b.out, name)
		if t.goos == "windows" {
			err = writeZip(dst, files, b.date)
		} else {
			err = writeTarGz(dst, files, b.date)
		}
		if err != nil {
			return nil, err
		}
		sum, err := fileSHA256(dst)
		if err != nil {
			return nil, err
		}
		sums[name] = sum
		fmt.Fprintf(b.log, "%s (%s, %.0f s)\n", dst, b.version, time.Since(start).Seconds())
	}
	sumsPath := filepath.Join(b.out, "SHA256SUMS")
	if err := os.WriteFile(sumsPath, []byte(formatSums(sums)), 0o644); err != nil {
		return nil, fmt.Errorf("write checksums: %w", err)
	}
	fmt.Fprintln(b.log, sumsPath)
	return sums, nil
}

// archiveFile is one file to pack: its name in the archive and where it is.
type archiveFile struct {
	name string
	path string
	mode os.FileMode
}

// writeZip packs files into a zip at dst; every entry gets the time when,
// so that the same build gives the same archive.
func writeZip(dst string, files []archiveFile, when time.Time) (err error) {
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write %s: %w", dst, cerr)
		}
	}()
	zw := zip.NewWriter(f)
	for _, af := range files {
		h := &zip.FileHeader{Name: af.name, Method: zip.Deflate, Modified: when}
		h.SetMode(af.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("%s: add %s: %w", dst, af.name, err)
		}
		if err := copyFile(w, af.path); err != nil {
			return fmt.Errorf("%s: %w", dst, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

// writeTarGz packs files into a gzip-compressed tar at dst, entries dated
// when and owned by no one in particular (uid 0), as a user's tar extracts
// them as the user.
func writeTarGz(dst string, files []archiveFile, when time.Time) (err error) {
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("write %s: %w", dst, cerr)
		}
	}()
	gz := gzip.NewWriter(f)
	gz.ModTime = when
	tw := tar.NewWriter(gz)
	for _, af := range files {
		info, err := os.Stat(af.path)
		if err != nil {
			return fmt.Errorf("%s: %w", dst, err)
		}
		h := &tar.Header{Name: af.name, Mode: int64(af.mode), Size: info.Size(), ModTime: when, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: add %s: %w", dst, af.name, err)
		}
		if err := copyFile(tw, af.path); err != nil {
			return fmt.Errorf("%s: %w", dst, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("copy %s: %w", path, err)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checksum %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// formatSums writes checksums the way sha256sum does ("HEX  NAME"), sorted
// by name, so that `sha256sum -c SHA256SUMS` checks them.
func formatSums(sums map[string]string) string {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, n := range names {
		fmt.Fprintf(&sb, "%s  %s\n", sums[n], n)
	}
	return sb.String()
}

var sumLine = regexp.MustCompile(`^([0-9a-fA-F]{64}) [ *]([^/\\]+)$`)

// parseSums reads a SHA256SUMS file; a line that is not "HEX  NAME" is an
// error naming the line, as a truncated download must not pass.
func parseSums(text string) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		m := sumLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: want \"SHA256  NAME\", got %q", n, line)
		}
		sums[m[2]] = strings.ToLower(m[1])
	}
	return sums, sc.Err()
}

// docFiles are the README and the docs pages it links, packed beside the
// binary so that the README's links work in an unpacked archive.
func docFiles() []archiveFile {
	var out []archiveFile
	if _, err := os.Stat("README.md"); err == nil {
		out = append(out, archiveFile{name: "README.md", path: "README.md", mode: 0o644})
	}
	pages, _ := filepath.Glob(filepath.Join("docs", "*.md"))
	for _, p := range pages {
		out = append(out, archiveFile{name: "docs/" + filepath.Base(p), path: p, mode: 0o644})
	}
	return out
}
