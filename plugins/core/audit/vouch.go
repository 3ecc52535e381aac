package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/internal/trail/tree"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// What vouches for a chain besides its own links: the head the store writes
// with every append, and the leaves finalized sessions sealed. Verification
// checks the links against both (trail.VerifyStored); this file reads them.

// A frozen record set is stored in BucketAuditFrozen as packed references in
// leaf order. Sessions finalized by this version also keep each sealed leaf
// (frozen.LeafHashes), so a record rewritten after the seal is named by its
// position; older sets hold the references only and are checked through
// their root.
const sealedRefSize = refSize + 32

func packSealed(refs []leafRef) []byte {
	packed := make([]byte, 0, len(refs)*sealedRefSize)
	for _, r := range refs {
		packed = r.pack(packed)
		packed = append(packed, r.hash[:]...)
	}
	return packed
}

// sealedRef is one reference of a frozen record set; hasHash is false for
// sets frozen before leaf hashes were kept.
type sealedRef struct {
	leafRef
	hasHash bool
}

// frozenRefs decodes a finalized session's frozen record set.
func frozenRefs(tx kv.Tx, sess *session) ([]sealedRef, error) {
	f := sess.Frozen
	size := refSize
	if f.LeafHashes {
		size = sealedRefSize
	}
	packed := tx.Bucket([]byte(store.BucketAuditFrozen)).Get(store.U64(sess.num))
	if len(packed)%size != 0 || uint64(len(packed)/size) != f.LeafCount {
		return nil, fmt.Errorf("the frozen record set of %s is damaged: %d bytes for %d leaves", sess.SessionID, len(packed), f.LeafCount)
	}
	out := make([]sealedRef, 0, f.LeafCount)
	for off := 0; off < len(packed); off += size {
		r := sealedRef{leafRef: leafRef{
			task:  binary.BigEndian.Uint64(packed[off:]),
			chain: packed[off+8],
			pos:   int(min(binary.BigEndian.Uint64(packed[off+9:]), 1<<53)),
		}}
		if f.LeafHashes {
			copy(r.hash[:], packed[off+refSize:off+sealedRefSize])
			r.hasHash = true
		}
		out = append(out, r)
	}
	return out, nil
}

// chainHead reads a chain's head; nil when the store holds none (or one that
// does not decode, which verification reports the same way).
func chainHead(tx kv.Tx, task uint64, chain byte) *trail.Head {
	h := tx.Bucket([]byte(store.BucketChainLinks)).Get(headKey(task, chain))
	if len(h) != 40 {
		return nil
	}
	return &trail.Head{Length: binary.BigEndian.Uint64(h), Hash: hex.EncodeToString(h[8:40])}
}

type chainKey struct {
	task  uint64
	chain byte
}

// vouchers are the seals on the chains in scope and the session-wide
// disagreements found while collecting them.
type vouchers struct {
	seals  map[chainKey][]trail.Seal
	broken []trail.BrokenLink
}

// collectVouchers reads every finalized session that sealed a record of a
// task in scope: each sealed record of those tasks becomes a seal on its
// chain, and each session's root is checked as a whole — against its sealed
// leaves, or, for sets frozen before leaf hashes were kept, against the
// records stored now.
func collectVouchers(tx kv.Tx, scope []uint64, chains []byte) vouchers {
	v := vouchers{seals: map[chainKey][]trail.Seal{}}
	inScope := make(map[uint64]bool, len(scope))
	for _, n := range scope {
		inScope[n] = true
	}
	wanted := func(c byte) bool { return bytes.IndexByte(chains, c) >= 0 }
	c := tx.Bucket([]byte(store.BucketAuditSessions)).Cursor()
	for k, raw := c.First(); k != nil; k, raw = c.Next() {
		var sess session
		if err := json.Unmarshal(raw, &sess); len(k) != 8 || err != nil {
			// It may have sealed these records: say so rather than vouch
			// without it, and rather than refuse to verify at all.
			v.broken = append(v.broken, trail.BrokenLink{
				Reason: trail.ReasonRoot,
				Detail: fmt.Sprintf("audit session record %x does not decode (%v): whatever it sealed cannot be checked; the store was damaged or edited", k, err),
			})
			continue
		}
		if sess.Frozen == nil || !sealsScope(sess.Frozen, inScope) {
			continue
		}
		sess.num = binary.BigEndian.Uint64(k)
		refs, err := frozenRefs(tx, &sess)
		if err != nil {
			v.broken = append(v.broken, sessionBroken(&sess, "", err.Error()))
			continue
		}
		for _, r := range refs {
			if !inScope[r.task] || !wanted(r.chain) {
				continue
			}
			s := trail.Seal{Position: r.pos, SessionID: sess.SessionID}
			if r.hasHash {
				s.Hash = hex.EncodeToString(r.hash[:])
			}
			key := chainKey{r.task, r.chain}
			v.seals[key] = append(v.seals[key], s)
		}
		if b, ok := checkSessionRoot(tx, &sess, refs); !ok {
			v.broken = append(v.broken, b)
		}
	}
	for _, s := range v.seals {
		sort.SliceStable(s, func(i, j int) bool { return s[i].Position < s[j].Position })
	}
	return v
}

func sealsScope(f *frozen, inScope map[uint64]bool) bool {
	for _, id := range f.TaskIDs {
		if n, ok := parseTaskNum(id); ok && inScope[n] {
			return true
		}
	}
	return false
}

// checkSessionRoot recomputes a finalized session's root: from its sealed
// leaves when it kept them (a mismatch means the frozen set itself was
// edited), else from the records stored now (a mismatch means a sealed record
// changed; which one cannot be told). Records that are gone are reported per
// record by the chain checks, so a set with gaps is not recomputed here.
func checkSessionRoot(tx kv.Tx, sess *session, refs []sealedRef) (trail.BrokenLink, bool) {
	leaves := make([][]byte, len(refs))
	for i := range refs {
		r := &refs[i]
		if !r.hasHash {
			l, ok, err := getLink(tx, r.task, r.chain, r.pos)
			if err != nil || !ok {
				return trail.BrokenLink{}, true
			}
			r.hash = l.hash
		}
		leaves[i] = r.hash[:]
	}
	got := hex.EncodeToString(tree.Root(leaves))
	if got == sess.Frozen.Root {
		return trail.BrokenLink{}, true
	}
	detail := "the leaves sealed by audit session " + sess.SessionID + " no longer give its finalized root: the frozen record set or its root was edited"
	if !sess.Frozen.LeafHashes {
		detail = "the records audit session " + sess.SessionID + " sealed no longer give its finalized root: at least one was rewritten (the session predates per-record seals, so the records cannot be named; compare with an exported proof)"
	}
	b := sessionBroken(sess, got, detail)
	return b, false
}

func sessionBroken(sess *session, actualRoot, detail string) trail.BrokenLink {
	return trail.BrokenLink{
		Reason: trail.ReasonRoot, SessionID: sess.SessionID, TaskID: sess.TaskID,
		ExpectedHash: sess.Frozen.Root, ActualHash: actualRoot, Detail: detail,
	}
}

// verifyScope verifies the given chains of every task in scope against
// their links, heads and seals.
func verifyScope(tx kv.Tx, scope []uint64, chains []byte, opts ...trail.VerifyOption) (trail.Report, error) {
	v := collectVouchers(tx, scope, chains)
	in := make([]trail.Chain, 0, len(chains)*len(scope))
	for _, n := range scope {
		for _, c := range chains {
			ch := trail.Chain{
				Name: chainName(c), TaskID: taskID(n), CheckHead: true, Head: chainHead(tx, n, c),
				Seals: v.seals[chainKey{n, c}],
			}
			ch.Links = make([]trail.Link, 0, chainLen(tx, n, c))
			if err := eachLink(tx, n, c, true, func(l *link) error {
				ch.Links = append(ch.Links, l.trailLink())
				return nil
			}); err != nil {
				return trail.Report{}, err
			}
			in = append(in, ch)
		}
	}
	r := trail.VerifyStored(in, opts...)
	for _, b := range v.broken {
		r.AddBroken(b)
	}
	return r, nil
}
