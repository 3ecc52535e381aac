package bundle

// The in-toto Statement v1 (github.com/in-toto/attestation, spec/v1) that a
// Sigstore export signs (docs/decisions.md D38).
const (
	StatementType = "https://in-toto.io/Statement/v1"
	PayloadType   = "application/vnd.in-toto+json"
	// PredicateType names cairn's decision-trail predicate; the last path
	// element is its version, changed when the predicate's meaning does.
	PredicateType = "https://cairn.dev/attestation/decision-trail/v1"
)

// Statement is an in-toto Statement v1.
type Statement struct {
	Type          string     `json:"_type"`
	Subject       []Subject  `json:"subject"`
	PredicateType string     `json:"predicateType"`
	Predicate     *Predicate `json:"predicate"`
}

// Subject is an in-toto ResourceDescriptor carrying a name and a digest set.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// RootSubject names the subject whose sha256 is the session's Merkle root.
func RootSubject(sessionID string) string { return "cairn:session/" + sessionID + "/merkle-root" }

// HeadSubject names the subject whose sha256 is the last record hash of a
// task's chain (trail.ChainThought or trail.ChainEvent) within the session.
func HeadSubject(taskID, chain string) string { return "cairn:chain/" + taskID + "/" + chain + "/head" }

// Predicate is the decision-trail predicate: which session, the leaves in
// order with where each record sits, and the signed C2SP checkpoint over
// them. Record contents stay out: each digest is the record's hash, which
// the cairn-format bundle or the store lets anyone recompute.
type Predicate struct {
	Session    PredicateSession  `json:"session"`
	LeafCount  uint64            `json:"leafCount"`
	Records    []PredicateRecord `json:"records"`
	Checkpoint string            `json:"checkpoint"`
}

// PredicateSession is Session with the in-toto lowerCamelCase field names.
type PredicateSession struct {
	ID          string   `json:"id"`
	TaskID      string   `json:"taskId"`
	TaskIDs     []string `json:"taskIds"`
	AuditorID   string   `json:"auditorId,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	Scope       string   `json:"scope"`
	StartedAt   string   `json:"startedAt,omitempty"`
	FinalizedAt string   `json:"finalizedAt"`
}

// PredicateRecord is one leaf: its record, chain, chain position and hash.
type PredicateRecord struct {
	LeafIndex  uint64            `json:"leafIndex"`
	ID         string            `json:"id"`
	TaskID     string            `json:"taskId"`
	Chain      string            `json:"chain"`
	Position   int               `json:"position"`
	Type       string            `json:"type"`
	RecordedAt string            `json:"recordedAt"`
	RecordedBy string            `json:"recordedBy"`
	Digest     map[string]string `json:"digest"`
}

func predicateSession(s Session) PredicateSession {
	return PredicateSession{ID: s.SessionID, TaskID: s.TaskID, TaskIDs: s.TaskIDs, AuditorID: s.AuditorID,
		Reason: s.Reason, Scope: s.Scope, StartedAt: s.StartedAt, FinalizedAt: s.FinalizedAt}
}

func (p PredicateSession) session() Session {
	return Session{SessionID: p.ID, TaskID: p.TaskID, TaskIDs: p.TaskIDs, AuditorID: p.AuditorID,
		Reason: p.Reason, Scope: p.Scope, StartedAt: p.StartedAt, FinalizedAt: p.FinalizedAt}
}

// NewStatement describes a built cairn bundle as an in-toto statement: the
// Merkle root and each chain's head as subjects, the decision-trail
// predicate as what is said of them.
func NewStatement(b *Bundle) *Statement {
	st := &Statement{
		Type:          StatementType,
		Subject:       []Subject{{Name: RootSubject(b.Session.SessionID), Digest: map[string]string{"sha256": b.Root}}},
		PredicateType: PredicateType,
		Predicate: &Predicate{
			Session:    predicateSession(b.Session),
			LeafCount:  b.TreeSize,
			Records:    make([]PredicateRecord, len(b.Records)),
			Checkpoint: b.Checkpoint,
		},
	}
	heads := map[[2]string]int{}
	var order [][2]string
	for i, r := range b.Records {
		st.Predicate.Records[i] = PredicateRecord{LeafIndex: uint64(i), ID: r.ID, TaskID: r.TaskID, Chain: r.Chain,
			Position: r.Position, Type: r.Type, RecordedAt: r.RecordedAt, RecordedBy: r.RecordedBy,
			Digest: map[string]string{"sha256": r.Hash}}
		k := [2]string{r.TaskID, r.Chain}
		if _, ok := heads[k]; !ok {
			order = append(order, k)
		}
		heads[k] = i
	}
	for _, k := range order {
		st.Subject = append(st.Subject, Subject{Name: HeadSubject(k[0], k[1]), Digest: map[string]string{"sha256": b.Records[heads[k]].Hash}})
	}
	return st
}
