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
	// Position is the stored chain position (1 first); 0 means "the one
	// after the previous link", for chains known to have no gaps.
	Position int
	// TraceID is the trace of the call that wrote the record (empty:
	// untraced); not a hash input, only echoed (docs/decisions.md D38).
	TraceID string
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
	ReasonMissing      = "missing_record"         // positions absent before a stored record
	ReasonHead         = "head_mismatch"          // the chain's stored head disagrees with its records
	ReasonRoot         = "root_mismatch"          // a record is not (or no longer) what a finalized root sealed
)

// BrokenLink names one broken link or one disagreement with what vouches
// for the chain. Position is always a chain position (1 first), never an
// index into what was found. By Reason:
//
//   - hash_mismatch: ExpectedHash is the recomputed hash, ActualHash the
//     stored one;
//   - previous_hash_mismatch alone: ExpectedHash is the prior stored link's
//     hash, ActualHash the stored previous_hash ("" for null);
//   - missing_record: Missing positions from Position hold no record although
//     a later one does;
//   - head_mismatch: the stored head says the chain ends at ExpectedLength
//     with ExpectedHash; the records end at ActualLength with ActualHash
//     (Position is the head's length);
//   - root_mismatch: finalized session SessionID sealed the record at Position
//     with ExpectedHash; ActualHash is what is stored ("" when the record is
//     gone). Position 0: the session's root as a whole disagrees (Detail).
type BrokenLink struct {
	Position       int    `json:"position"`
	ExpectedHash   string `json:"expected_hash"`
	ActualHash     string `json:"actual_hash"`
	Chain          string `json:"chain,omitempty"`
	RecordID       string `json:"record_id,omitempty"`
	TaskID         string `json:"task_id,omitempty"`
	Reason         string `json:"reason"`
	Missing        int    `json:"missing,omitempty"`
	ExpectedLength *int   `json:"expected_length,omitempty"`
	ActualLength   *int   `json:"actual_length,omitempty"`
	SessionID      string `json:"session_id,omitempty"`
	Detail         string `json:"detail,omitempty"`
}

// TraceEntry is one record of a full trace.
type TraceEntry struct {
	Chain          string `json:"chain"`
	TaskID         string `json:"task_id"`
	Position       int    `json:"position"`
	RecordID       string `json:"record_id"`
	StoredHash     string `json:"stored_hash"`
	RecomputedHash string `json:"recomputed_hash"`
	Verdict        string `json:"verdict" jsonschema:"enum=verified,enum=broken"`
	// TraceID is the trace of the call that wrote the record, when it was
	// traced; it plays no part in the verdict.
	TraceID string `json:"trace_id,omitempty"`
}

// Report is the outcome of verifying one or more chains. Total counts the
// links the chains should have: the records found plus Missing, the
// positions that a later record, the head or a finalized root vouches for but
// that hold no record.
type Report struct {
	Total          int          `json:"total_records"`
	Verified       int          `json:"verified"`
	Missing        int          `json:"missing"`
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
// each broken link names its chain, task and record. It checks the links
// only; VerifyStored adds the head and the finalized roots.
func VerifyChains(chains [][]Link, opts ...VerifyOption) Report {
	in := make([]Chain, len(chains))
	for i, links := range chains {
		in[i] = Chain{Links: links}
	}
	return VerifyStored(in, opts...)
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
