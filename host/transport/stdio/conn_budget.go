package stdio

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"
)

// smallMessage is the size under which a message is not counted against
// its session's byte budget: small requests never wait for large ones.
const smallMessage = 64 << 10

// messageBudget bounds the bytes of large messages one session holds at
// once: twice its message limit, so one message of the largest size never
// waits for itself and two may run together (docs/decisions.md D33). What
// does not fit waits, in order, on the session's read loop: the message
// is within every limit and will be answered, and a client that sends
// faster than cairn answers is slowed down, not refused (a refusal would
// have it send the same bytes again). Each message a session holds costs
// the process tree a few times its size (the relay's copy for a replay,
// the host's, the plugin's); without the bound, eight at once cost eight
// times that.
type messageBudget struct {
	sem     *semaphore.Weighted
	session *sync.WaitGroup
}

func newMessageBudget(maxMessage int, session *sync.WaitGroup) *messageBudget {
	return &messageBudget{sem: semaphore.NewWeighted(2 * int64(maxMessage+1)), session: session}
}

// hold waits until the session may hold n more bytes (false: ctx ended
// first). It returns the WaitGroup the message's work is counted in, and
// start, to call once that work is under way: the bytes are released when
// it ends.
func (b *messageBudget) hold(ctx context.Context, n int) (work *sync.WaitGroup, start func(), ok bool) {
	if n < smallMessage {
		return b.session, func() {}, true
	}
	if b.sem.Acquire(ctx, int64(n)) != nil {
		return nil, nil, false
	}
	work = new(sync.WaitGroup)
	return work, func() {
		b.session.Add(1)
		go func() {
			defer b.session.Done()
			work.Wait()
			b.sem.Release(int64(n))
		}()
	}, true
}
