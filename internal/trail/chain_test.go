package trail

import (
	"fmt"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

func assertInvalid(t *testing.T, err error, field string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("error %v is not an *errs.Error", err)
	}
	if e.Status != 400 || e.Code != errs.InvalidInput {
		t.Fatalf("got %d %s, want 400 %s", e.Status, e.Code, errs.InvalidInput)
	}
	if field != "" && e.Details["field"] != field {
		t.Fatalf("field %v, want %s", e.Details["field"], field)
	}
}

// buildChain makes a valid chain of n records the way the store will.
func buildChain(t testing.TB, task, chain string, n int) []Link {
	t.Helper()
	links := make([]Link, n)
	prev := ""
	for i := range links {
		f := Fields{TaskID: task, Type: "decision", Content: fmt.Sprintf("thought %d <&> \u2028", i+1),
			PreviousHash: prev, RecordedAt: fmt.Sprintf("2026-11-22T08:40:%02d.123Z", i%60), RecordedBy: "agent"}
		h, err := HashRecord(f)
		if err != nil {
			t.Fatal(err)
		}
		links[i] = Link{Chain: chain, RecordID: fmt.Sprintf("Θ-%d", i+1), Hash: h, Fields: f}
		prev = h
	}
	return links
}

func TestVerifyChainIntact(t *testing.T) {
	t.Parallel()
	r := VerifyChain(nil)
	if r.Total != 0 || r.IntegrityScore != 100 || !r.ChainValid || r.BrokenLinks == nil {
		t.Fatalf("empty chain: %+v", r)
	}
	links := buildChain(t, "T-1", ChainThought, 10)
	r = VerifyChain(links, WithTrace())
	if r.Total != 10 || r.Verified != 10 || r.IntegrityScore != 100 || !r.ChainValid || len(r.BrokenLinks) != 0 {
		t.Fatalf("intact chain: %+v", r)
	}
	if len(r.Trace) != 10 || r.Trace[3].Position != 4 || r.Trace[3].Verdict != VerdictOK ||
		r.Trace[3].StoredHash != r.Trace[3].RecomputedHash || r.Trace[3].RecordID != "Θ-4" {
		t.Fatalf("trace: %+v", r.Trace)
	}
	if links[0].Fields.PreviousHash != "" {
		t.Fatal("first link must have null previous_hash")
	}
}

func TestVerifyChainTamperedContent(t *testing.T) {
	t.Parallel()
	links := buildChain(t, "T-1", ChainThought, 8)
	links[2].Fields.Content = "rewritten history"
	want, _ := HashRecord(links[2].Fields)
	r := VerifyChain(links, WithTrace())
	if len(r.BrokenLinks) != 1 {
		t.Fatalf("broken links %+v, want exactly position 3", r.BrokenLinks)
	}
	b := r.BrokenLinks[0]
	if b.Position != 3 || b.ExpectedHash != want || b.ActualHash != links[2].Hash || b.Reason != ReasonHash || b.RecordID != "Θ-3" {
		t.Fatalf("broken link %+v", b)
	}
	if r.IntegrityScore != 88 || r.ChainValid || r.Verified != 7 { // round(100*7/8) = round(87.5) = 88
		t.Fatalf("report %+v", r)
	}
	if r.Trace[2].Verdict != VerdictBroken || r.Trace[2].RecomputedHash != want {
		t.Fatalf("trace %+v", r.Trace[2])
	}
}

func TestVerifyChainTamperedPreviousHash(t *testing.T) {
	t.Parallel()
	links := buildChain(t, "T-1", ChainEvent, 6)
	// Relink record 5 to record 3, and rehash it so only the link is wrong.
	links[4].Fields.PreviousHash = links[2].Hash
	links[4].Hash, _ = HashRecord(links[4].Fields)
	// Record 6 still points at the old hash of record 5.
	r := VerifyChain(links)
	if len(r.BrokenLinks) != 2 {
		t.Fatalf("broken links %+v, want positions 5 and 6", r.BrokenLinks)
	}
	b5, b6 := r.BrokenLinks[0], r.BrokenLinks[1]
	if b5.Position != 5 || b5.Reason != ReasonPreviousHash || b5.ExpectedHash != links[3].Hash || b5.ActualHash != links[2].Hash {
		t.Fatalf("position 5: %+v", b5)
	}
	if b6.Position != 6 || b6.Reason != ReasonPreviousHash || b6.ExpectedHash != links[4].Hash {
		t.Fatalf("position 6: %+v", b6)
	}
	if r.IntegrityScore != 67 || r.IntegrityScore >= 100 {
		t.Fatalf("score %d", r.IntegrityScore)
	}

	// A first link that claims a predecessor is broken; its successor still
	// points at its stored hash and is not.
	links = buildChain(t, "T-1", ChainEvent, 2)
	links[0].Fields.PreviousHash = links[1].Hash
	r = VerifyChain(links)
	if len(r.BrokenLinks) != 1 || r.BrokenLinks[0].Reason != ReasonHash+","+ReasonPreviousHash || r.BrokenLinks[0].Position != 1 {
		t.Fatalf("%+v", r.BrokenLinks)
	}
}

func TestVerifyChainsAggregates(t *testing.T) {
	t.Parallel()
	a := buildChain(t, "T-1", ChainThought, 3)
	b := buildChain(t, "T-2", ChainEvent, 4)
	b[1].Hash = a[0].Hash
	r := VerifyChains([][]Link{a, b}, WithTrace())
	if r.Total != 7 || len(r.Trace) != 7 {
		t.Fatalf("%+v", r)
	}
	// Record 2 of T-2's event chain has a wrong stored hash, and record 3
	// points at the hash record 2 should have.
	if len(r.BrokenLinks) != 2 || r.BrokenLinks[0].TaskID != "T-2" || r.BrokenLinks[0].Chain != ChainEvent ||
		r.BrokenLinks[0].Position != 2 || r.BrokenLinks[1].Position != 3 {
		t.Fatalf("%+v", r.BrokenLinks)
	}
	if r.IntegrityScore != 71 {
		t.Fatalf("score %d", r.IntegrityScore)
	}
}

func TestUnhashableLink(t *testing.T) {
	t.Parallel()
	links := buildChain(t, "T-1", ChainThought, 2)
	links[1].Fields.Content = "\xff"
	r := VerifyChain(links)
	if len(r.BrokenLinks) != 1 || r.BrokenLinks[0].Reason != ReasonUnhashable {
		t.Fatalf("%+v", r.BrokenLinks)
	}
}

func BenchmarkVerifyChain1M(b *testing.B) {
	links := buildChain(b, "T-1", ChainThought, 1_000_000)
	b.ResetTimer()
	for b.Loop() {
		if r := VerifyChain(links); !r.ChainValid {
			b.Fatal("chain broken")
		}
	}
}
