package trail

import "math"

// Link is one stored record of a chain as an auditor sees it: the stored hash
// and the hash inputs, whose PreviousHash is the stored previous_hash.
type Link struct {
	// Chain is ChainThought or ChainEvent; it is only echoed in reports.
	Chain string
	// RecordID is the record's id (Θ-<n> for thoughts); only echoed.
	RecordID string
	// Hash is the stored hash.
	Hash string
	// Fields are the stored hash inputs.
	Fields Fields
}

// Verdicts of a trace entry.
const (
	VerdictOK     = "verified"
	VerdictBroken = "broken"
)

// Reasons a link is broken; both may apply, joined by a comma.
const (
	ReasonHash         = "hash_mismatch"          // stored hash differs from the recomputed one
	ReasonPreviousHash = "previous_hash_mismatch" // stored previous_hash differs from the prior link's hash
	ReasonUnhashable   = "unhashable"             // a field is not valid UTF-8
)

// BrokenLink names one broken link. When the record's own hash is wrong,
// ExpectedHash is the recomputed hash and ActualHash the stored one; when only
// the back-link is wrong, ExpectedHash is the prior link's stored hash and
// ActualHash the stored previous_hash ("" for null).
type BrokenLink struct {
	Position     int    `json:"position"`
	ExpectedHash string `json:"expected_hash"`
	ActualHash   string `json:"actual_hash"`
	Chain        string `json:"chain,omitempty"`
	RecordID     string `json:"record_id,omitempty"`
	TaskID       string `json:"task_id,omitempty"`
	Reason       string `json:"reason"`
}

// TraceEntry is one record of a full trace.
type TraceEntry struct {
	Chain          string `json:"chain"`
	TaskID         string `json:"task_id"`
	Position       int    `json:"position"`
	RecordID       string `json:"record_id"`
	StoredHash     string `json:"stored_hash"`
	RecomputedHash string `json:"recomputed_hash"`
	Verdict        string `json:"verdict"`
}

// Report is the outcome of verifying one or more chains.
type Report struct {
	Total          int          `json:"total_records"`
	Verified       int          `json:"verified"`
	ChainValid     bool         `json:"chain_valid"`
	IntegrityScore int          `json:"integrity_score"`
	BrokenLinks    []BrokenLink `json:"broken_links"`
	Trace          []TraceEntry `json:"trace,omitempty"`
}

// VerifyOption tunes VerifyChain.
type VerifyOption func(*verifyConfig)

type verifyConfig struct{ trace bool }

// WithTrace makes the report carry one TraceEntry per record (full_trace).
func WithTrace() VerifyOption { return func(c *verifyConfig) { c.trace = true } }

// VerifyChain recomputes every link of one chain, given in chain order
// (position 1 first). A link is broken if its recomputed hash differs from the
// stored one or its stored previous_hash differs from the prior link's stored
// hash (null for position 1). Positions are 1-indexed.
func VerifyChain(links []Link, opts ...VerifyOption) Report {
	return VerifyChains([][]Link{links}, opts...)
}

// VerifyChains verifies several chains (for example both chains of every task
// of an audit session) into one report; positions restart at 1 per chain and
// each broken link names its chain, task and record.
func VerifyChains(chains [][]Link, opts ...VerifyOption) Report {
	var cfg verifyConfig
	for _, o := range opts {
		o(&cfg)
	}
	r := Report{BrokenLinks: []BrokenLink{}}
	var h hasher
	for _, links := range chains {
		if cfg.trace && r.Trace == nil {
			r.Trace = make([]TraceEntry, 0, len(links))
		}
		prev := ""
		for i := range links {
			l := &links[i]
			pos := i + 1
			r.Total++
			recomputed, err := h.hash(&l.Fields)
			var b BrokenLink
			switch {
			case err != nil:
				b = BrokenLink{ExpectedHash: "", ActualHash: l.Hash, Reason: ReasonUnhashable}
			case recomputed != l.Hash:
				b = BrokenLink{ExpectedHash: recomputed, ActualHash: l.Hash, Reason: ReasonHash}
				if l.Fields.PreviousHash != prev {
					b.Reason += "," + ReasonPreviousHash
				}
			case l.Fields.PreviousHash != prev:
				b = BrokenLink{ExpectedHash: prev, ActualHash: l.Fields.PreviousHash, Reason: ReasonPreviousHash}
			}
			verdict := VerdictOK
			if b.Reason != "" {
				b.Position, b.Chain, b.RecordID, b.TaskID = pos, l.Chain, l.RecordID, l.Fields.TaskID
				r.BrokenLinks = append(r.BrokenLinks, b)
				verdict = VerdictBroken
			} else {
				r.Verified++
			}
			if cfg.trace {
				r.Trace = append(r.Trace, TraceEntry{
					Chain: l.Chain, TaskID: l.Fields.TaskID, Position: pos, RecordID: l.RecordID,
					StoredHash: l.Hash, RecomputedHash: recomputed, Verdict: verdict,
				})
			}
			// The next link must point at what is stored, not at what we
			// recomputed: tampering one record then breaks exactly one link.
			prev = l.Hash
		}
	}
	r.IntegrityScore = IntegrityScore(r.Verified, r.Total)
	r.ChainValid = r.Verified == r.Total
	return r
}

// IntegrityScore is round(100 × verified / total), 100 for an empty chain.
// Rounding is half away from zero, as JavaScript's Math.round on these
// non-negative values.
func IntegrityScore(verified, total int) int {
	if total == 0 {
		return 100
	}
	return int(math.Floor(100*float64(verified)/float64(total) + 0.5))
}
