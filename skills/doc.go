// Package skills turns a workspace's history into reusable agent skills
// (DESIGN.md section 8). It owns the whole path from finished tasks to
// skill files:
//
//   - Scan mines the finished tasks and their reports in the store for
//     repeated work (same role and normalised title, shared tag,
//     near-duplicate title and body) and for skills agents proposed in
//     reports, and keeps one candidate per group in the store, updated on
//     every scan. A chain of commands (an order and the tasks it caused,
//     store.Task's Root) is one piece of work: a group needs tasks from
//     the threshold's number of chains (chainKey, enoughChains). The text
//     of a candidate is distilled deterministically, by counting what
//     recurs; no model is asked.
//   - Review walks pending candidates in a terminal (approve, reject,
//     edit, skip, quit); Decide is the same without a terminal.
//   - Export writes approved candidates as Agent Skills Markdown files for
//     Codex, Copilot and Claude, never overwriting a different file.
//
// # Incremental mining
//
// A scan does not read the history again. The mining state is kept in the
// store (skill_state, as keyed blobs this package encodes; see kv.go and
// model.go): every task's record (its normalised title's group, tags,
// proposal, token set and cluster), the token counts, the groups with
// their members and the tasks they share with each other, a similarity
// index of the token sets, and the settled groups with their distilled
// texts. A scan reads the tasks that arrived since the last one and those
// whose status changed since (a trigger lists them), moves them in and out
// of their groups, finds a new task's near-duplicates through the index,
// settles again only the groups whose settling can have changed (see
// resettle), distils again only the texts whose sources changed, and
// reconciles only the candidates of the groups that changed or that a
// person changed. `shogun skills scan --full` (ScanOptions.Full) mines the
// whole history again, streaming it from the store, and replaces the
// state; the first scan, and a scan with other options, do the same. An
// incremental scan and a full one give the same candidates: the property
// test in incremental_test.go checks it on generated histories fed in
// random orders and batches.
//
// For that, every step is a function of the set of finished tasks, not of
// the order they came in or of the whole history at once:
//
//   - A task's token set leaves out the tokens too common to tell kinds of
//     work apart: those found in more than a tenth of the tasks created
//     before it (and in more than a hundred). This is fixed when the task
//     is created; the first version counted over the whole history, which
//     changed every task's set whenever the history grew.
//   - Whether a group's tasks come from enough chains of commands is
//     counted from their records' roots, which are fixed when a task is
//     created.
//   - Near-duplicates are the pairs whose sets are at least
//     skills.similarity alike (Jaccard), found exactly, and clusters join
//     them by single link; a full scan finds them by a similarity join
//     (simjoin.go), an incremental one through the index kept in the state.
//   - When a group that settles joins the kept group holding most of its
//     tasks, a tie goes to the kept group whose key sorts first (it went to
//     the one kept first, which depends on every group's size).
//   - A group with no candidate of its own (a cluster whose first task
//     changed, a title group that was inside a cluster) takes over an
//     orphan: a title or similar candidate whose group is gone, holding at
//     least half of its tasks. The first version could take over the
//     candidate of another group found later in the same scan.
//
// A workspace's default export folders are skills/codex and
// skills/copilot; when the workspace is this repository they sit beside
// this package's files, as data, not Go packages.
package skills
