package tasks

import (
	"fmt"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// BenchmarkCreateWithOutbox measures durable task_create with 1 and 8
// writers with the event recorded in the outbox (as the core plugin runs)
// and without, on both backends, in the same run: the ratio of the two is
// what recording the event costs the write path.
func BenchmarkCreateWithOutbox(b *testing.B) {
	pgtest.EachStore(b, func(b *testing.B) {
		for _, writers := range []int{1, 8} {
			for _, outbox := range []bool{false, true} {
				b.Run(fmt.Sprintf("writers=%d/outbox=%v", writers, outbox), func(b *testing.B) {
					f := newFixture(b, "alpha")
					if outbox {
						f.svc.cfg.Record = func(tx kv.Tx, typ string, data map[string]any, at time.Time) error {
							_, err := f.st.RecordEvent(tx, typ, data, at)
							return err
						}
					}
					runWriters(b, writers, "creates/s", func(int) error {
						_, err := f.svc.Create("bench", CreateInput{Title: "bench task", Project: "alpha"})
						return err
					})
				})
			}
		}
	})
}
