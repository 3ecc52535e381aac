package bundle

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/internal/trail/tree"
)

// Parts of a bundle a Problem can name.
const (
	PartFormat     = "format"     // layout, version, counts
	PartKey        = "key"        // the verifier key given to VerifyBundle
	PartSession    = "session"    // a record outside the session's tasks
	PartRecord     = "record"     // a record's hash does not recompute
	PartLink       = "link"       // a chain link (position, previous_hash) is broken
	PartLeaf       = "leaf"       // a leaf differs from its record's hash
	PartRoot       = "root"       // the root does not recompute from the leaves
	PartProof      = "proof"      // an inclusion proof fails
	PartCheckpoint = "checkpoint" // the checkpoint body is malformed or disagrees with the bundle
	PartSignature  = "signature"  // the checkpoint is not validly signed by the key
)

// Problem is one thing that broke. Index is the record/leaf/proof index
// (0-based, leaf order) or -1; Position the record's 1-indexed chain position
// or 0.
type Problem struct {
	Part     string `json:"part"`
	Index    int    `json:"index"`
	RecordID string `json:"record_id,omitempty"`
	Position int    `json:"position,omitempty"`
	Detail   string `json:"detail"`
}

// String renders the problem as "part index (record id, position): detail".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Part)
	if p.Index >= 0 {
		fmt.Fprintf(&b, " %d", p.Index)
	}
	if p.RecordID != "" || p.Position > 0 {
		b.WriteString(" (")
		if p.RecordID != "" {
			b.WriteString("record " + p.RecordID)
		}
		if p.Position > 0 {
			if p.RecordID != "" {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "position %d", p.Position)
		}
		b.WriteString(")")
	}
	b.WriteString(": " + p.Detail)
	return b.String()
}

// maxProblems bounds a report: a bundle broken everywhere says so in its first
// problems, and a hostile one cannot make the error huge.
const maxProblems = 50

// VerifyError lists what broke, in check order. Omitted counts problems
// beyond the first maxProblems.
type VerifyError struct {
	Problems []Problem
	Omitted  int
}

// Error names every problem found.
func (e *VerifyError) Error() string {
	var b strings.Builder
	b.WriteString("proof bundle does not verify: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "; and %d more", e.Omitted)
	}
	return b.String()
}

// Has reports whether a problem names part.
func (e *VerifyError) Has(part string) bool {
	for _, p := range e.Problems {
		if p.Part == part {
			return true
		}
	}
	return false
}

type collector struct{ e VerifyError }

func (c *collector) add(p Problem) {
	if len(c.e.Problems) >= maxProblems {
		c.e.Omitted++
		return
	}
	c.e.Problems = append(c.e.Problems, p)
}

func (c *collector) addf(part string, index int, rec *Record, format string, args ...any) {
	p := Problem{Part: part, Index: index, Detail: fmt.Sprintf(format, args...)}
	if rec != nil {
		p.RecordID, p.Position = rec.ID, rec.Position
	}
	c.add(p)
}

func (c *collector) err() error {
	if len(c.e.Problems) == 0 && c.e.Omitted == 0 {
		return nil
	}
	e := c.e
	return &e
}

// maxProofLen bounds an audit path: no tree of up to 2^64 leaves needs more.
const maxProofLen = 64

// checkRecords recomputes every record's hash and every chain link.
func checkRecords(c *collector, sess *Session, records []Record) {
	inScope := make(map[string]bool, len(sess.TaskIDs))
	for _, id := range sess.TaskIDs {
		inScope[id] = true
	}
	type chainState struct {
		n    int
		last string
	}
	chains := map[[2]string]*chainState{}
	for i := range records {
		r := &records[i]
		if !isHash(r.Hash) {
			c.addf(PartRecord, i, r, "stored hash %q is not 64 lowercase hex digits", r.Hash)
		} else if got, err := trail.HashRecord(r.Fields()); err != nil {
			c.addf(PartRecord, i, r, "cannot hash: %v", err)
		} else if got != r.Hash {
			c.addf(PartRecord, i, r, "stored hash %s, recomputed %s: the record was altered", r.Hash, got)
		}
		if len(inScope) > 0 && !inScope[r.TaskID] {
			c.addf(PartSession, i, r, "task %q is not one of the session's tasks", r.TaskID)
		}
		if r.Chain == "" {
			c.addf(PartLink, i, r, "record names no chain")
		}
		key := [2]string{r.TaskID, r.Chain}
		st := chains[key]
		if st == nil {
			st = &chainState{}
			chains[key] = st
		}
		st.n++
		if r.Position != st.n {
			c.addf(PartLink, i, r, "%s chain of task %s: position %d where %d was expected (missing or reordered record)", r.Chain, r.TaskID, r.Position, st.n)
		}
		prev := ""
		if r.PreviousHash != nil {
			prev = *r.PreviousHash
			if prev == "" {
				// JSON.stringify would hash "" and the Go side null: refuse
				// the ambiguity rather than pick one.
				c.addf(PartRecord, i, r, `previous_hash is "", which is not a hash; a first link has null`)
			}
		}
		if prev != st.last {
			c.addf(PartLink, i, r, "%s chain of task %s: previous_hash %s, but the prior link's hash is %s", r.Chain, r.TaskID, orNull(prev), orNull(st.last))
		}
		st.last = r.Hash
	}
}

// VerifyBundle checks a bundle offline against verifierKey (the note verifier
// key `cairn audit pubkey` prints): every record's hash recomputed, every chain
// link, every leaf against its record, the root against the leaves, every
// inclusion proof against the signed root, and the checkpoint's signature,
// origin, size, root and session digest (see SessionDigest). It returns nil or
// a *VerifyError naming each thing that broke.
func VerifyBundle(b *Bundle, verifierKey string) error {
	var c collector
	if b == nil {
		c.addf(PartFormat, -1, nil, "no bundle")
		return c.err()
	}
	if b.Format != Format {
		c.addf(PartFormat, -1, nil, "format %q, want %q", b.Format, Format)
	}
	n := len(b.Records)
	if uint64(n) != b.TreeSize || len(b.Leaves) != n || len(b.Proofs) != n {
		c.addf(PartFormat, -1, nil, "%d records, %d leaves, %d proofs and tree size %d must all agree", n, len(b.Leaves), len(b.Proofs), b.TreeSize)
	}

	checkRecords(&c, &b.Session, b.Records)

	// Leaves must be the stored record hashes, in order.
	leaves := make([][]byte, 0, len(b.Leaves))
	leavesOK := true
	for i, l := range b.Leaves {
		raw, ok := decodeHash(l)
		if !ok {
			c.addf(PartLeaf, i, recAt(b, i), "leaf %q is not 64 lowercase hex digits", l)
			leavesOK = false
			continue
		}
		leaves = append(leaves, raw)
		if i < n && l != b.Records[i].Hash {
			c.addf(PartLeaf, i, recAt(b, i), "leaf %s differs from the record's hash %s", l, b.Records[i].Hash)
		}
	}

	root, rootOK := decodeHash(b.Root)
	if !rootOK {
		c.addf(PartRoot, -1, nil, "root %q is not 64 lowercase hex digits", b.Root)
	} else if leavesOK {
		if got := tree.Root(leaves); !bytes.Equal(got, root) {
			c.addf(PartRoot, -1, nil, "root %s, but the %d leaves give %x", b.Root, len(leaves), got)
		}
	}
	if want := tree.TreeDepth(b.TreeSize); b.TreeDepth != want {
		c.addf(PartFormat, -1, nil, "tree depth %d, want %d for %d leaves", b.TreeDepth, want, b.TreeSize)
	}

	// The checkpoint is checked before the proofs but reported after them.
	var cp collector
	signedRoot, signedSize := checkCheckpoint(&cp, b, verifierKey, root, rootOK)
	// Each proof ties its record's stored hash to the signed root (the
	// bundle's root when the checkpoint cannot be trusted), so one record,
	// its proof and the checkpoint can be checked on their own, and a forged
	// root field is named once instead of failing every proof.
	proofRoot, proofSize := root, b.TreeSize
	if signedRoot != nil {
		proofRoot, proofSize, rootOK = signedRoot, signedSize, true
	}
	for i := range b.Proofs {
		p := &b.Proofs[i]
		rec := recAt(b, i)
		if p.LeafIndex != uint64(i) {
			c.addf(PartProof, i, rec, "proof is for leaf %d, want %d", p.LeafIndex, i)
			continue
		}
		if rec == nil || !rootOK {
			continue
		}
		leaf, ok := decodeHash(rec.Hash)
		if !ok {
			continue // already reported as a record problem
		}
		if len(p.Hashes) > maxProofLen {
			c.addf(PartProof, i, rec, "proof has %d hashes, more than any tree needs", len(p.Hashes))
			continue
		}
		path := make([][]byte, len(p.Hashes))
		bad := false
		for j, h := range p.Hashes {
			if path[j], ok = decodeHash(h); !ok {
				c.addf(PartProof, i, rec, "proof hash %d %q is not 64 lowercase hex digits", j, h)
				bad = true
				break
			}
		}
		if bad {
			continue
		}
		if err := tree.VerifyInclusion(leaf, uint64(i), proofSize, path, proofRoot); err != nil {
			c.addf(PartProof, i, rec, "inclusion proof fails: %v", err)
		}
	}

	for _, p := range cp.e.Problems {
		c.add(p)
	}
	return c.err()
}

// checkCheckpoint opens the signed note and compares its body with the bundle.
// It returns the signed root and size when the signature is valid and the
// body parses.
func checkCheckpoint(c *collector, b *Bundle, verifierKey string, root []byte, rootOK bool) ([]byte, uint64) {
	v, err := note.NewVerifier(verifierKey)
	if err != nil {
		c.addf(PartKey, -1, nil, "verifier key %q is not a note verifier key: %v", verifierKey, err)
		return nil, 0
	}
	n, err := note.Open([]byte(b.Checkpoint), note.VerifierList(v))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		var invalid *note.InvalidSignatureError
		switch {
		case errors.As(err, &unverified):
			c.addf(PartSignature, -1, nil, "checkpoint carries no signature by key %s+%08x (wrong key, or signature altered)", v.Name(), v.KeyHash())
		case errors.As(err, &invalid):
			c.addf(PartSignature, -1, nil, "checkpoint signature by %s+%08x is invalid (checkpoint or signature altered)", invalid.Name, invalid.Hash)
		default:
			c.addf(PartCheckpoint, -1, nil, "checkpoint is not a signed note: %v", err)
		}
		return nil, 0
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		c.addf(PartCheckpoint, -1, nil, "checkpoint body has %d lines, want origin, size and root", len(lines)-1)
		return nil, 0
	}
	if want := Origin(v.Name(), b.Session.SessionID); lines[0] != want {
		c.addf(PartCheckpoint, -1, nil, "checkpoint origin %q, want %q: it belongs to another session or key", lines[0], want)
	}
	size, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil || strconv.FormatUint(size, 10) != lines[1] {
		c.addf(PartCheckpoint, -1, nil, "checkpoint size %q is not a decimal number", lines[1])
		return nil, 0
	} else if size != b.TreeSize {
		c.addf(PartCheckpoint, -1, nil, "checkpoint signs tree size %d, bundle says %d", size, b.TreeSize)
	}
	signed, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(signed) != tree.HashSize {
		c.addf(PartCheckpoint, -1, nil, "checkpoint root %q is not a base64 SHA-256 hash", lines[2])
		return nil, 0
	}
	if rootOK && !bytes.Equal(signed, root) {
		c.addf(PartCheckpoint, -1, nil, "checkpoint signs root %x, bundle root is %s", signed, b.Root)
	}
	ext, _ := strings.CutSuffix(lines[3], "\n")
	gotDigest, found := "", false
	for _, l := range strings.Split(ext, "\n") {
		if d, ok := strings.CutPrefix(l, sessionExtension); ok {
			gotDigest, found = d, true
		}
	}
	wantDigest, err := SessionDigest(b.Session)
	switch {
	case !found:
		c.addf(PartCheckpoint, -1, nil, "checkpoint has no %q line binding the session metadata", strings.TrimSpace(sessionExtension))
	case err != nil:
		c.addf(PartSession, -1, nil, "session metadata cannot be serialized: %v", err)
	case gotDigest != wantDigest:
		c.addf(PartSession, -1, nil, "session metadata (task ids, scope, times) differs from what the checkpoint signs")
	}
	return signed, size
}

func recAt(b *Bundle, i int) *Record {
	if i < len(b.Records) {
		return &b.Records[i]
	}
	return nil
}

func isHash(s string) bool {
	if len(s) != 2*tree.HashSize {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func decodeHash(s string) ([]byte, bool) {
	if !isHash(s) {
		return nil, false
	}
	b, err := hex.DecodeString(s)
	return b, err == nil
}

func orNull(h string) string {
	if h == "" {
		return "null"
	}
	return h
}
