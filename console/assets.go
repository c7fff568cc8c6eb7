package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// assets are the console's pages, scripts and styles, and under vendor/ the
// built terminal emulator: `go generate ./console` (make console-vendor)
// installs the versions pinned in console/web/package-lock.json and copies
// them there. The copies are committed, so a plain go build needs no Node.
//
//go:embed assets
var assets embed.FS

//go:generate npm ci --prefix web --no-audit --no-fund --ignore-scripts
//go:generate node web/vendor.mjs

// assetHandler serves the embedded files; / is index.html.
func assetHandler() http.Handler {
	root, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embed directive guarantees the folder
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		b, err := fs.ReadFile(root, name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			ct = "application/octet-stream"
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(b)
	})
}

// contentTypes are the types of the assets' files, fixed here because the
// system's table (the Windows registry among them) may say otherwise.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".json": "application/json",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}
