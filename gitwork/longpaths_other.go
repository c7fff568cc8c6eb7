//go:build !windows

package gitwork

// longPathsDefault: only Windows needs core.longpaths.
const longPathsDefault = false
