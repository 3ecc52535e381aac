package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// hostServices is what the host does for one plugin (hostconn.Host): it
// asks clients for the plugin's calls and puts its events on the bus.
type hostServices struct {
	plugin string
	bus    *events.Bus
	// askClient routes AskClient to the host; nil refuses.
	askClient func(ctx context.Context, plugin string, ask seam.Ask) (json.RawMessage, *errs.Error)
	// callAreaTool routes CallAreaTool to the host; nil refuses.
	callAreaTool func(ctx context.Context, plugin string, call seam.ToolCallback) seam.Result
}

// AskClient passes a plugin's request for its caller's client to the host,
// naming the plugin, so one plugin cannot reach another's calls.
func (h *hostServices) AskClient(ctx context.Context, ask seam.Ask) (json.RawMessage, *errs.Error) {
	if h.askClient == nil {
		return nil, errs.New(501, "ERR_CLIENT_UNAVAILABLE", "this host cannot ask clients")
	}
	return h.askClient(ctx, h.plugin, ask)
}

// CallAreaTool passes a plugin's request to run another area's tool to
// the host, naming the plugin, so one plugin cannot reach another's calls.
func (h *hostServices) CallAreaTool(ctx context.Context, call seam.ToolCallback) seam.Result {
	if h.callAreaTool == nil {
		e := errs.New(501, errs.Unavailable, "this host cannot run tools for a plugin")
		return seam.Result{Err: e, Status: e.Status}
	}
	return h.callAreaTool(ctx, h.plugin, call)
}

// Publish puts a plugin's event on the bus.
func (h *hostServices) Publish(ev seam.Event) (string, error) {
	e, err := h.event(ev)
	if err != nil {
		return "", err
	}
	return h.bus.Publish(e).ID, nil
}

// event checks a published event. An event that carries its id (and time)
// keeps them: a durable publisher assigned them when it recorded the event,
// so a redelivery is recognisably the same event.
func (h *hostServices) event(ev seam.Event) (events.Event, error) {
	if strings.TrimSpace(ev.Type) == "" {
		return events.Event{}, status.Error(codes.InvalidArgument, "event type is required")
	}
	if h.bus == nil {
		return events.Event{}, status.Error(codes.Unavailable, "no event bus")
	}
	if len(ev.Data) > 0 && !json.Valid(ev.Data) {
		return events.Event{}, status.Error(codes.InvalidArgument, "event data must be JSON")
	}
	return events.Event{ID: ev.ID, Type: ev.Type, Source: h.plugin, Time: ev.Time, Data: ev.Data}, nil
}

// PublishStreamed puts an event of the plugin's event stream on the bus.
// An event without an id is acknowledged once it is on the bus; one with
// its own id (a durable publisher's) only once every local plugin
// subscriber's handler has returned (the wait). While the server's plugins
// have not all subscribed, such an event waits for them (subscribeWait)
// before it goes on the bus, and is acknowledged for retry if they take
// longer: a host that answers its session before every plugin is up
// (docs/decisions.md D46) would otherwise send its first calls' events
// back to their publishers, whose retries may come much later.
func (h *hostServices) PublishStreamed(ev seam.Event) (func(context.Context) error, string, error) {
	e, err := h.event(ev)
	switch {
	case err != nil:
		return nil, "", err
	case e.ID != "" && !h.bus.Subscribed():
		// The wait runs off the stream's receiving loop, in ack order,
		// so these events reach the bus in the order they came.
		return func(ctx context.Context) error {
			sctx, cancel := context.WithTimeout(ctx, subscribeWait)
			defer cancel()
			if !h.bus.AwaitSubscribed(sctx) {
				// Not every plugin has subscribed: the event could
				// not be handled by all of them, so its publisher
				// keeps it for later.
				return errStillStarting
			}
			_, wait := h.bus.PublishAwait(e)
			return wait(ctx)
		}, "", nil
	case e.ID != "":
		_, wait := h.bus.PublishAwait(e)
		return wait, "", nil
	default:
		h.bus.Publish(e)
		return nil, "", nil
	}
}

// subscribeWait bounds how long a durable event waits for every plugin to
// subscribe before its publisher is told to retry it.
const subscribeWait = 10 * time.Second

// errStillStarting is the retry reason of a durable event published while
// the server's plugins have not all subscribed.
var errStillStarting = errors.New("the server is still starting its plugins")
