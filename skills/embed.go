// Package skills ships cairn's 24 canonical skills: one SKILL.md per workflow
// an agent runs with cairn's tools (triage, planning, the decision trail,
// audits, proofs, leases, webhooks, vision, computer-use safety, plugin
// authoring, ...).
//
// The files are embedded so the cairn binary can install them with
// `cairn init` (see Install) without the source tree.
package skills

import "embed"

// FS holds the canonical skill directories, each cairn-<name>/SKILL.md at the
// top level of the file system.
//
//go:embed cairn-*
var FS embed.FS
