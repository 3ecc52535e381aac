package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// OnEvent runs a handler for the host bus's events of a type, a category
// ("task.*") or all ("*").
func ExamplePlugin_OnEvent() {
	p := sdk.New("notes", "1.0.0")
	p.OnEvent("task.*", func(_ context.Context, ev sdk.Event) error {
		var data struct {
			TaskID string `json:"task_id"`
		}
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			return err
		}
		fmt.Println(ev.Type, data.TaskID)
		return nil
	})
	_ = sdktest.DeliverEvent(context.Background(), p, sdk.Event{Type: "task.created", Data: json.RawMessage(`{"task_id":"T-1"}`)})
	_ = sdktest.DeliverEvent(context.Background(), p, sdk.Event{Type: "project.created", Data: json.RawMessage(`{}`)})
	fmt.Println(sdktest.Subscriptions(p))
	// Output:
	// task.created T-1
	// [task.*]
}

// An Event carries its type, the plugin that published it and its JSON
// data.
func ExampleEvent() {
	ev := sdk.Event{ID: "e-1", Type: "note.created", Source: "notes", Data: json.RawMessage(`{"id":"N-1"}`)}
	fmt.Println(ev.Source, ev.Type, string(ev.Data))
	// Output: notes note.created {"id":"N-1"}
}

// Publish puts an event on the host's bus; in process, without a host,
// it says so.
func ExamplePlugin_Publish() {
	p := sdk.New("notes", "1.0.0")
	sdk.AddTool(p, sdk.Tool[noteIn, noteOut]{
		Name: "notes_create", Description: "Creates a note.",
		Handler: func(ctx context.Context, in noteIn) (noteOut, error) {
			out := noteOut{ID: "N-1"}
			if err := p.Publish(ctx, "note.created", out); err != nil {
				fmt.Println(err)
			}
			return out, nil
		},
	})
	sdktest.Invoke(context.Background(), p, "notes_create", []byte(`{"title":"a"}`))
	// Output: sdk: publish note.created: plugin is not connected to a host
}

// PublishDurable publishes an event recorded with the write that caused it
// (an outbox), under its own id; done says when every subscriber has it,
// or why it must be published again.
func ExamplePlugin_PublishDurable() {
	p := sdk.New("notes", "1.0.0")
	ev := sdk.Event{ID: "01J9Z", Type: "note.created", Time: "2026-01-02T03:04:05Z", Data: json.RawMessage(`{"id":"N-1"}`)}
	err := p.PublishDurable(ev, func(err error) {
		if err == nil {
			// Delete ev from the outbox: the host has delivered it.
			return
		}
		// Keep it: publish it again later under the same id.
	})
	fmt.Println(err)
	// Output: sdk: publish note.created: plugin is not connected to a host
}

// FlushEvents waits until the host has every event published so far: an
// outbox deletes what it published only after it.
func ExamplePlugin_FlushEvents() {
	p := sdk.New("notes", "1.0.0")
	ctx := context.Background()
	_ = p.Publish(ctx, "note.created", map[string]string{"id": "N-1"})
	fmt.Println(p.FlushEvents(ctx))
	// Output: <nil>
}
