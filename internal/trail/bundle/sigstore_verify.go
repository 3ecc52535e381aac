package bundle

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"

	"github.com/cairn-mcp/cairn/internal/trail/tree"
)

// Parts of a Sigstore bundle a Problem can name, besides PartFormat,
// PartKey, PartSignature, PartRecord, PartSession, PartLink and
// PartCheckpoint.
const (
	PartEnvelope  = "envelope"  // the DSSE envelope's payload type or signature count
	PartStatement = "statement" // the payload is not cairn's in-toto statement
	PartSubject   = "subject"   // a subject's digest disagrees with the predicate
)

// VerifySigstore checks a Sigstore bundle offline against verifierKey (the
// note verifier key `cairn audit pubkey` prints), as sigstore-go would with
// the same key, and then what only cairn knows: the statement's subjects are
// the root of the predicate's leaves and each chain's last leaf, each
// chain's positions run from 1 without a gap, and the C2SP checkpoint in the
// predicate is signed by the same key over that root, that leaf count and
// that session (docs/decisions.md D38). It returns the statement, and nil or
// a *VerifyError naming each thing that broke.
func VerifySigstore(s *SigstoreBundle, verifierKey string) (*Statement, error) {
	var c collector
	pub, err := PublicKey(verifierKey)
	if err != nil {
		c.addf(PartKey, -1, nil, "%v", err)
		return nil, c.err()
	}
	if s.VerificationMaterial.PublicKey == nil {
		c.addf(PartKey, -1, nil, "verificationMaterial has no publicKey")
	} else if got, want := s.VerificationMaterial.PublicKey.Hint, KeyHint(pub); got != want {
		c.addf(PartKey, -1, nil, "bundle names key %q, the verifier key is %q", got, want)
	}
	env := s.DSSEEnvelope
	if env == nil {
		c.addf(PartFormat, -1, nil, "bundle has no dsseEnvelope")
		return nil, c.err()
	}
	if env.PayloadType != PayloadType {
		c.addf(PartEnvelope, -1, nil, "payloadType %q, want %q", env.PayloadType, PayloadType)
	}
	if len(env.Signatures) != 1 {
		c.addf(PartEnvelope, -1, nil, "%d signatures, a Sigstore bundle holds exactly 1", len(env.Signatures))
	} else if !ed25519.Verify(pub, PAE(env.PayloadType, env.Payload), env.Signatures[0].Sig) {
		c.addf(PartSignature, -1, nil, "DSSE signature does not verify with the key (payload or signature altered, or another key)")
	}
	var st Statement
	if err := json.Unmarshal(env.Payload, &st); err != nil {
		c.addf(PartStatement, -1, nil, "payload is not an in-toto statement: %v", err)
		return nil, c.err()
	}
	if st.Type != StatementType {
		c.addf(PartStatement, -1, nil, "_type %q, want %q", st.Type, StatementType)
	}
	if st.PredicateType != PredicateType {
		c.addf(PartStatement, -1, nil, "predicateType %q, want %q", st.PredicateType, PredicateType)
	}
	if st.Predicate == nil {
		c.addf(PartStatement, -1, nil, "statement has no predicate")
		return &st, c.err()
	}
	checkPredicate(&c, &st, verifierKey)
	return &st, c.err()
}

// checkPredicate recomputes the subjects from the predicate's leaves and
// checks the checkpoint over them.
func checkPredicate(c *collector, st *Statement, verifierKey string) {
	p := st.Predicate
	sess := p.Session.session()
	if uint64(len(p.Records)) != p.LeafCount {
		c.addf(PartFormat, -1, nil, "%d records, leaf count %d", len(p.Records), p.LeafCount)
	}
	inScope := map[string]bool{}
	for _, id := range sess.TaskIDs {
		inScope[id] = true
	}
	type chain struct{ task, name string }
	var order []chain
	last := map[chain]*PredicateRecord{}
	count := map[chain]int{}
	leaves := make([][]byte, 0, len(p.Records))
	leavesOK := true
	for i := range p.Records {
		r := &p.Records[i]
		rec := &Record{ID: r.ID, Position: r.Position}
		if r.LeafIndex != uint64(i) {
			c.addf(PartFormat, i, rec, "leafIndex %d at index %d", r.LeafIndex, i)
		}
		leaf, ok := decodeHash(r.Digest["sha256"])
		if !ok {
			c.addf(PartRecord, i, rec, "digest.sha256 %q is not 64 lowercase hex digits", r.Digest["sha256"])
			leavesOK = false
		}
		leaves = append(leaves, leaf)
		if len(inScope) > 0 && !inScope[r.TaskID] {
			c.addf(PartSession, i, rec, "task %q is not one of the session's tasks", r.TaskID)
		}
		k := chain{r.TaskID, r.Chain}
		if last[k] == nil {
			order = append(order, k)
		}
		last[k] = r
		count[k]++
		if r.Position != count[k] {
			c.addf(PartLink, i, rec, "%s chain of task %s: position %d where %d was expected (missing or reordered record)", r.Chain, r.TaskID, r.Position, count[k])
		}
	}
	var root []byte
	rootHex := ""
	if leavesOK && len(leaves) > 0 {
		root = tree.Root(leaves)
		rootHex = hex.EncodeToString(root)
	}
	want := []Subject{{Name: RootSubject(sess.SessionID), Digest: map[string]string{"sha256": rootHex}}}
	for _, k := range order {
		want = append(want, Subject{Name: HeadSubject(k.task, k.name), Digest: map[string]string{"sha256": last[k].Digest["sha256"]}})
	}
	checkSubjects(c, st.Subject, want)
	var cp collector
	recomputed := &Bundle{Session: sess, TreeSize: p.LeafCount, Root: rootHex, Checkpoint: p.Checkpoint}
	checkCheckpoint(&cp, recomputed, verifierKey, root, root != nil)
	for _, pr := range cp.e.Problems {
		c.add(pr)
	}
}

// checkSubjects compares the statement's subjects with those the predicate
// implies, by name: each must be there with the same sha256, and no other.
func checkSubjects(c *collector, got, want []Subject) {
	byName := make(map[string]Subject, len(got))
	for _, s := range got {
		if _, dup := byName[s.Name]; dup {
			c.addf(PartSubject, -1, nil, "subject %q appears twice", s.Name)
		}
		byName[s.Name] = s
	}
	implied := make(map[string]bool, len(want))
	for _, w := range want {
		implied[w.Name] = true
		g, ok := byName[w.Name]
		switch {
		case !ok:
			c.addf(PartSubject, -1, nil, "no subject %q", w.Name)
		case g.Digest["sha256"] != w.Digest["sha256"]:
			c.addf(PartSubject, -1, nil, "subject %q has sha256 %s, the predicate gives %s", w.Name, g.Digest["sha256"], w.Digest["sha256"])
		}
	}
	for _, s := range got {
		if !implied[s.Name] {
			c.addf(PartSubject, -1, nil, "subject %q is not one the predicate implies", s.Name)
		}
	}
}
