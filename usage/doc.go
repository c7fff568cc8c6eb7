// Package usage reads the tokens each coding CLI records for its own
// conversations (Claude Code's transcripts, Codex's rollouts, Gemini CLI's
// chat files), a little at a time from where it stopped in each file, and
// estimates their cost from a dated price table.
//
// Tokens are counted: they are what the CLI wrote the model server
// answered. Cost is an estimate: tokens times the prices of prices.yaml
// (or the user's usage.prices in settings.yaml). Package team feeds what
// this package reads into the history (package store), which attributes
// each record to the role's task of the time.
package usage
