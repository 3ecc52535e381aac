package trail

import (
	"fmt"
	"testing"
)

// stored returns the chain as the store holds it: positions set, and the
// head it wrote with the last append.
func stored(t *testing.T, n int) Chain {
	links := buildChain(t, "T-1", ChainThought, n)
	for i := range links {
		links[i].Position = i + 1
	}
	return Chain{Name: ChainThought, TaskID: "T-1", Links: links, CheckHead: true,
		Head: &Head{Length: uint64(n), Hash: links[n-1].Hash}}
}

// rewrite recomputes every hash of links from index from on, as an attacker
// who knows the hash rule would after editing a record.
func rewrite(t *testing.T, links []Link, from int) {
	for i := from; i < len(links); i++ {
		if i > 0 {
			links[i].Fields.PreviousHash = links[i-1].Hash
		}
		h, err := HashRecord(links[i].Fields)
		if err != nil {
			t.Fatal(err)
		}
		links[i].Hash = h
	}
}

func seals(links []Link, session string) []Seal {
	out := make([]Seal, len(links))
	for i, l := range links {
		out[i] = Seal{Position: l.Position, Hash: l.Hash, SessionID: session}
	}
	return out
}

type want struct {
	reason   string
	position int
}

func summary(r Report) string {
	s := ""
	for _, b := range r.BrokenLinks {
		s += fmt.Sprintf("%s@%d ", b.Reason, b.Position)
	}
	return s
}

func TestVerifyStoredTampering(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		tamper   func(c *Chain)
		want     []want
		verified int
		total    int
		missing  int
	}{
		{name: "intact", tamper: func(c *Chain) {}, verified: 5, total: 5},
		{name: "intact and sealed", tamper: func(c *Chain) { c.Seals = seals(c.Links, "A-1") }, verified: 5, total: 5},
		{
			name:   "truncated, head kept",
			tamper: func(c *Chain) { c.Links = c.Links[:3] },
			want:   []want{{ReasonHead, 5}}, verified: 3, total: 5, missing: 2,
		},
		{
			name: "truncated, head moved back",
			tamper: func(c *Chain) {
				c.Links = c.Links[:3]
				c.Head = &Head{Length: 3, Hash: c.Links[2].Hash}
			},
			verified: 3, total: 3, // nothing in the chain or head can tell
		},
		{
			name: "truncated, head moved back, sealed",
			tamper: func(c *Chain) {
				c.Seals = seals(c.Links, "A-1")
				c.Links = c.Links[:3]
				c.Head = &Head{Length: 3, Hash: c.Links[2].Hash}
			},
			want: []want{{ReasonRoot, 4}, {ReasonRoot, 5}}, verified: 3, total: 5, missing: 2,
		},
		{
			name:   "deleted in the middle",
			tamper: func(c *Chain) { c.Links = append(c.Links[:2:2], c.Links[3:]...) },
			want:   []want{{ReasonMissing, 3}, {ReasonPreviousHash, 4}}, verified: 3, total: 5, missing: 1,
		},
		{
			name: "swapped",
			tamper: func(c *Chain) {
				c.Links[1], c.Links[2] = c.Links[2], c.Links[1]
				c.Links[1].Position, c.Links[2].Position = 2, 3
			},
			want: []want{{ReasonPreviousHash, 2}, {ReasonPreviousHash, 3}, {ReasonPreviousHash, 4}}, verified: 2, total: 5,
		},
		{
			name: "swapped last two",
			tamper: func(c *Chain) {
				c.Links[3], c.Links[4] = c.Links[4], c.Links[3]
				c.Links[3].Position, c.Links[4].Position = 4, 5
			},
			want: []want{{ReasonPreviousHash, 4}, {ReasonPreviousHash, 5}, {ReasonHead, 5}}, verified: 3, total: 5,
		},
		{
			name: "consistent rewrite, head kept",
			tamper: func(c *Chain) {
				c.Links[1].Fields.Content = "rewritten"
				rewrite(t, c.Links, 1)
			},
			want: []want{{ReasonHead, 5}}, verified: 4, total: 5,
		},
		{
			name: "consistent rewrite with the head",
			tamper: func(c *Chain) {
				c.Links[1].Fields.Content = "rewritten"
				rewrite(t, c.Links, 1)
				c.Head = &Head{Length: 5, Hash: c.Links[4].Hash}
			},
			verified: 5, total: 5, // only a seal or a signed checkpoint can tell
		},
		{
			name: "consistent rewrite with the head, sealed",
			tamper: func(c *Chain) {
				c.Seals = seals(c.Links, "A-1")
				c.Links[1].Fields.Content = "rewritten"
				rewrite(t, c.Links, 1)
				c.Head = &Head{Length: 5, Hash: c.Links[4].Hash}
			},
			want:     []want{{ReasonRoot, 2}, {ReasonRoot, 3}, {ReasonRoot, 4}, {ReasonRoot, 5}},
			verified: 1, total: 5,
		},
		{
			name:   "head deleted",
			tamper: func(c *Chain) { c.Head = nil },
			want:   []want{{ReasonHead, 0}}, verified: 0, total: 5,
		},
		{
			name: "record appended without the head",
			tamper: func(c *Chain) {
				extra := buildChain(t, "T-1", ChainThought, 6)[5]
				extra.Position, extra.Fields.PreviousHash = 6, c.Links[4].Hash
				extra.Hash, _ = HashRecord(extra.Fields)
				c.Links = append(c.Links, extra)
			},
			want: []want{{ReasonHead, 5}}, verified: 5, total: 6,
		},
		{
			name:   "forged huge head",
			tamper: func(c *Chain) { c.Head.Length = 1 << 62 },
			want:   []want{{ReasonHead, maxHeadLength}}, verified: 5, total: maxHeadLength, missing: maxHeadLength - 5,
		},
		{
			name:   "sealed before leaf hashes were kept",
			tamper: func(c *Chain) { c.Seals = []Seal{{Position: 6, SessionID: "A-1"}} },
			want:   []want{{ReasonRoot, 6}}, verified: 5, total: 6, missing: 1,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := stored(t, 5)
			c.tamper(&ch)
			r := VerifyStored([]Chain{ch}, WithTrace())
			if len(r.BrokenLinks) != len(c.want) {
				t.Fatalf("broken %s, want %v", summary(r), c.want)
			}
			for i, w := range c.want {
				if b := r.BrokenLinks[i]; b.Reason != w.reason || b.Position != w.position || b.Chain != ChainThought || b.TaskID != "T-1" {
					t.Fatalf("entry %d: %+v, want %v", i, b, w)
				}
			}
			if r.Verified != c.verified || r.Total != c.total || r.Missing != c.missing || r.ChainValid != (len(c.want) == 0) {
				t.Fatalf("verified %d total %d missing %d valid %v; want %d %d %d", r.Verified, r.Total, r.Missing, r.ChainValid, c.verified, c.total, c.missing)
			}
			if r.IntegrityScore != IntegrityScore(c.verified, c.total) {
				t.Fatalf("score %d", r.IntegrityScore)
			}
			if len(r.Trace) != len(ch.Links) {
				t.Fatalf("trace has %d entries for %d records", len(r.Trace), len(ch.Links))
			}
		})
	}
}

// What each entry names: expected vs stored.
func TestVerifyStoredEntriesNameTheDisagreement(t *testing.T) {
	t.Parallel()
	ch := stored(t, 5)
	headHash, last := ch.Head.Hash, ch.Links[2].Hash
	ch.Links = ch.Links[:3]
	r := VerifyStored([]Chain{ch})
	b := r.BrokenLinks[0]
	if b.ExpectedHash != headHash || b.ActualHash != last || *b.ExpectedLength != 5 || *b.ActualLength != 3 || b.Missing != 2 || b.Detail == "" {
		t.Fatalf("head entry %+v", b)
	}

	ch = stored(t, 5)
	sealed := seals(ch.Links, "A-7")
	ch.Seals = sealed
	ch.Links[3].Fields.Content = "x"
	rewrite(t, ch.Links, 3)
	ch.Head.Hash = ch.Links[4].Hash
	r = VerifyStored([]Chain{ch}, WithTrace())
	b = r.BrokenLinks[0]
	if b.Reason != ReasonRoot || b.Position != 4 || b.ExpectedHash != sealed[3].Hash || b.ActualHash != ch.Links[3].Hash || b.SessionID != "A-7" || b.RecordID != "Θ-4" {
		t.Fatalf("root entry %+v", b)
	}
	if r.Trace[3].Verdict != VerdictBroken || r.Trace[2].Verdict != VerdictOK {
		t.Fatalf("trace %+v", r.Trace)
	}

	// Positions after a gap are chain positions, not indexes.
	ch = stored(t, 6)
	ch.Links = append(ch.Links[:1:1], ch.Links[3:]...)
	ch.Links[1].Fields.Content = "tampered"
	r = VerifyStored([]Chain{ch}, WithTrace())
	if summary(r) != "missing_record@2 hash_mismatch,previous_hash_mismatch@4 " || r.BrokenLinks[0].Missing != 2 || r.Trace[1].Position != 4 {
		t.Fatalf("after a gap: %s %+v", summary(r), r.Trace)
	}
}

// A session-wide disagreement invalidates the report without a link to blame.
func TestAddBroken(t *testing.T) {
	t.Parallel()
	r := VerifyStored([]Chain{stored(t, 2)})
	r.AddBroken(BrokenLink{Reason: ReasonRoot, SessionID: "A-1"})
	if r.ChainValid || r.IntegrityScore != 100 || len(r.BrokenLinks) != 1 {
		t.Fatalf("%+v", r)
	}
}

// An empty chain with no head is intact; one whose head survives its
// records is truncated to nothing.
func TestVerifyStoredEmpty(t *testing.T) {
	t.Parallel()
	r := VerifyStored([]Chain{{Name: ChainEvent, TaskID: "T-2", CheckHead: true}})
	if !r.ChainValid || r.Total != 0 || r.IntegrityScore != 100 {
		t.Fatalf("%+v", r)
	}
	r = VerifyStored([]Chain{{Name: ChainEvent, TaskID: "T-2", CheckHead: true, Head: &Head{Length: 2, Hash: "ab"}}})
	if r.ChainValid || r.Total != 2 || r.Missing != 2 || r.IntegrityScore != 0 || summary(r) != "head_mismatch@2 " || r.BrokenLinks[0].Chain != ChainEvent || r.BrokenLinks[0].TaskID != "T-2" {
		t.Fatalf("%+v", r)
	}
}
