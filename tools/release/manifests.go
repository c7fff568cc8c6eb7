package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

const (
	defaultRepo = "shogun-dev/shogun"
	// wingetID is the package's winget identifier (Publisher.Name).
	wingetID = "ShogunDev.Shogun"
	// wingetManifestVersion is the winget manifest schema the files follow.
	wingetManifestVersion = "1.6.0"
	description           = "A headless supervisor for teams of AI coding CLIs, each in its own pseudo-terminal, driven through files."
	// license is what the manifests say until the repository carries a
	// LICENSE file: winget requires the field.
	license = "Unknown"
)

// manifestSet writes the Scoop and winget manifests of one release from its
// checksums.
type manifestSet struct {
	version string            // as tagged, e.g. v1.2.0
	repo    string            // GitHub OWNER/NAME
	sums    map[string]string // archive name → SHA-256, lower-case hex
}

// plainVersion is the version without the tag's leading v: Scoop and
// winget compare versions as numbers.
func (m manifestSet) plainVersion() string { return strings.TrimPrefix(m.version, "v") }

func (m manifestSet) url(name string) string {
	return "https://github.com/" + m.repo + "/releases/download/" + m.version + "/" + name
}

// windows returns the Windows archives present: the manifests' architecture
// name (Scoop's, winget's) → archive name and checksum.
func (m manifestSet) windows() []winArchive {
	var out []winArchive
	for _, a := range []winArchive{
		{Scoop: "64bit", Winget: "x64", Name: archiveName(target{"windows", "amd64"})},
		{Scoop: "arm64", Winget: "arm64", Name: archiveName(target{"windows", "arm64"})},
	} {
		if sum, ok := m.sums[a.Name]; ok {
			a.SHA256 = sum
			out = append(out, a)
		}
	}
	return out
}

func (m manifestSet) hasWindows() bool { return len(m.windows()) > 0 }

// winArchive is one Windows archive of the release; the fields are
// exported for the winget templates.
type winArchive struct {
	Scoop, Winget, Name, SHA256, URL string
}

// write puts scoop/shogun.json and winget/<id>*.yaml under out.
func (m manifestSet) write(out string, log io.Writer) error {
	scoop, err := m.scoop()
	if err != nil {
		return err
	}
	files := map[string][]byte{filepath.Join("scoop", "shogun.json"): scoop}
	winget, err := m.winget()
	if err != nil {
		return err
	}
	for name, data := range winget {
		files[filepath.Join("winget", name)] = data
	}
	for _, name := range []string{
		filepath.Join("scoop", "shogun.json"),
		filepath.Join("winget", wingetID+".yaml"),
		filepath.Join("winget", wingetID+".installer.yaml"),
		filepath.Join("winget", wingetID+".locale.en-US.yaml"),
	} {
		p := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return fmt.Errorf("write manifest: %w", err)
		}
		fmt.Fprintln(log, p)
	}
	return nil
}

// scoop is the Scoop manifest (https://github.com/ScoopInstaller/Scoop/wiki/App-Manifests):
// the archives of this release, and checkver/autoupdate so that a bucket
// follows new tags with SHA256SUMS as the hash source.
func (m manifestSet) scoop() ([]byte, error) {
	type arch struct {
		URL  string `json:"url"`
		Hash string `json:"hash,omitempty"`
	}
	type hashSource struct {
		URL string `json:"url"`
	}
	type autoArch struct {
		URL string `json:"url"`
	}
	type manifest struct {
		Version      string          `json:"version"`
		Description  string          `json:"description"`
		Homepage     string          `json:"homepage"`
		License      string          `json:"license"`
		Architecture map[string]arch `json:"architecture"`
		Bin          string          `json:"bin"`
		Checkver     string          `json:"checkver"`
		Autoupdate   struct {
			Architecture map[string]autoArch `json:"architecture"`
			Hash         hashSource          `json:"hash"`
		} `json:"autoupdate"`
	}
	man := manifest{
		Version:      m.plainVersion(),
		Description:  description,
		Homepage:     "https://github.com/" + m.repo,
		License:      license,
		Architecture: map[string]arch{},
		Bin:          "shogun.exe",
		Checkver:     "github",
	}
	man.Autoupdate.Architecture = map[string]autoArch{}
	for _, a := range m.windows() {
		man.Architecture[a.Scoop] = arch{URL: m.url(a.Name), Hash: a.SHA256}
		man.Autoupdate.Architecture[a.Scoop] = autoArch{URL: "https://github.com/" + m.repo + "/releases/download/v$version/" + a.Name}
	}
	man.Autoupdate.Hash = hashSource{URL: "$baseurl/SHA256SUMS"}
	data, err := json.MarshalIndent(man, "", "    ")
	if err != nil {
		return nil, fmt.Errorf("scoop manifest: %w", err)
	}
	return append(data, '\n'), nil
}

// winget is the multi-file winget manifest (version, installer, default
// locale) for a portable program inside a zip, as winget-pkgs expects it
// under manifests/s/ShogunDev/Shogun/VERSION/.
func (m manifestSet) winget() (map[string][]byte, error) {
	var installers []winArchive
	for _, a := range m.windows() {
		a.URL = m.url(a.Name)
		a.SHA256 = strings.ToUpper(a.SHA256)
		installers = append(installers, a)
	}
	data := struct {
		ID, Version, Tag, ManifestVersion, Repo, Description, License string
		Installers                                                    []winArchive
	}{wingetID, m.plainVersion(), m.version, wingetManifestVersion, m.repo, description, license, installers}
	out := map[string][]byte{}
	for name, tmpl := range map[string]*template.Template{
		wingetID + ".yaml":              wingetVersionTmpl,
		wingetID + ".installer.yaml":    wingetInstallerTmpl,
		wingetID + ".locale.en-US.yaml": wingetLocaleTmpl,
	} {
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, data); err != nil {
			return nil, fmt.Errorf("winget manifest %s: %w", name, err)
		}
		out[name] = buf.Bytes()
	}
	return out, nil
}

// The values are quoted for YAML with printf "%q": none holds characters
// where Go's quoting and YAML's double-quoted style differ.
var (
	wingetVersionTmpl = template.Must(template.New("version").Parse(`# yaml-language-server: $schema=https://aka.ms/winget-manifest.version.{{.ManifestVersion}}.schema.json
PackageIdentifier: {{.ID}}
PackageVersion: {{printf "%q" .Version}}
DefaultLocale: en-US
ManifestType: version
ManifestVersion: {{.ManifestVersion}}
`))
	wingetInstallerTmpl = template.Must(template.New("installer").Parse(`# yaml-language-server: $schema=https://aka.ms/winget-manifest.installer.{{.ManifestVersion}}.schema.json
PackageIdentifier: {{.ID}}
PackageVersion: {{printf "%q" .Version}}
InstallerType: zip
NestedInstallerType: portable
NestedInstallerFiles:
  - RelativeFilePath: shogun.exe
    PortableCommandAlias: shogun
Installers:
{{- range .Installers}}
  - Architecture: {{.Winget}}
    InstallerUrl: {{printf "%q" .URL}}
    InstallerSha256: {{.SHA256}}
{{- end}}
ManifestType: installer
ManifestVersion: {{.ManifestVersion}}
`))
	wingetLocaleTmpl = template.Must(template.New("locale").Parse(`# yaml-language-server: $schema=https://aka.ms/winget-manifest.defaultLocale.{{.ManifestVersion}}.schema.json
PackageIdentifier: {{.ID}}
PackageVersion: {{printf "%q" .Version}}
PackageLocale: en-US
Publisher: shogun-dev
PublisherUrl: https://github.com/{{.Repo}}
PackageName: shogun
PackageUrl: https://github.com/{{.Repo}}
License: {{.License}}
ShortDescription: {{printf "%q" .Description}}
Moniker: shogun
ReleaseNotesUrl: https://github.com/{{.Repo}}/releases/tag/{{.Tag}}
ManifestType: defaultLocale
ManifestVersion: {{.ManifestVersion}}
`))
)
