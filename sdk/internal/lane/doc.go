// Package lane is the call lane: a direct framed protocol for tool calls
// (and bus events) between the host and a plugin, beside go-plugin's gRPC
// connection.
//
// gRPC hands every frame between at least three goroutines on each side of
// a call; on a local socket that scheduling, not the bytes, is the cost of
// the hop. On the lane the calling goroutine writes its frame itself (one
// mutex-guarded write), and one reader goroutine per side reads frames and
// dispatches them, so a call costs the two socket hops and two wake-ups.
//
// The plugin listens on a Unix socket and names it in ConfigureResponse
// (call_lane); the host dials it once, and from then on every tool call to
// the plugin takes the lane, progress and log lines included: a plugin has
// one call transport, chosen at the handshake (docs/decisions.md D34). A
// plugin that offers no lane (or a host run with CAIRN_CALL_LANE=off) has
// every call on gRPC's CallTool stream instead. go-plugin keeps the
// process's lifecycle, handshake, health, prompts and resources.
//
// Wire format, both directions: a 16-byte header — body length (uint32, big
// endian), frame kind (one byte: call 1, cancel 2, result 3, event 4,
// events 5, progress 6, log 7), three zero bytes, call id (uint64, big
// endian) — then the body:
//
//	call     (host → plugin): deadline in Unix nanoseconds (int64, 0 =
//	                          none), then a CallToolRequest (protobuf)
//	event    (host → plugin): deadline, then a HandleEventRequest: a bus
//	                          event for the plugin's subscriptions
//	events   (host → plugin): deadline, then a HandleEventsRequest: several
//	                          bus events, run in order; sent only to a
//	                          plugin whose ConfigureResponse set
//	                          lane_event_batches
//	cancel   (host → plugin): empty; the call (or event, or batch) with
//	                          that id is cancelled
//	progress (plugin → host): a Progress (protobuf) of the running call
//	                          with that id; sent only when its request set
//	                          wants_progress
//	log      (plugin → host): a LogMessage (protobuf) for the client of the
//	                          running call with that id, at or above its
//	                          request's log_level; sent only when that is set
//	result   (plugin → host): the answer to the frame with that id: for a
//	                          call or an event a ToolResult (protobuf; an
//	                          event's carries only an error, when its
//	                          handlers failed), for an events frame a
//	                          HandleEventsResponse, one outcome per event in
//	                          order (or one error when the batch was refused)
//
// A call's progress and log frames precede its result and reach the host's
// caller in the order sent; none follows the result. The host drops a
// progress or log frame whose id names no waiting call (it finished, was
// cancelled, or asked for none), and one over its limit; the plugin does
// not send one over its own limit. Neither ends the call or the
// connection.
//
// A frame whose body exceeds the receiver's limit is read past and answered
// (a call, an event, a batch) or failed (a result) with a typed error naming
// the limit: the connection stays open. The host never sends a batch over
// its limit: it splits it into frames that fit, sent in order.
package lane
