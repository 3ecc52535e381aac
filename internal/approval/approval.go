// Package approval holds the rules a person's decision on a held move
// obeys, in every area that holds moves for a person: the core area's
// moves to done and the sdd area's phase moves (docs/decisions.md D45).
// Each area keeps its own requests and records; what a decision is, where
// it may come from and who may give it are defined here once.
package approval

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Modes of a held move: off (no one is asked), on (a person decides; the
// host may ask the person at the agent's client), strict (only the
// dashboard or the CLI decides).
const (
	Off    = "off"
	On     = "on"
	Strict = "strict"
)

// Modes lists the modes (for schema enums).
var Modes = []string{Off, On, Strict}

// Decisions a person gives.
const (
	Approve = "approve"
	Reject  = "reject"
)

// Where a decision was given.
const (
	ViaDashboard    = "dashboard"
	ViaCLI          = "cli"
	ViaElicitation  = "elicitation"
	ViaInputRequest = "input_request"
)

// Vias lists the places a decision may come from (for schema enums).
var Vias = []string{ViaDashboard, ViaCLI, ViaElicitation, ViaInputRequest}

// MaxReason bounds a decision's reason, in characters.
const MaxReason = 2000

// personAtClient marks an approver the host asked at the agent's client:
// the call came with the agent's identity, and the record says who
// answered.
const personAtClient = " (person at the client)"

// Decision is a decision as an approve tool receives it: decision, reason,
// via and complete_move.
type Decision struct {
	Decision     string
	Reason       *string
	Via          *string
	CompleteMove *bool
}

// Checked is a Decision that holds: the reason trimmed, via defaulted to
// the CLI and complete_move to true.
type Checked struct {
	Approve      bool
	Reason       string
	Via          string
	CompleteMove bool
}

// Check refuses a decision that is missing or not approve or reject, a
// reason that is not UTF-8 or longer than MaxReason, a rejection without a
// reason (the agent must learn what to change) and an unknown via, each a
// 400 naming its field and rule.
func (d Decision) Check() (Checked, error) {
	c := Checked{Via: ViaCLI, CompleteMove: true}
	switch d.Decision {
	case Approve, Reject:
		c.Approve = d.Decision == Approve
	case "":
		return c, errs.Invalid("decision", "required", "decision is required: approve or reject")
	default:
		return c, errs.Invalidf("decision", "enum", "decision %q is not one of approve, reject", clip(d.Decision))
	}
	if d.Reason != nil {
		if !utf8.ValidString(*d.Reason) {
			return c, errs.Invalid("reason", "utf8", "reason is not valid UTF-8; send text as UTF-8")
		}
		if n := utf8.RuneCountInString(*d.Reason); n > MaxReason {
			return c, errs.Invalidf("reason", "maxLength", "reason must have at most %d characters, got %d; shorten it", MaxReason, n)
		}
		c.Reason = strings.TrimSpace(*d.Reason)
	}
	if !c.Approve && c.Reason == "" {
		return c, errs.Invalid("reason", "required", "a rejection needs a reason: say what the agent must change before it asks again")
	}
	if d.Via != nil {
		if !slices.Contains(Vias, *d.Via) {
			return c, errs.Invalidf("via", "enum", "via %q is not one of %s", clip(*d.Via), strings.Join(Vias, ", "))
		}
		c.Via = *d.Via
	}
	if d.CompleteMove != nil {
		c.CompleteMove = *d.CompleteMove
	}
	return c, nil
}

// FromClient reports whether the host asked the person at the agent's
// client (elicitation or an input request).
func (c Checked) FromClient() bool { return c.Via == ViaElicitation || c.Via == ViaInputRequest }

// Held names the held move a decision is about, for the refusals: the
// field that names it, the move in words ("T-5", "moving the sdd phase to
// 2") and the command a person decides it with.
type Held struct {
	Field, Move, Command string
}

// Approver is who the decision records, or the refusal when actor may not
// give it. Under strict the person at the agent's client may not decide
// (403, required "dashboard or cli"). Otherwise an answer from the client
// records actor as the person at the client; and nobody approves a move
// they asked for themselves (requester: the request's, or whoever made the
// move last) — 403, required "another person". A rejection by the
// requester stands: taking one's own request back is no borrowed right.
func (c Checked) Approver(actor, requester, mode string, h Held) (string, error) {
	if c.FromClient() {
		if mode == Strict {
			return "", errs.Newf(403, errs.Forbidden, "approval is strict here: only a person at the dashboard or with `%s` decides, not the person at the agent's client", h.Command).
				With("field", "via").With("required", "dashboard or cli").With("mode", mode)
		}
		return actor + personAtClient, nil
	}
	if c.Approve && requester == actor {
		return "", errs.Newf(403, errs.Forbidden, "%s cannot approve %s: it asked for (or made) the move itself; another person approves it", actor, h.Move).
			With("field", h.Field).With("required", "another person").With("requested_by", requester)
	}
	return actor, nil
}

// clip bounds a refused value quoted in a message.
func clip(s string) string {
	const max = 64
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}
