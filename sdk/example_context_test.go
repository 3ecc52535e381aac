package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// A handler learns who called it from its context.
func ExampleCallerFrom() {
	p := sdk.New("notes", "1.0.0")
	sdk.AddTool(p, sdk.Tool[struct{}, map[string]string]{
		Name: "notes_whoami", Description: "Says who is calling.",
		Handler: func(ctx context.Context, _ struct{}) (map[string]string, error) {
			c := sdk.CallerFrom(ctx)
			return map[string]string{"id": c.ID, "source": c.Source}, nil
		},
	})
	ctx := sdk.WithCaller(context.Background(), sdk.Caller{ID: "ada", Source: "api_key", Scopes: []string{"read"}})
	fmt.Println(string(sdktest.Invoke(ctx, p, "notes_whoami", nil).Output))
	// Output: {"id":"ada","source":"api_key"}
}

// Outside a call, the caller is unknown.
func ExampleCaller() {
	c := sdk.CallerFrom(context.Background())
	fmt.Println(c.ID, c.Source)
	// Output: unknown unknown
}

func ExampleCaller_Operator() {
	fmt.Println(sdk.Caller{ID: "me", Source: "env"}.Operator())
	fmt.Println(sdk.Caller{ID: "ada", Source: "api_key"}.Operator())
	// Output:
	// true
	// false
}

// A tool that writes checks the caller's scope.
func ExampleCaller_HasScope() {
	reader := sdk.Caller{ID: "ada", Source: "api_key", Scopes: []string{"read"}}
	operator := sdk.Caller{ID: "me", Source: "env"}
	fmt.Println(reader.HasScope("write"), operator.HasScope("write"))
	// Output: false true
}

// Tests set the caller a call comes from.
func ExampleWithCaller() {
	ctx := sdk.WithCaller(context.Background(), sdk.Caller{ID: "ci", Source: "env"})
	fmt.Println(sdk.CallerFrom(ctx).ID)
	// Output: ci
}

// RequestID names the host's call; it is empty outside one.
func ExampleRequestID() {
	fmt.Printf("%q\n", sdk.RequestID(context.Background()))
	// Output: ""
}

// TraceID is the call's trace, kept beside what the call records; empty
// when the call is not traced.
func ExampleTraceID() {
	fmt.Printf("%q\n", sdk.TraceID(context.Background()))
	// Output: ""
}

// ReportProgress reaches the client when it asked for progress, and does
// nothing otherwise.
func ExampleReportProgress() {
	p := sdk.New("notes", "1.0.0")
	sdk.AddTool(p, sdk.Tool[struct{}, struct{}]{
		Name: "notes_import", Description: "Imports notes.",
		Handler: func(ctx context.Context, _ struct{}) (struct{}, error) {
			for i := 1; i <= 2; i++ {
				sdk.ReportProgress(ctx, float64(i), 2, fmt.Sprintf("batch %d", i))
			}
			return struct{}{}, nil
		},
	})
	ctx := sdk.WithProgress(context.Background(), func(progress, total float64, message string) {
		fmt.Println(progress, total, message)
	})
	sdktest.Invoke(ctx, p, "notes_import", nil)
	// Output:
	// 1 2 batch 1
	// 2 2 batch 2
}

// Tests catch the progress a handler reports.
func ExampleWithProgress() {
	ctx := sdk.WithProgress(context.Background(), func(progress, total float64, message string) {
		fmt.Printf("%.0f/%.0f %s\n", progress, total, message)
	})
	sdk.ReportProgress(ctx, 3, 10, "copying")
	// Output: 3/10 copying
}

func ExampleProgressFunc() {
	var seen []string
	var f sdk.ProgressFunc = func(_, _ float64, message string) { seen = append(seen, message) }
	ctx := sdk.WithProgress(context.Background(), f)
	sdk.ReportProgress(ctx, 1, 2, "half")
	fmt.Println(seen)
	// Output: [half]
}

// Log sends the client lines about its call, at the levels it asked for.
func ExampleLog() {
	ctx := sdk.WithLog(context.Background(), sdk.LogInfo, func(level string, data any) {
		raw, _ := json.Marshal(data)
		fmt.Println(level, string(raw))
	})
	sdk.Log(ctx, sdk.LogDebug, "not wanted", nil)
	sdk.Log(ctx, sdk.LogWarning, "skipped a note", map[string]any{"id": "N-3"})
	// Output: warning {"id":"N-3","message":"skipped a note"}
}

// Tests catch a call's log lines at a level and above.
func ExampleWithLog() {
	ctx := sdk.WithLog(context.Background(), sdk.LogError, func(level string, data any) { fmt.Println(level, data) })
	sdk.Log(ctx, sdk.LogInfo, "fine", nil)
	sdk.Log(ctx, sdk.LogError, "broken", nil)
	// Output: error broken
}

func ExampleLogFunc() {
	var lines int
	var f sdk.LogFunc = func(string, any) { lines++ }
	ctx := sdk.WithLog(context.Background(), sdk.LogDebug, f)
	sdk.Log(ctx, sdk.LogInfo, "one", nil)
	fmt.Println(lines)
	// Output: 1
}

// A call's idempotency key names it across retries and replays.
func ExampleIdempotencyOf() {
	ctx := sdk.WithIdempotency(context.Background(), sdk.Idempotency{Key: "req-7", Client: true})
	k := sdk.IdempotencyOf(ctx)
	fmt.Println(k.Keyed(), k.Key)
	// Output: true req-7
}

// Tests give a call the key a client or the host would.
func ExampleWithIdempotency() {
	ctx := sdk.WithIdempotency(context.Background(), sdk.Idempotency{Key: "relay-1:7", Replay: true})
	fmt.Println(sdk.IdempotencyOf(ctx).Replay)
	// Output: true
}

func ExampleIdempotency() {
	fmt.Println(sdk.IdempotencyOf(context.Background()).Keyed())
	// Output: false
}

// memoryStore keeps outcomes in a map, as a plugin's store keeps them in
// the transaction of its write.
type memoryStore map[string][2][]byte

func (m memoryStore) LoadOutcome(k sdk.Idempotency) ([]byte, []byte, bool, error) {
	v, ok := m[string(k.ID())]
	return v[0], v[1], ok, nil
}

func (m memoryStore) SaveOutcome(k sdk.Idempotency, fingerprint, outcome []byte) error {
	m[string(k.ID())] = [2][]byte{fingerprint, outcome}
	return nil
}

// An OutcomeStore is what Once records a key's outcome in.
func ExampleOutcomeStore() {
	var st sdk.OutcomeStore = memoryStore{}
	_, _, found, _ := st.LoadOutcome(sdk.Idempotency{Key: "k"})
	fmt.Println(found)
	// Output: false
}

// Once makes a write take effect once per key: a repeated key returns the
// first outcome and writes nothing.
func ExampleOnce() {
	st := memoryStore{}
	p := sdk.New("notes", "1.0.0")
	writes := 0
	sdk.AddTool(p, sdk.Tool[noteIn, noteOut]{
		Name: "notes_create", Description: "Creates a note.", HonoursIdempotency: true,
		Handler: func(ctx context.Context, in noteIn) (noteOut, error) {
			out, _, err := sdk.Once(ctx, st, func() (noteOut, error) {
				writes++
				return noteOut{ID: fmt.Sprintf("N-%d", writes)}, nil
			})
			return out, err
		},
	})
	ctx := sdk.WithIdempotency(context.Background(), sdk.Idempotency{Key: "req-1", Client: true})
	for range 2 {
		fmt.Println(string(sdktest.Invoke(ctx, p, "notes_create", []byte(`{"title":"a"}`)).Output))
	}
	fmt.Println(writes)
	// Output:
	// {"id":"N-1"}
	// {"id":"N-1"}
	// 1
}
