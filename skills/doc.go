// Package skills turns a workspace's history into reusable agent skills
// (DESIGN.md section 8). It owns the whole path from finished tasks to
// skill files:
//
//   - Scan mines the finished tasks and their reports in the store for
//     repeated work (same role and normalised title, shared tag,
//     near-duplicate title and body) and for skills agents proposed in
//     reports, and keeps one candidate per group in the store, updated on
//     every scan. The text of a candidate is distilled deterministically,
//     by counting what recurs; no model is asked.
//   - Review walks pending candidates in a terminal (approve, reject,
//     edit, skip, quit); Decide is the same without a terminal.
//   - Export writes approved candidates as Agent Skills Markdown files for
//     Codex, Copilot and Claude, never overwriting a different file.
//
// A workspace's default export folders are skills/codex and
// skills/copilot; when the workspace is this repository they sit beside
// this package's files, as data, not Go packages.
package skills
