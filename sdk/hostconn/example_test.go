package hostconn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/hostconn"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// The host starts a plugin executable with go-plugin, serving its Host
// to the plugin (Plugins) and dialling it with the SDK's options
// (DialOptions), then opens the connection and configures the plugin.
func ExampleOpen() {
	cmd := exec.Command(os.Args[0]) // the plugin's executable
	cmd.Env = append(os.Environ(), servePluginEnv+"=1")
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  hostconn.Handshake,
		VersionedPlugins: hostconn.Plugins(quietHost{}, hclog.NewNullLogger()),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  hostconn.DialOptions(),
		Cmd:              cmd,
		Logger:           hclog.NewNullLogger(),
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		fmt.Println(err)
		return
	}
	conn, err := hostconn.Open(rpc, "notes")
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "notes")
	defer os.RemoveAll(dir)
	if _, err := conn.Configure(context.Background(), hostconn.Config{Root: dir, DataDir: dir, Mode: "FULL"}); err != nil {
		fmt.Println(err)
		return
	}
	desc, _, _ := conn.Describe(context.Background())
	fmt.Println(desc.Name, desc.Version)
	// Output: notes 1.0.0
}

// Plugins serves the host's Host to every plugin process the client
// starts; Handshake is the cookie both ends check.
func ExamplePlugins() {
	sets := hostconn.Plugins(quietHost{}, hclog.NewNullLogger())
	cfg := plugin.ClientConfig{HandshakeConfig: hostconn.Handshake, VersionedPlugins: sets}
	fmt.Println(len(cfg.VersionedPlugins), cfg.HandshakeConfig.MagicCookieKey != "")
	// Output: 1 true
}

// DialOptions go into the go-plugin client's config; they size the
// connection for the SDK's largest messages.
func ExampleDialOptions() {
	cfg := plugin.ClientConfig{GRPCDialOptions: hostconn.DialOptions()}
	fmt.Println(len(cfg.GRPCDialOptions) > 0)
	// Output: true
}

// A Conn runs everything the host asks of one plugin process.
func ExampleConn() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	h, _ := p.conn.Health(context.Background())
	fmt.Println(h.Status, h.Message)
	// Output: ok 12 notes
}

// Config carries the host's settings for the plugin.
func ExampleConfig() {
	cfg := hostconn.Config{Root: "/work/project", DataDir: "/var/lib/cairn/notes", Mode: "READONLY",
		HostVersion: "1.4.0", Settings: map[string]string{"index": "on"}}
	fmt.Println(cfg.Mode, cfg.Settings["index"])
	// Output: READONLY on
}

// Configure hands the plugin its configuration; the answer names the
// call lane the plugin offers.
func ExampleConn_Configure() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	fmt.Println(p.conf.CallLane != "")
	// Output: true
}

// Configured is the plugin's answer to Configure: the host dials its call
// lane when it names one.
func ExampleConfigured() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	if p.conf.CallLane == "" {
		fmt.Println("calls take the gRPC stream")
		return
	}
	l, err := hostconn.DialLane(context.Background(), p.conf.CallLane)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	fmt.Println("calls take the lane; event batches:", p.conf.LaneEventBatches)
	// Output: calls take the lane; event batches: true
}

// Describe lists the plugin's tools as it declares them.
func ExampleConn_Describe() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	desc, tools, _ := p.conn.Describe(context.Background())
	fmt.Println(desc.Name, desc.Subscriptions)
	for _, t := range tools {
		fmt.Printf("%s %q %v\n", t.Name, t.TaskSupport, t.CallsTools)
	}
	// Output:
	// notes [task.*]
	// note_add "" false
	// note_index "optional" false
	// note_link "" true
}

// Call runs a tool; its progress and log lines arrive before its result.
func ExampleConn_Call() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	res, err := p.conn.Call(context.Background(),
		seam.Call{Tool: "note_add", Args: json.RawMessage(`{"text":"buy milk"}`), WantsProgress: true, LogLevel: "info"},
		func(pr seam.Progress) { fmt.Println("progress:", pr.Message) },
		func(l seam.LogLine) { fmt.Println("log:", l.Level, string(l.Data)) })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, string(res.Output))
	// Output:
	// progress: stored
	// log: info {"length":8,"message":"note added"}
	// 200 {"id":"N-1"}
}

// HandleEvent delivers a bus event; a handler's refusal comes back as the
// error.
func ExampleConn_HandleEvent() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	ctx := context.Background()
	fmt.Println(p.conn.HandleEvent(ctx, seam.Event{ID: "T-1", Type: "task.created", Source: "tasks"}) == nil)
	fmt.Println(p.conn.HandleEvent(ctx, seam.Event{ID: "T-1", Type: "task.deleted", Source: "tasks"}) != nil)
	// Output:
	// true
	// true
}

func ExampleConn_ListPrompts() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	prompts, _ := p.conn.ListPrompts(context.Background())
	for _, pr := range prompts {
		fmt.Println(pr.Name, pr.Arguments[0].Name, pr.Arguments[0].Required)
	}
	// Output: review id true
}

// GetPrompt renders a prompt; the plugin's refusal is the result's Err.
func ExampleConn_GetPrompt() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	ctx := context.Background()
	res, _ := p.conn.GetPrompt(ctx, "review", map[string]string{"id": "N-1"})
	fmt.Println(res.Messages[0].Role, res.Messages[0].Text)
	res, _ = p.conn.GetPrompt(ctx, "review", nil)
	fmt.Println(res.Err.Status, res.Err.Details["field"])
	// Output:
	// user Review note N-1.
	// 400 id
}

// Complete asks for the values of a prompt's argument.
func ExampleConn_Complete() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	c, _ := p.conn.Complete(context.Background(), seam.CompleteRequest{RefType: "prompt", RefName: "review", Argument: "id", Value: "N-"})
	fmt.Println(c.Values, c.HasMore)
	// Output: [N-1 N-2] false
}

func ExampleConn_ListResources() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	rs, _ := p.conn.ListResources(context.Background())
	fmt.Println(rs.Resources[0].URI, rs.Resources[0].MIMEType)
	// Output: notes://N-1 text/markdown
}

// ReadResource reads a resource; the plugin's refusal is the result's Err.
func ExampleConn_ReadResource() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	ctx := context.Background()
	r, _ := p.conn.ReadResource(ctx, "notes://N-1")
	fmt.Println(r.Contents[0].Text)
	r, _ = p.conn.ReadResource(ctx, "notes://N-9")
	fmt.Println(r.Err.Status, r.Err.Code)
	// Output:
	// # Buy milk
	// 404 ERR_RESOURCE_NOT_FOUND
}

func ExampleConn_Health() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	h, _ := p.conn.Health(context.Background())
	fmt.Println(h.Status == seam.HealthOpening, h.Status)
	// Output: false ok
}

// A call asked to run as a task answers with the task; Task then follows
// it for its caller, and for no one else.
func ExampleConn_Task() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	ctx := context.Background()
	ada := seam.Caller{ID: "ada", Source: "api_key", Scopes: []string{"write"}}
	res, err := p.conn.Call(ctx, seam.Call{Tool: "note_index", Args: json.RawMessage(`{"text":"all"}`), Caller: ada, Task: &seam.TaskParams{}}, nil, nil)
	if err != nil || res.Task == nil {
		fmt.Println(err, res)
		return
	}
	done, _ := p.conn.Task(ctx, seam.TaskRequest{Op: "result", TaskID: res.Task.ID, Caller: ada})
	fmt.Println(done.Result.Status, string(done.Result.Output))
	other, _ := p.conn.Task(ctx, seam.TaskRequest{Op: "get", TaskID: res.Task.ID, Caller: seam.Caller{ID: "bob", Source: "api_key", Scopes: []string{"write"}}})
	fmt.Println(other.Err != nil)
	// Output:
	// 200 {"id":"index"}
	// true
}

// Stop asks the plugin to release its resources before the host ends
// its process.
func ExampleConn_Stop() {
	p, err := startNotes(quietHost{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	fmt.Println(p.conn.Stop(context.Background()))
	// Output: <nil>
}

// recordingHost is a Host that records the events a plugin publishes.
type recordingHost struct {
	quietHost
	events chan string
}

func (h recordingHost) Publish(ev seam.Event) (string, error) {
	h.events <- ev.Type + " " + string(ev.Data)
	return "e-1", nil
}

// A Host serves what a plugin asks of the host: its client's answers and
// its events.
func ExampleHost() {
	var h hostconn.Host = recordingHost{events: make(chan string, 16)}
	id, _ := h.Publish(seam.Event{Type: "note.added", Data: json.RawMessage(`{"id":"N-1"}`)})
	_, e := h.AskClient(context.Background(), seam.Ask{Channel: 1, Method: "sampling/createMessage"})
	fmt.Println(id, <-h.(recordingHost).events)
	fmt.Println(e.Code == errs.ClientUnsupported)
	// Output:
	// e-1 note.added {"id":"N-1"}
	// true
}

// dialNotesLane starts the notes plugin and dials the lane it offers.
func dialNotesLane() (*plugged, *hostconn.Lane, error) {
	p, err := startNotes(quietHost{})
	if err != nil {
		return nil, nil, err
	}
	l, err := hostconn.DialLane(context.Background(), p.conf.CallLane)
	if err != nil {
		p.end()
		return nil, nil, err
	}
	return p, l, nil
}

// DialLane connects to the lane the plugin named in its Configured
// answer; calls and events then take it.
func ExampleDialLane() {
	p, l, err := dialNotesLane()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	defer l.Close()
	res, err := l.Call(context.Background(), seam.Call{Tool: "note_add", Args: json.RawMessage(`{"text":"x"}`)}, nil, nil)
	fmt.Println(err, res.Status)
	// Output: <nil> 200
}

// A Lane carries calls and events beside the gRPC connection.
func ExampleLane() {
	p, l, err := dialNotesLane()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	defer l.Close()
	fmt.Println(l.Deliver(context.Background(), seam.Event{ID: "T-1", Type: "task.created"}))
	// Output: <nil>
}

func ExampleLane_Call() {
	p, l, err := dialNotesLane()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	defer l.Close()
	res, err := l.Call(context.Background(),
		seam.Call{Tool: "note_add", Args: json.RawMessage(`{"text":"buy milk"}`), WantsProgress: true},
		func(pr seam.Progress) { fmt.Println("progress:", pr.Progress, pr.Total) }, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.Output))
	// Output:
	// progress: 1 1
	// {"id":"N-1"}
}

// Deliver runs the plugin's handlers for one event; their refusal is the
// error.
func ExampleLane_Deliver() {
	p, l, err := dialNotesLane()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	defer l.Close()
	err = l.Deliver(context.Background(), seam.Event{ID: "T-2", Type: "task.deleted"})
	fmt.Println(err != nil)
	// Output: true
}

// DeliverBatch sends several events in one frame and returns each one's
// outcome.
func ExampleLane_DeliverBatch() {
	p, l, err := dialNotesLane()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	defer l.Close()
	outcomes, err := l.DeliverBatch(context.Background(), []seam.Event{
		{ID: "T-1", Type: "task.created"},
		{ID: "T-2", Type: "task.deleted"},
		{ID: "N-1", Type: "note.added"},
	})
	fmt.Println(err)
	for _, o := range outcomes {
		fmt.Println(o == nil)
	}
	// Output:
	// <nil>
	// true
	// false
	// true
}

// Close ends the lane; a later call fails with ErrLaneClosed.
func ExampleLane_Close() {
	p, l, err := dialNotesLane()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.end()
	fmt.Println(l.Close())
	_, err = l.Call(context.Background(), seam.Call{Tool: "note_add", Args: json.RawMessage(`{"text":"x"}`)}, nil, nil)
	fmt.Println(errors.Is(err, hostconn.ErrLaneClosed))
	// Output:
	// <nil>
	// true
}
