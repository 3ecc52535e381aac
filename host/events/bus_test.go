package events

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func newBus() *Bus { return New(hclog.NewNullLogger()) }

// collector records what one handler received, in order.
type collector struct {
	mu  sync.Mutex
	got []string
	wg  sync.WaitGroup
}

func (c *collector) handle(ev Event) {
	c.mu.Lock()
	c.got = append(c.got, ev.Type)
	c.mu.Unlock()
	c.wg.Done()
}

func (c *collector) types() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

// TestOverlappingPatternsDeliverOnce: one subscriber with "*" and "demo.*"
// (and a duplicate) gets each matching event exactly once.
func TestOverlappingPatternsDeliverOnce(t *testing.T) {
	b := newBus()
	c := &collector{}
	unsub := b.SubscribeSet("p", []string{"*", "demo.*", "demo.*", "demo.one"}, c.handle)
	c.wg.Add(3)
	b.Publish(Event{Type: "demo.one"})
	b.Publish(Event{Type: "demo.two"})
	b.Publish(Event{Type: "other"})
	c.wg.Wait()
	unsub() // waits for the handler goroutine: nothing more can arrive
	got := c.types()
	want := []string{"demo.one", "demo.two", "other"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v (each event once, in order)", got, want)
	}
	if _, _, subs := b.Stats(); subs != 0 {
		t.Fatalf("subscribers after unsubscribe = %d", subs)
	}
}

func TestSubscribeSetFilters(t *testing.T) {
	b := newBus()
	for _, c := range []struct {
		name     string
		patterns []string
		want     []string
	}{
		{"none", nil, nil},
		{"exact", []string{"a.x"}, []string{"a.x"}},
		{"category", []string{"a.*"}, []string{"a.x", "a.y"}},
		{"two categories", []string{"a.*", "b.*"}, []string{"a.x", "a.y", "b.x"}},
		{"all", []string{"*"}, []string{"a.x", "a.y", "b.x", "c"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := &collector{}
			col.wg.Add(len(c.want))
			unsub := b.SubscribeSet(c.name, c.patterns, col.handle)
			for _, typ := range []string{"a.x", "a.y", "b.x", "c"} {
				b.Publish(Event{Type: typ})
			}
			col.wg.Wait()
			unsub()
			if fmt.Sprint(col.types()) != fmt.Sprint(c.want) {
				t.Fatalf("got %v, want %v", col.types(), c.want)
			}
		})
	}
}

func TestPublishStampsEvent(t *testing.T) {
	b := newBus()
	ev := b.Publish(Event{Type: "x"})
	if len(ev.ID) != len("evt_")+24 || ev.ID[:4] != "evt_" {
		t.Fatalf("id %q", ev.ID)
	}
	if len(ev.Time) != len("2026-11-22T08:40:12.123Z") || ev.Time[len(ev.Time)-1] != 'Z' {
		t.Fatalf("time %q", ev.Time)
	}
	if string(ev.Data) != "{}" {
		t.Fatalf("data %s", ev.Data)
	}
	kept := b.Publish(Event{ID: "given", Time: "t", Type: "x", Data: json.RawMessage(`{"a":1}`)})
	if kept.ID != "given" || kept.Time != "t" || string(kept.Data) != `{"a":1}` {
		t.Fatalf("publish overwrote given fields: %+v", kept)
	}
	if pub, _, _ := b.Stats(); pub != 2 {
		t.Fatalf("published = %d", pub)
	}
}

// TestFullQueueDropsInsteadOfBlocking: a stuck handler costs its own
// events, counted, never the publisher's progress.
func TestFullQueueDropsInsteadOfBlocking(t *testing.T) {
	b := newBus()
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	unsub := b.Subscribe("slow", "*", func(Event) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
	})
	b.Publish(Event{Type: "first"})
	<-entered // the handler holds the first event; the queue is empty
	for i := 0; i < QueueSize+5; i++ {
		b.Publish(Event{Type: "x"})
	}
	_, dropped, _ := b.Stats()
	if dropped != 5 {
		t.Fatalf("dropped = %d, want 5", dropped)
	}
	close(release)
	unsub()
}

func TestHandlerPanicIsContained(t *testing.T) {
	b := newBus()
	c := &collector{}
	c.wg.Add(1)
	unsub := b.Subscribe("p", "*", func(ev Event) {
		if ev.Type == "boom" {
			panic("handler bug")
		}
		c.handle(ev)
	})
	b.Publish(Event{Type: "boom"})
	b.Publish(Event{Type: "after"})
	c.wg.Wait()
	unsub()
	if fmt.Sprint(c.types()) != "[after]" {
		t.Fatalf("got %v", c.types())
	}
}

func TestUnsubscribeIsIdempotent(t *testing.T) {
	b := newBus()
	unsub := b.Subscribe("p", "*", func(Event) {})
	unsub()
	unsub()
	if _, _, subs := b.Stats(); subs != 0 {
		t.Fatalf("subscribers = %d", subs)
	}
}

// BenchmarkPublish is one event published and delivered to one
// subscriber without a cluster: the path every event of a single server
// takes. The publisher waits for the subscriber every half queue, so
// nothing is dropped.
func BenchmarkPublish(b *testing.B) {
	bus := newBus()
	var delivered atomic.Int64
	defer bus.Subscribe("bench", "*", func(Event) { delivered.Add(1) })()
	data := json.RawMessage(`{"task_id":"T-1"}`)
	b.ResetTimer()
	for i := range b.N {
		bus.Publish(Event{Type: "task.updated", Source: "core", Data: data})
		if (i+1)%(QueueSize/2) == 0 {
			for delivered.Load() < int64(i+1) {
				runtime.Gosched()
			}
		}
	}
	for delivered.Load() < int64(b.N) {
		runtime.Gosched()
	}
}
