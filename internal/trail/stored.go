package trail

import "strconv"

// A chain's links prove only what lies between them: deleting the last
// records, or rewriting every record and recomputing every hash, leaves a
// chain that verifies. What the store knows besides the links closes those
// gaps: the head it wrote with every append (length and last hash), and the
// leaves that a finalized audit session sealed. VerifyStored checks the links
// against both.

// Head is a chain's head as the store recorded it with the last append.
type Head struct {
	// Length is the position of the last link appended.
	Length uint64
	// Hash is that link's hash (lowercase hex).
	Hash string
}

// Seal is one record that a finalized audit session sealed into its Merkle
// root: its position and its hash at finalization.
type Seal struct {
	Position int
	// Hash is the sealed leaf (lowercase hex); "" when the session was
	// finalized before the store kept leaf hashes, so only the record's
	// presence can be checked here (its root is checked as a whole).
	Hash      string
	SessionID string
}

// Chain is one stored chain with what vouches for it.
type Chain struct {
	// Name (ChainThought, ChainEvent) and TaskID name the chain in reports
	// about records that are missing.
	Name, TaskID string
	// Links are the stored links in position order.
	Links []Link
	// CheckHead compares the links with Head; a nil Head then means the
	// store holds no head for the chain.
	CheckHead bool
	Head      *Head
	// Seals are the chain's sealed records, in position order.
	Seals []Seal
}

// maxHeadLength bounds the length a head may claim: a forged head cannot
// make the report count 2^64 missing records or overflow an int.
const maxHeadLength = 1 << 40

// VerifyStored verifies chains against their links, heads and seals.
//
// A record counts as a verified link only if its own hash and back-link
// check out, the head vouches for it (it lies at or below the head's length,
// and at the head's length it has the head's hash) and every seal of its
// position has its hash. A position that a later record, the head or a seal
// vouches for but that holds no record counts as a link that does not
// verify. So integrity_score stays round(100 × verified / links), with the
// links the chain should have as the denominator.
func VerifyStored(chains []Chain, opts ...VerifyOption) Report {
	var cfg verifyConfig
	for _, o := range opts {
		o(&cfg)
	}
	v := storedVerifier{cfg: cfg, r: Report{BrokenLinks: []BrokenLink{}}}
	for i := range chains {
		v.chain(&chains[i])
	}
	v.r.Total = v.found + v.r.Missing
	v.r.IntegrityScore = IntegrityScore(v.r.Verified, v.r.Total)
	v.r.ChainValid = len(v.r.BrokenLinks) == 0
	return v.r
}

// AddBroken records a disagreement found outside the chains (a session's
// root as a whole); it makes the report invalid without changing the score,
// since no one link can be blamed.
func (r *Report) AddBroken(b BrokenLink) {
	r.BrokenLinks = append(r.BrokenLinks, b)
	r.ChainValid = false
}

type storedVerifier struct {
	cfg   verifyConfig
	r     Report
	h     hasher
	found int
}

func (v *storedVerifier) chain(c *Chain) {
	if v.cfg.trace && v.r.Trace == nil {
		v.r.Trace = make([]TraceEntry, 0, len(c.Links))
	}
	headLen := -1
	if c.CheckHead {
		headLen = 0
		if c.Head != nil {
			headLen = int(min(c.Head.Length, maxHeadLength))
		}
	}
	name, task := c.Name, c.TaskID
	prevHash, prevPos := "", 0
	seals := c.Seals
	for i := range c.Links {
		l := &c.Links[i]
		if name == "" {
			name, task = l.Chain, l.Fields.TaskID
		}
		pos := l.Position
		if pos <= prevPos {
			pos = prevPos + 1
		}
		for len(seals) > 0 && seals[0].Position < pos {
			v.sealGone(name, task, seals[0])
			seals = seals[1:]
		}
		if gap := pos - prevPos - 1; gap > 0 {
			v.r.Missing += gap
			v.r.BrokenLinks = append(v.r.BrokenLinks, BrokenLink{
				Position: prevPos + 1, Chain: name, TaskID: task, Reason: ReasonMissing, Missing: gap,
				Detail: "positions " + span(prevPos+1, pos-1) + " hold no record, but position " + strconv.Itoa(pos) + " does: records were deleted",
			})
		}
		v.found++
		b, recomputed := v.link(l, prevHash)
		ok := b.Reason == ""
		if !ok {
			b.Position, b.Chain, b.RecordID, b.TaskID = pos, l.Chain, l.RecordID, l.Fields.TaskID
			v.r.BrokenLinks = append(v.r.BrokenLinks, b)
		}
		for len(seals) > 0 && seals[0].Position == pos {
			if s := seals[0]; s.Hash != "" && s.Hash != l.Hash {
				ok = false
				v.r.BrokenLinks = append(v.r.BrokenLinks, BrokenLink{
					Position: pos, ExpectedHash: s.Hash, ActualHash: l.Hash, Chain: l.Chain, RecordID: l.RecordID,
					TaskID: l.Fields.TaskID, Reason: ReasonRoot, SessionID: s.SessionID,
					Detail: "audit session " + s.SessionID + " sealed a different record at this position into its finalized root",
				})
			}
			seals = seals[1:]
		}
		if headLen >= 0 && (pos > headLen || pos == headLen && l.Hash != c.Head.Hash) {
			ok = false // the head does not vouch for this record; one head_mismatch entry says why
		}
		if ok {
			v.r.Verified++
		}
		if v.cfg.trace {
			verdict := VerdictOK
			if !ok {
				verdict = VerdictBroken
			}
			v.r.Trace = append(v.r.Trace, TraceEntry{
				Chain: l.Chain, TaskID: l.Fields.TaskID, Position: pos, RecordID: l.RecordID,
				StoredHash: l.Hash, RecomputedHash: recomputed, Verdict: verdict, TraceID: l.TraceID,
			})
		}
		// The next link must point at what is stored, not at what we
		// recomputed: tampering one record then breaks exactly one link.
		prevHash, prevPos = l.Hash, pos
	}
	tail := headLen
	for _, s := range seals {
		v.sealGone(name, task, s)
		tail = max(tail, s.Position)
	}
	if tail > prevPos {
		v.r.Missing += tail - prevPos
	}
	if c.CheckHead {
		v.head(c, name, task, headLen, prevPos, prevHash)
	}
}

// link checks one record's hash and back-link.
func (v *storedVerifier) link(l *Link, prev string) (BrokenLink, string) {
	recomputed, err := v.h.hash(&l.Fields)
	switch {
	case err != nil:
		return BrokenLink{ActualHash: l.Hash, Reason: ReasonUnhashable}, recomputed
	case recomputed != l.Hash:
		b := BrokenLink{ExpectedHash: recomputed, ActualHash: l.Hash, Reason: ReasonHash}
		if l.Fields.PreviousHash != prev {
			b.Reason += "," + ReasonPreviousHash
		}
		return b, recomputed
	case l.Fields.PreviousHash != prev:
		return BrokenLink{ExpectedHash: prev, ActualHash: l.Fields.PreviousHash, Reason: ReasonPreviousHash}, recomputed
	}
	return BrokenLink{}, recomputed
}

// sealGone reports a sealed record that is no longer stored.
func (v *storedVerifier) sealGone(name, task string, s Seal) {
	v.r.BrokenLinks = append(v.r.BrokenLinks, BrokenLink{
		Position: s.Position, ExpectedHash: s.Hash, Chain: name, TaskID: task, Reason: ReasonRoot, SessionID: s.SessionID,
		Detail: "audit session " + s.SessionID + " sealed a record at this position into its finalized root; it is gone",
	})
}

// head compares the chain's end with its stored head.
func (v *storedVerifier) head(c *Chain, name, task string, headLen, lastPos int, lastHash string) {
	headHash := ""
	if c.Head != nil {
		headHash = c.Head.Hash
	}
	if c.Head == nil && lastPos == 0 || c.Head != nil && headLen == lastPos && headHash == lastHash {
		return
	}
	b := BrokenLink{
		Position: headLen, ExpectedHash: headHash, ActualHash: lastHash, Chain: name, TaskID: task, Reason: ReasonHead,
		ExpectedLength: &headLen, ActualLength: &lastPos,
	}
	switch {
	case c.Head == nil:
		b.Detail = "the store holds no head for this chain, yet it has records: the head was deleted"
	case headLen > lastPos:
		b.Detail = "the head says the chain has " + strconv.Itoa(headLen) + " records; it ends at position " + strconv.Itoa(lastPos) + ": the last records were deleted"
		b.Missing = headLen - lastPos
	case headLen < lastPos:
		b.Detail = "the head says the chain has " + strconv.Itoa(headLen) + " records; it holds records up to position " + strconv.Itoa(lastPos) + " that no append wrote"
	default:
		b.Detail = "the last record's hash is not the one the head recorded: it was rewritten"
	}
	v.r.BrokenLinks = append(v.r.BrokenLinks, b)
}

func span(from, to int) string {
	if from == to {
		return strconv.Itoa(from)
	}
	return strconv.Itoa(from) + "–" + strconv.Itoa(to)
}
