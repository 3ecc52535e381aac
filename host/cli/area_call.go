package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/plugins/builtin"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// The operator's commands (cairn admin, project, audit) reach an area's data
// only through its tools (docs/decisions.md D22): through the running
// daemon of the data dir when there is one, otherwise through a host of
// their own that starts just the areas the command needs. Either way the
// area that owns the store answers, built in or an external replacement.

// callTimeout bounds one tool call through the daemon (a webhook test waits
// for its receiver).
const callTimeout = 2 * time.Minute

// areaClient calls the tools of one or more areas for a command.
type areaClient struct {
	s     config.Settings
	paths daemon.Paths
	// h is the command's own host; nil when the daemon answers.
	h       *Host
	closeFn func()
	// timeout bounds one call through the daemon; zero: callTimeout.
	timeout time.Duration
}

// access says what a command does with the data dir.
type access int

const (
	// reads only: refuse to run where there is no data dir instead of
	// creating an empty one.
	reads access = iota
	// writes: create the data dir when it is missing.
	writes
)

// openAreas connects a command to the named areas' tools.
func openAreas(ctx context.Context, configFlag string, mode access, areas ...string) (*areaClient, error) {
	s, cleanup, err := settings(configFlag)
	if err != nil {
		return nil, err
	}
	c := &areaClient{s: s, paths: daemon.PathsFor(s.DataDir), closeFn: cleanup}
	if !s.TempDataDir && daemonListens(c.paths) {
		return c, nil
	}
	if mode == reads && !s.TempDataDir {
		if _, err := os.Stat(s.DataDir); errors.Is(err, fs.ErrNotExist) {
			cleanup()
			return nil, noDataDir(s.DataDir)
		}
	}
	h, shutdown, err := startHost(ctx, configFlag, func(cs *config.Settings) {
		*cs = s
		onlyAreas(cs, areas)
	})
	if err != nil {
		cleanup()
		return nil, err
	}
	c.h, c.closeFn = h, func() { shutdown(); cleanup() }
	return c, nil
}

// daemonListens reports whether a daemon accepts connections on the data
// dir's socket. The probe sends nothing, which the daemon ignores: cheaper
// than a status request, which asks every plugin for its health.
func daemonListens(p daemon.Paths) bool {
	conn, err := net.DialTimeout("unix", p.Socket, time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// noDataDir refuses a read where nothing was ever stored.
func noDataDir(dir string) error {
	return errs.NotFoundf(errs.NotFound, "data_dir",
		"there is no cairn data dir at %s, so there is nothing to show: run the command inside a workspace whose agents use cairn, or point at a data dir with CAIRN_DATA_DIR=<dir> (or a config file with --config)", dir)
}

// onlyAreas trims the settings to a host that starts the given areas (or
// their replacements from the config file) and nothing else, exposing
// every tool to the operator.
func onlyAreas(s *config.Settings, areas []string) {
	keep := map[string]bool{}
	for _, a := range areas {
		keep[a] = true
	}
	plugins := map[string]config.PluginEntry{}
	for _, a := range builtin.All() {
		if !keep[a.Name] {
			plugins[a.Name] = config.PluginEntry{Disabled: true}
		}
	}
	for name := range keep {
		e := s.File.Plugins[name]
		settings := map[string]string{}
		for k, v := range e.Settings {
			settings[k] = v
		}
		// The command's host lives for one call: the events it causes
		// wait for a server whose areas all listen (see the admin area).
		settings["background"] = "off"
		e.Settings = settings
		plugins[name] = e
	}
	s.File.Plugins = plugins
	// No third-party plugins from the plugin dir: the command needs none.
	s.PluginDir, s.PluginDirExplicit = "", false
	s.Mode, s.Toolsets = config.ModeFull, config.Toolsets{All: true}
}

// close stops the command's own host, if it started one.
func (c *areaClient) close() { c.closeFn() }

// viaDaemon reports whether the running daemon answers the calls.
func (c *areaClient) viaDaemon() bool { return c.h == nil }

// call runs tool with args as the operator and decodes its output into out
// (when out is not nil); it returns the output as the tool wrote it.
// Refusals come back as typed errors.
func (c *areaClient) call(ctx context.Context, tool string, args any, out any) (json.RawMessage, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, errs.New(500, errs.Internal, err.Error())
	}
	var rep callReply
	if c.h != nil {
		o := c.h.Server.OperatorCall(ctx, tool, raw, operator())
		rep = callReply{Output: o.Output, Error: o.Err, Status: o.Status}
	} else {
		data, _ := json.Marshal(callRequest{Tool: tool, Args: raw, AgentID: operator()})
		within := callTimeout
		if c.timeout > 0 {
			within = c.timeout
		}
		w, err := daemon.Send(c.paths, daemon.Hello{Control: callVerb, Data: data}, within)
		if err != nil {
			return nil, errs.Newf(503, errs.Unavailable, "the cairn daemon of %s did not run %s: %v (`cairn stop` and retry to run the command without it)", c.s.DataDir, tool, err)
		}
		if err := json.Unmarshal(w.Status, &rep); err != nil {
			return nil, errs.Newf(502, errs.Internal, "the cairn daemon answered %s with %q: %v", tool, w.Status, err)
		}
	}
	if rep.Error != nil {
		rep.Error.Status = rep.Status
		return nil, rep.Error
	}
	if out != nil {
		if err := json.Unmarshal(rep.Output, out); err != nil {
			return nil, errs.Newf(502, errs.ToolOutputMalformed, "%s answered %s: %v", tool, rep.Output, err)
		}
	}
	return rep.Output, nil
}

// callVerb is the daemon control request that runs one tool call as the
// operator.
const callVerb = "call"

// callRequest is the "call" control request.
type callRequest struct {
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	AgentID string          `json:"agent_id"`
}

// callReply is its answer: the tool's output or its typed error.
type callReply struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  *errs.Error     `json:"error,omitempty"`
	Status int             `json:"status,omitempty"`
}

func init() { controlVerbs[callVerb] = callControl }

// callControl runs a "call" request in the daemon's host.
func callControl(d daemonHandler, data json.RawMessage) (json.RawMessage, error) {
	var req callRequest
	if err := json.Unmarshal(data, &req); err != nil || req.Tool == "" {
		return nil, fmt.Errorf("call request needs a tool")
	}
	if req.AgentID == "" {
		req.AgentID = "operator"
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	o := d.h.Server.OperatorCall(ctx, req.Tool, req.Args, req.AgentID)
	return json.Marshal(callReply{Output: o.Output, Error: o.Err, Status: o.Status})
}
