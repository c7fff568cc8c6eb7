package control

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// endpointName names a workspace's endpoint outside the workspace: a socket
// in the user's runtime folder on Unix, a named pipe on Windows. The hash of
// the workspace path keeps two workspaces apart and the name short.
func endpointName(ws string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(ws)))
	return "shogun-" + hex.EncodeToString(sum[:8])
}
