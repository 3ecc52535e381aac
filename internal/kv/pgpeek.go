package kv

// Peek: a view that reads once needs no transaction, since one statement
// is its own snapshot, and without one it costs one round trip and one
// statement instead of a BEGIN, a read and a COMMIT. A hot path that
// usually reads once (the admin area's look for webhooks subscribed to
// each bus event, on every server, docs/decisions.md D40) runs as a peek;
// should it read a second time, its reads would come from different
// snapshots, so the attempt is dropped and fn runs again in a View.

// Peek runs fn like View, its first read outside any transaction; fn must
// be safe to run twice, and only its last run's results count.
func (p *PG) Peek(fn func(tx Tx) error) error {
	t, release, err := p.open(false)
	if err != nil {
		return err
	}
	t.begin, t.peek = "", true
	ferr := fn(Tx{pg: t})
	release()
	if t.peekAgain {
		return p.View(fn)
	}
	if t.err != nil {
		return t.err
	}
	return ferr
}

// peekRead reports whether a read may go ahead in a peek: the first may,
// a second marks the peek to run again as a View and fails the attempt.
func (t *pgTx) peekRead() bool {
	if !t.peek {
		return true
	}
	if t.peekReads++; t.peekReads == 1 {
		return true
	}
	t.peekAgain = true
	t.fail(errPeekAgain{})
	return false
}

type errPeekAgain struct{}

func (errPeekAgain) Error() string { return "a peek read twice; it runs again as a view" }
