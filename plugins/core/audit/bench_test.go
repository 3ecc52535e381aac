package audit

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// bulkThoughts appends n thought records to task id in large transactions:
// setting up a million-record chain one durable commit at a time would
// measure the disk, not the verifier.
func bulkThoughts(b *testing.B, e *env, id string, n int) {
	b.Helper()
	num, _ := tasks.ParseTaskID(id)
	const perTx = 50_000
	for done := 0; done < n; {
		err := e.st.Update(func(tx kv.Tx) error {
			for i := 0; i < perTx && done < n; i, done = i+1, done+1 {
				body := linkBody{Type: "reflection", Content: fmt.Sprintf("record %d: a sentence of about the length agents write", done), RecordedAt: "2026-11-22T08:40:12.123Z", RecordedBy: "bench"}
				if _, err := appendLink(tx, num, chainThought, body, func(pos int) (string, error) { return fmt.Sprintf("Θ-%d", pos), nil }); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyStored1M is audit_verify_chain's work over 1,000,000 stored
// records: read every link from bbolt, decode it, recompute every hash and
// link.
func BenchmarkVerifyStored1M(b *testing.B) {
	e := newEnv(b)
	id := e.task("")
	bulkThoughts(b, e, id, 1_000_000)
	b.ResetTimer()
	for b.Loop() {
		r, err := e.audit.Verify(VerifyInput{TaskID: &id})
		if err != nil || !r.ChainValid || r.TotalRecords != 1_000_001 {
			b.Fatalf("%+v %v", r.ChainValid, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/verify")
}

// BenchmarkVerifySealed1M is BenchmarkVerifyStored1M on a chain that a
// finalized session sealed: every record is also checked against its sealed
// leaf, and the session's root recomputed from the leaves.
func BenchmarkVerifySealed1M(b *testing.B) {
	e := newEnv(b)
	id := e.task("")
	bulkThoughts(b, e, id, 1_000_000)
	sess, err := e.audit.StartSession(StartInput{TaskID: id, AuditorID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.audit.Finalize(FinalizeInput{SessionID: sess.SessionID}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := e.audit.Verify(VerifyInput{TaskID: &id})
		if err != nil || !r.ChainValid || r.TotalRecords != 1_000_001 {
			b.Fatalf("%+v %v", r.ChainValid, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/verify")
}

// BenchmarkMerkleRootStored1M is merkle_root on an open session over
// 1,000,000 stored records: collect the leaves in recorded order, then the
// D12 root.
func BenchmarkMerkleRootStored1M(b *testing.B) {
	e := newEnv(b)
	id := e.task("")
	bulkThoughts(b, e, id, 1_000_000)
	sess, err := e.audit.StartSession(StartInput{TaskID: id, AuditorID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if r, err := e.audit.Root(RootInput{SessionID: sess.SessionID}); err != nil || r.LeafCount != 1_000_001 {
			b.Fatalf("%+v %v", r, err)
		}
	}
}

// BenchmarkThoughtRecord measures thought_record throughput with durable
// commits (one fsync per commit) from 1 and from 8 concurrent clients, each
// on its own task; b.N records in all, beside the floor (a bare one-key
// bbolt commit) measured before and after in the same run.
func BenchmarkThoughtRecord(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			e := newEnv(b)
			ids := make([]string, clients)
			for i := range ids {
				ids[i] = e.task("")
			}
			floorBefore := benchFloor(b)
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N / clients
			for c := 0; c < clients; c++ {
				n := per
				if c == 0 {
					n += b.N % clients
				}
				wg.Add(1)
				go func(id string, n int) {
					defer wg.Done()
					for i := 0; i < n; i++ {
						if _, err := e.audit.Record("bench", RecordInput{TaskID: id, Type: "decision", Content: "benchmark record"}); err != nil {
							b.Error(err)
							return
						}
					}
				}(ids[c], n)
			}
			wg.Wait()
			rate := float64(b.N) / b.Elapsed().Seconds()
			b.StopTimer()
			floor := (floorBefore + benchFloor(b)) / 2
			b.ReportMetric(rate, "records/s")
			b.ReportMetric(floor, "floor_commits/s")
			b.ReportMetric(rate/floor, "ratio_to_floor")
		})
	}
}

// benchFloor is store.CommitFloor in a file of b's temporary directory.
func benchFloor(b *testing.B) float64 {
	rate, err := store.CommitFloor(filepath.Join(b.TempDir(), "floor.db"), 300)
	if err != nil {
		b.Fatal(err)
	}
	return rate
}
