package main

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

const (
	sumAMD64 = "6b20d2bfef2cfa122a45f70b971d7a9bd120626da96f5a789bef624625792dab"
	sumARM64 = "17600622937630b7fedc367fc9fd730effc46096ac3f702a80f63a8c572deb2a"
)

// The manifests of a release come from its SHA256SUMS alone: each Windows
// archive with its link on the tag's release page and its checksum.
func TestManifestsFromSums(t *testing.T) {
	dir := t.TempDir()
	sums := filepath.Join(dir, "SHA256SUMS")
	text := sumAMD64 + "  shogun-windows-amd64.zip\n" + sumARM64 + " *shogun-windows-arm64.zip\n" +
		strings.Repeat("a", 64) + "  shogun-linux-amd64.tar.gz\n"
	if err := os.WriteFile(sums, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := run([]string{"manifests", "-version", "v1.4.0", "-sums", sums, "-out", dir}, &out, &out); err != nil {
		t.Fatalf("manifests: %v\n%s", err, out.String())
	}

	var scoop struct {
		Version      string
		Bin          string
		Architecture map[string]struct{ URL, Hash string }
	}
	data, err := os.ReadFile(filepath.Join(dir, "scoop", "shogun.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &scoop); err != nil {
		t.Fatalf("scoop manifest is not JSON: %v\n%s", err, data)
	}
	base := "https://github.com/shogun-dev/shogun/releases/download/v1.4.0/"
	if scoop.Version != "1.4.0" || scoop.Bin != "shogun.exe" ||
		scoop.Architecture["64bit"].URL != base+"shogun-windows-amd64.zip" || scoop.Architecture["64bit"].Hash != sumAMD64 ||
		scoop.Architecture["arm64"].URL != base+"shogun-windows-arm64.zip" || scoop.Architecture["arm64"].Hash != sumARM64 ||
		len(scoop.Architecture) != 2 {
		t.Errorf("scoop manifest: want version 1.4.0, shogun.exe and both Windows archives with their checksums, got\n%s", data)
	}

	var installer struct {
		PackageIdentifier    string `yaml:"PackageIdentifier"`
		PackageVersion       string `yaml:"PackageVersion"`
		InstallerType        string `yaml:"InstallerType"`
		NestedInstallerFiles []struct {
			RelativeFilePath     string `yaml:"RelativeFilePath"`
			PortableCommandAlias string `yaml:"PortableCommandAlias"`
		} `yaml:"NestedInstallerFiles"`
		Installers []struct {
			Architecture    string `yaml:"Architecture"`
			InstallerURL    string `yaml:"InstallerUrl"`
			InstallerSha256 string `yaml:"InstallerSha256"`
		} `yaml:"Installers"`
	}
	data, err = os.ReadFile(filepath.Join(dir, "winget", "ShogunDev.Shogun.installer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &installer); err != nil {
		t.Fatalf("winget installer manifest is not YAML: %v\n%s", err, data)
	}
	if installer.PackageIdentifier != "ShogunDev.Shogun" || installer.PackageVersion != "1.4.0" || installer.InstallerType != "zip" ||
		len(installer.NestedInstallerFiles) != 1 || installer.NestedInstallerFiles[0].RelativeFilePath != "shogun.exe" ||
		len(installer.Installers) != 2 ||
		installer.Installers[0].Architecture != "x64" || installer.Installers[0].InstallerURL != base+"shogun-windows-amd64.zip" ||
		installer.Installers[0].InstallerSha256 != strings.ToUpper(sumAMD64) ||
		installer.Installers[1].Architecture != "arm64" || installer.Installers[1].InstallerSha256 != strings.ToUpper(sumARM64) {
		t.Errorf("winget installer manifest: got\n%s", data)
	}
	for _, name := range []string{"ShogunDev.Shogun.yaml", "ShogunDev.Shogun.locale.en-US.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, "winget", name))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil || m["PackageIdentifier"] != "ShogunDev.Shogun" || m["PackageVersion"] != "1.4.0" || m["ManifestVersion"] != "1.6.0" {
			t.Errorf("%s: want identifier, version 1.4.0 and manifest version (err %v), got\n%s", name, err, data)
		}
	}
}

// A damaged or foreign SHA256SUMS is refused with the line named, and one
// without Windows archives gives no manifests.
func TestManifestsRefuseBadSums(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{sumAMD64 + "  shogun-windows-amd64.zip\n<html>not found</html>\n", "line 2"},
		{sumAMD64[:60] + "  shogun-windows-amd64.zip\n", "line 1"},
		{sumAMD64 + "  shogun-linux-amd64.tar.gz\n", "names no Windows archive"},
	} {
		sums := filepath.Join(dir, "SHA256SUMS")
		if err := os.WriteFile(sums, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		err := run([]string{"manifests", "-version", "v1.0.0", "-sums", sums, "-out", dir}, &out, &out)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: want an error with %q, got %v", c.text, c.want, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "scoop")); err == nil {
			t.Fatalf("%q: manifests written from bad checksums", c.text)
		}
	}
}

// The Windows archive holds shogun.exe at its top, as Scoop's bin and
// winget's RelativeFilePath name it, and the same input gives the same bytes.
func TestZipArchive(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "shogun.exe")
	if err := os.WriteFile(exe, []byte("MZ program"), 0o755); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	files := []archiveFile{{name: "shogun.exe", path: exe, mode: 0o755}}
	a, b := filepath.Join(dir, "a.zip"), filepath.Join(dir, "b.zip")
	if err := writeZip(a, files, when); err != nil {
		t.Fatal(err)
	}
	if err := writeZip(b, files, when); err != nil {
		t.Fatal(err)
	}
	sa, _ := fileSHA256(a)
	sb, _ := fileSHA256(b)
	if sa != sb {
		t.Errorf("two archives of the same files differ: %s, %s", sa, sb)
	}
	zr, err := zip.OpenReader(a)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "shogun.exe" {
		t.Fatalf("want shogun.exe alone, got %v", zr.File)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "MZ program" {
		t.Errorf("shogun.exe in the zip: got %q", got)
	}
}
