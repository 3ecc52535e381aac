package stdio

import (
	"context"
	"testing"
)

// TestCancelledNamesItsCall: a notifications/cancelled cancels the call
// whose id it names (a number, or a string written with or without
// escapes), never another, and nothing once the call has ended.
func TestCancelledNamesItsCall(t *testing.T) {
	t.Parallel()
	s := &connSession{}
	num, releaseNum := s.trackCall(context.Background(), []byte(`7`))
	str, releaseStr := s.trackCall(context.Background(), []byte(`"a<b"`))
	defer releaseStr()

	s.cancelCall([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`))
	s.cancelCall([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"x"}}`))
	s.cancelCall([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`))
	if num.Err() != nil || str.Err() != nil {
		t.Fatal("a cancellation naming no running call cancelled one")
	}
	s.cancelCall([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a\u003cb"}}`))
	if str.Err() == nil {
		t.Fatal("the string id written with an escape did not cancel its call")
	}
	if num.Err() != nil {
		t.Fatal("cancelling one call cancelled another")
	}
	releaseNum()
	if _, found := s.calls.Load("n7"); found {
		t.Fatal("an ended call is still tracked")
	}
	again, releaseAgain := s.trackCall(context.Background(), []byte(`7`))
	defer releaseAgain()
	s.cancelCall([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
	if again.Err() == nil {
		t.Fatal("a new call under a reused id was not cancelled")
	}
}
