// Package vision is the vision and computer-use area plugin (Area D). It
// wires the libraries plugins/vision/imaging (images and analyses) and
// plugins/vision/computer (sessions, the X11 driver and the hosted-model
// loop) to the SDK and nothing more. Its tools are in the toolsets
// "vision" and "computer", both off by default (CAIRN_TOOLSETS).
//
// Configuration comes from the environment the host passes on
// (docs/decisions.md D20): ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
// CAIRN_VISION_MODEL, DISPLAY, and optionally CAIRN_VISION_TIMEOUT,
// CAIRN_VISION_MAX_RETRIES and CAIRN_COMPUTER_TOOL. Without a key or a
// display the affected tools answer ERR_NOT_CONFIGURED naming the variable.
package vision

import (
	"context"
	"os"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/plugins/builtin"
	"github.com/cairn-mcp/cairn/plugins/vision/computer"
	"github.com/cairn-mcp/cairn/plugins/vision/imaging"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Version of the vision plugin.
const Version = "0.1.0"

// Toolsets of the plugin (docs/decisions.md D16).
const (
	ToolsetVision   = "vision"
	ToolsetComputer = "computer"
)

// EnvComputerTool optionally picks the computer tool version by its tool
// type ("computer_20250124"), its beta header, or the older
// "<tool type>,<beta header>" pair; the default is computer_20251124.
const EnvComputerTool = "CAIRN_COMPUTER_TOOL"

func init() {
	builtin.Register(builtin.Area{Name: "vision", Toolsets: []string{ToolsetVision, ToolsetComputer}, Order: 40, Description: "vision analysis and computer use through a hosted model", New: New})
}

// Area is the vision area: its plugin and the configured libraries.
type Area struct {
	p *sdk.Plugin

	mu       sync.RWMutex
	engine   *imaging.Engine
	beta     *computer.BetaClient
	computer *computer.Manager
	display  string
	problems []string
	getenv   func(string) string
}

// New builds the vision plugin reading the process environment.
func New() *sdk.Plugin { return NewWithEnv(os.Getenv) }

// NewWithEnv builds the plugin reading configuration through getenv, so
// tests decide the environment without touching the process's.
func NewWithEnv(getenv func(string) string) *sdk.Plugin {
	p := sdk.New("vision", Version,
		sdk.WithDescription("Vision analysis and computer use through a hosted model's Messages API"),
		sdk.WithToolset(ToolsetVision), sdk.WithDerivedSchemas(derivedSchemas))
	v := &Area{p: p, getenv: getenv}
	p.AddHooks(sdk.Hooks{Configure: v.configure, Stop: v.stop, Health: v.health})
	v.registerVisionTools()
	v.registerComputerTools()
	return p
}

func (v *Area) configure(_ context.Context, cfg sdk.Config) error {
	var problems []string
	vc, err := imaging.ConfigFromEnv(v.getenv, cfg.Root)
	if err != nil {
		// A malformed optional setting must not take the other areas down:
		// use the defaults and report it in server_health.
		problems = append(problems, errs.From(err).Message)
		vc, _ = imaging.ConfigFromEnv(func(k string) string {
			if k == imaging.EnvTimeout || k == imaging.EnvMaxRetries {
				return ""
			}
			return v.getenv(k)
		}, cfg.Root)
	}
	vc.Logger = v.p.Logger().Named("vision")
	tool := computer.DefaultToolVersion
	if s := strings.TrimSpace(v.getenv(EnvComputerTool)); s != "" {
		t, err := computer.ParseToolVersion(s)
		if err != nil {
			problems = append(problems, EnvComputerTool+": "+errs.From(err).Message)
		}
		tool = t
	}
	display := strings.TrimSpace(v.getenv("DISPLAY"))
	computer.SetXLogger(v.p.Logger().Named("x11").StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}))
	mgr := computer.NewManager(func() (computer.Driver, error) { return computer.OpenX11(display) })
	v.mu.Lock()
	v.engine, v.beta, v.computer, v.display, v.problems = imaging.New(vc), computer.NewBetaClient(vc, tool), mgr, display, problems
	v.mu.Unlock()
	for _, pr := range problems {
		v.p.Logger().Warn("vision configuration", "problem", pr)
	}
	v.p.Logger().Debug("vision configured", "config", vc.String(), "display", display, "tool", tool.ToolType)
	return nil
}

func (v *Area) stop(context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.computer != nil {
		return v.computer.Close()
	}
	return nil
}

// health is ok without a key or display: both toolsets are optional, and
// their tools say what to set. Details show what is configured.
func (v *Area) health(context.Context) sdk.Health {
	v.mu.RLock()
	defer v.mu.RUnlock()
	h := sdk.Health{Status: "ok", Details: map[string]any{}}
	if v.engine == nil {
		return sdk.Health{Status: "degraded", Message: "the vision plugin is not configured yet"}
	}
	h.Details["vision"] = map[string]any{
		"api_key_set": v.engine.Configured(), "model": v.engine.Model(), "display": v.display,
		"images_loaded": len(v.engine.ListImages()), "computer_tool": v.beta.Tool().ToolType,
	}
	if len(v.problems) > 0 {
		h.Status, h.Message = "degraded", strings.Join(v.problems, "; ")
		h.Details["problems"] = v.problems
	}
	return h
}

func notReady() error {
	return errs.New(503, errs.Unavailable, "the vision plugin is not configured yet; retry in a moment")
}

// eng returns the engine; withKey also requires an API key.
func (v *Area) eng(withKey bool) (*imaging.Engine, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.engine == nil {
		return nil, notReady()
	}
	if withKey && !v.engine.Configured() {
		return nil, imaging.NotConfiguredError()
	}
	return v.engine, nil
}

// mgr returns the session manager, refusing without a DISPLAY.
func (v *Area) mgr() (*computer.Manager, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.computer == nil {
		return nil, notReady()
	}
	if v.display == "" {
		return nil, computer.NotConfiguredDisplay()
	}
	return v.computer, nil
}

// computerSession is the computer-use session id names.
func (v *Area) computerSession(id string) (*computer.Session, error) {
	m, err := v.mgr()
	if err != nil {
		return nil, err
	}
	return m.Get(id)
}
