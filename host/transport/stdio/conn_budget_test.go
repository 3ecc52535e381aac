package stdio

import (
	"context"
	"sync"
	"testing"
)

// Large messages beyond twice the message limit wait until earlier ones
// are done; small ones never wait.
func TestMessageBudgetHoldsLargeMessagesBack(t *testing.T) {
	t.Parallel()
	const max = 100 << 10
	var session sync.WaitGroup
	b := newMessageBudget(max, &session)
	ctx := context.Background()
	var works []*sync.WaitGroup
	for i := 0; i < 2; i++ {
		work, start, ok := b.hold(ctx, max)
		if !ok {
			t.Fatal("hold failed")
		}
		work.Add(1) // the message's handling, under way
		start()
		works = append(works, work)
	}
	if b.sem.TryAcquire(max) {
		t.Fatal("a third large message fitted beside two of the largest size")
	}
	if work, _, ok := b.hold(ctx, 100); !ok || work != &session {
		t.Fatal("a small message was held back")
	}
	got := make(chan struct{})
	go func() {
		_, start, ok := b.hold(ctx, max)
		if ok {
			start()
		}
		close(got)
	}()
	works[0].Done()
	<-got // the third fits once the first is done
	works[1].Done()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for b.sem.TryAcquire(1) { // fill what is free
	}
	if _, _, ok := b.hold(cancelled, max); ok {
		t.Error("a hold went on after its session ended")
	}
}
