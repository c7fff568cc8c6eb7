package supervisor

import "io/fs"

// ownedByMe accepts every file on Windows: the workspace's ACLs decide who
// may write there, and the ledger's entries are still matched process by
// process before anything is killed.
func ownedByMe(fs.FileInfo) error { return nil }
