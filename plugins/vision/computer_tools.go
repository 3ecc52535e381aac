package vision

import (
	"context"

	"github.com/cairn-mcp/cairn/sdk/errs"

	"github.com/cairn-mcp/cairn/plugins/vision/computer"
	"github.com/cairn-mcp/cairn/plugins/vision/imaging"
	"github.com/cairn-mcp/cairn/sdk"
)

// ComputerSessionStartInput is computer_session_start's input; limits
// above the fixed ceilings are refused.
type ComputerSessionStartInput struct {
	DisplayWidth       int    `json:"displayWidth,omitempty" jsonschema:"minimum=1,maximum=4096,description=Coordinate space width (default: the display's; screenshots and coordinates are scaled when it differs)"`
	DisplayHeight      int    `json:"displayHeight,omitempty" jsonschema:"minimum=1,maximum=4096"`
	MaxActions         int    `json:"maxActions,omitempty" jsonschema:"minimum=1,maximum=1000,default=100"`
	MaxDurationMs      int    `json:"maxDurationMs,omitempty" jsonschema:"minimum=1,maximum=3600000,default=300000,description=Active time (pauses excluded)"`
	MaxScreenshots     int    `json:"maxScreenshots,omitempty" jsonschema:"minimum=1,maximum=200,default=50"`
	CaptureScreenshots *bool  `json:"captureScreenshots,omitempty" jsonschema:"description=Screenshot at start and end (default true)"`
	AutoPauseOnError   bool   `json:"autoPauseOnError,omitempty" jsonschema:"description=Pause the session when an action fails (default false)"`
	Description        string `json:"description,omitempty" jsonschema:"maxLength=1000"`
}

func (in ComputerSessionStartInput) config() computer.SessionConfig {
	return computer.SessionConfig{
		DisplayWidth: in.DisplayWidth, DisplayHeight: in.DisplayHeight, MaxActions: in.MaxActions,
		MaxDurationMs: in.MaxDurationMs, MaxScreenshots: in.MaxScreenshots,
		CaptureScreenshots: in.CaptureScreenshots, AutoPauseOnError: in.AutoPauseOnError, Description: in.Description,
	}
}

// ComputerSessionIDInput names a computer-use session.
type ComputerSessionIDInput struct {
	SessionID string `json:"sessionId" jsonschema:"minLength=1,maxLength=64"`
}

// ActionInput is computer_action's input.
type ActionInput struct {
	SessionID string         `json:"sessionId" jsonschema:"minLength=1,maxLength=64"`
	Action    string         `json:"action" jsonschema:"enum=screenshot,enum=mouse_move,enum=left_click,enum=right_click,enum=double_click,enum=middle_click,enum=triple_click,enum=left_click_drag,enum=left_mouse_down,enum=left_mouse_up,enum=type,enum=key,enum=hold_key,enum=scroll,enum=wait,enum=zoom"`
	Params    map[string]any `json:"params,omitempty" jsonschema:"description=Omit for screenshot. mouse_move: x y; clicks (left/right/middle/double/triple): optional x y and modifiers (a chord held during the click such as shift or ctrl+shift); left_click_drag: x y and optional startX startY modifiers; left_mouse_down/up: optional x y; type: text (≤10000 chars); key: key in xdotool names (Return ctrl+c super F1; spaces separate chords); hold_key: key and durationMs (0-60000); wait: durationMs (0-60000); scroll: direction (up down left right) and optional amount (1-50) x y modifiers; zoom: region [x1 y1 x2 y2] (returned enlarged as image content)"`
}

// SequenceInput is computer_sequence's input.
type SequenceInput struct {
	SessionID           string                  `json:"sessionId" jsonschema:"minLength=1,maxLength=64"`
	Actions             []computer.SequenceStep `json:"actions" jsonschema:"minItems=1,maxItems=1000"`
	ContinueOnError     bool                    `json:"continueOnError,omitempty" jsonschema:"description=Keep going after a failed action (default false); a limit always stops"`
	DelayBetweenActions *int                    `json:"delayBetweenActions,omitempty" jsonschema:"minimum=0,maximum=60000,default=100,description=Milliseconds between actions"`
}

// AgentRunInput is computer_agent_run's input.
type AgentRunInput struct {
	Task      string `json:"task" jsonschema:"minLength=1,maxLength=20000,description=What the hosted model should do on the screen"`
	SessionID string `json:"sessionId,omitempty" jsonschema:"maxLength=64,description=An ACTIVE session to drive; without it a new session is started with the limits below and ended afterwards"`
	MaxTurns  int    `json:"maxTurns,omitempty" jsonschema:"minimum=1,maximum=500,default=50,description=Model calls at most"`
	ComputerSessionStartInput
}

// shotContent moves screenshot bytes out of the JSON into image content.
func shotContent(shots ...*computer.Shot) []sdk.Content {
	var out []sdk.Content
	for _, s := range shots {
		if s != nil && len(s.Data) > 0 {
			out = append(out, sdk.Content{Type: "image", Data: s.Data, MIMEType: s.MimeType})
			s.Data = nil
		}
	}
	return out
}

// StartOutput is computer_session_start's output; the initial screenshot
// comes as image content.
type StartOutput struct {
	computer.StartResult
	betaNote
	images []sdk.Content
}

// ExtraContent implements sdk.ContentProvider.
func (o StartOutput) ExtraContent() []sdk.Content { return o.images }

// ActionOutput is computer_action's output; a screenshot comes as image
// content, not in the JSON.
type ActionOutput struct {
	computer.ActionResult
	images []sdk.Content
}

// ExtraContent implements sdk.ContentProvider.
func (o ActionOutput) ExtraContent() []sdk.Content { return o.images }

// SequenceOutput is computer_sequence's output; screenshots come as image
// content in order.
type SequenceOutput struct {
	computer.SequenceResult
	images []sdk.Content
}

// ExtraContent implements sdk.ContentProvider.
func (o SequenceOutput) ExtraContent() []sdk.Content { return o.images }

// EndOutput is computer_session_end's output.
type EndOutput struct {
	computer.EndResult
	images []sdk.Content
}

// ExtraContent implements sdk.ContentProvider.
func (o EndOutput) ExtraContent() []sdk.Content { return o.images }

// AgentOutput is computer_agent_run's output.
type AgentOutput struct {
	computer.AgentResult
	SessionEnded bool `json:"sessionEnded"`
	images       []sdk.Content
}

// ExtraContent implements sdk.ContentProvider.
func (o AgentOutput) ExtraContent() []sdk.Content { return o.images }

// HistoryOutput is computer_action_history's output.
type HistoryOutput struct {
	SessionID string                  `json:"sessionId"`
	Actions   []computer.ActionRecord `json:"actions"`
	Count     int                     `json:"count"`
}

// betaNote adds the hosted model's availability to the start
// result when an API key is configured.
type betaNote struct {
	BetaUnavailableReason string `json:"betaUnavailableReason,omitempty"`
}

// BetaStatusOutput is computer_beta_status' output.
type BetaStatusOutput struct {
	Tool        computer.ToolVersion      `json:"tool"`
	Model       string                    `json:"model"`
	Versions    []computer.ToolVersion    `json:"versions"`
	Reason      string                    `json:"reason,omitempty"`
	Definitions []computer.ToolDefinition `json:"definitions"`
	Available   bool                      `json:"available"`
	APIKeySet   bool                      `json:"apiKeySet"`
	Display     string                    `json:"display"`
}

// registerComputerTools registers the screen-control tools (toolset
// computer).
func (v *Area) registerComputerTools() {
	sdk.AddTools(v.p,
		v.computerSessionStart(),
		v.computerAction(),
		v.computerSequence(),
		v.computerSessionPause(),
		v.computerSessionResume(),
		v.computerSessionEnd(),
		v.computerSessionSummary(),
		v.computerActionHistory(),
		v.computerBetaStatus(),
		v.computerAgentRun(),
	)
}

// computerSessionStart declares computer_session_start.
func (v *Area) computerSessionStart() sdk.Tool[ComputerSessionStartInput, StartOutput] {
	return sdk.Tool[ComputerSessionStartInput, StartOutput]{
		Name: "computer_session_start", Title: "Start computer session", Toolset: ToolsetComputer, SuccessStatus: 201,
		Description: "Start a computer-use session on the X11 display with hard action, time and screenshot limits.",
		Handler: func(ctx context.Context, in ComputerSessionStartInput) (StartOutput, error) {
			m, err := v.mgr()
			if err != nil {
				return StartOutput{}, err
			}
			_, res, err := m.StartSession(ctx, in.config())
			if err != nil {
				return StartOutput{}, err
			}
			out := StartOutput{StartResult: *res, images: shotContent(res.Screenshot)}
			// Direct control needs no hosted model; when one is configured,
			// say whether it answers so a later computer_agent_run does not
			// surprise.
			v.mu.RLock()
			beta := v.beta
			v.mu.RUnlock()
			if beta != nil && beta.Configured() {
				berr := beta.CheckAvailable(ctx)
				ok := berr == nil
				out.BetaAvailable = &ok
				if berr != nil {
					out.BetaUnavailableReason = errs.From(berr).Message
				}
			}
			return out, nil
		},
	}
}

// computerAction declares computer_action.
func (v *Area) computerAction() sdk.Tool[ActionInput, ActionOutput] {
	return sdk.Tool[ActionInput, ActionOutput]{
		Name: "computer_action", Title: "Execute screen action", Toolset: ToolsetComputer, Destructive: true, OpenWorld: true,
		Description: "Run one mouse, keyboard, wait, scroll or screenshot action in an active computer-use session.",
		Handler: func(ctx context.Context, in ActionInput) (ActionOutput, error) {
			s, err := v.computerSession(in.SessionID)
			if err != nil {
				return ActionOutput{}, err
			}
			params := in.Params
			if params == nil {
				params = map[string]any{}
			}
			res, err := s.ExecuteAction(ctx, in.Action, params)
			if err != nil {
				return ActionOutput{}, err
			}
			return ActionOutput{ActionResult: *res, images: shotContent(res.Screenshot)}, nil
		},
	}
}

// computerSequence declares computer_sequence.
func (v *Area) computerSequence() sdk.Tool[SequenceInput, SequenceOutput] {
	return sdk.Tool[SequenceInput, SequenceOutput]{
		Name: "computer_sequence", Title: "Execute action sequence", Toolset: ToolsetComputer, Destructive: true, OpenWorld: true,
		Description: "Run several actions in order in a session, with a delay between them.",
		Handler: func(ctx context.Context, in SequenceInput) (SequenceOutput, error) {
			s, err := v.computerSession(in.SessionID)
			if err != nil {
				return SequenceOutput{}, err
			}
			for i := range in.Actions {
				if in.Actions[i].Params == nil {
					in.Actions[i].Params = map[string]any{}
				}
			}
			res, err := s.ExecuteSequence(ctx, in.Actions, computer.SequenceOptions{ContinueOnError: in.ContinueOnError, DelayBetweenActions: in.DelayBetweenActions})
			if err != nil {
				return SequenceOutput{}, err
			}
			var shots []*computer.Shot
			for i, r := range res.Results {
				if r.Result != nil {
					shots = append(shots, r.Result.Screenshot)
				}
				sdk.ReportProgress(ctx, float64(i+1), float64(res.TotalActions), "")
			}
			return SequenceOutput{SequenceResult: *res, images: shotContent(shots...)}, nil
		},
	}
}

// computerSessionPause declares computer_session_pause.
func (v *Area) computerSessionPause() sdk.Tool[ComputerSessionIDInput, computer.Summary] {
	return sdk.Tool[ComputerSessionIDInput, computer.Summary]{
		Name: "computer_session_pause", Title: "Pause computer session", Toolset: ToolsetComputer,
		Description: "Pause an active session; paused time does not count against its limits.",
		Handler: func(_ context.Context, in ComputerSessionIDInput) (computer.Summary, error) {
			s, err := v.computerSession(in.SessionID)
			if err != nil {
				return computer.Summary{}, err
			}
			if err := s.Pause(); err != nil {
				return computer.Summary{}, err
			}
			return s.GetSummary(), nil
		},
	}
}

// computerSessionResume declares computer_session_resume.
func (v *Area) computerSessionResume() sdk.Tool[ComputerSessionIDInput, computer.Summary] {
	return sdk.Tool[ComputerSessionIDInput, computer.Summary]{
		Name: "computer_session_resume", Title: "Resume computer session", Toolset: ToolsetComputer,
		Description: "Resume a paused session.",
		Handler: func(_ context.Context, in ComputerSessionIDInput) (computer.Summary, error) {
			s, err := v.computerSession(in.SessionID)
			if err != nil {
				return computer.Summary{}, err
			}
			if err := s.Resume(); err != nil {
				return computer.Summary{}, err
			}
			return s.GetSummary(), nil
		},
	}
}

// computerSessionEnd declares computer_session_end.
func (v *Area) computerSessionEnd() sdk.Tool[ComputerSessionIDInput, EndOutput] {
	return sdk.Tool[ComputerSessionIDInput, EndOutput]{
		Name: "computer_session_end", Title: "End computer session", Toolset: ToolsetComputer,
		Description: "End a computer-use session and get its summary.",
		Handler: func(ctx context.Context, in ComputerSessionIDInput) (EndOutput, error) {
			s, err := v.computerSession(in.SessionID)
			if err != nil {
				return EndOutput{}, err
			}
			res, err := s.End(ctx)
			if err != nil {
				return EndOutput{}, err
			}
			return EndOutput{EndResult: *res, images: shotContent(res.Screenshot)}, nil
		},
	}
}

// computerSessionSummary declares computer_session_summary.
func (v *Area) computerSessionSummary() sdk.Tool[ComputerSessionIDInput, computer.Summary] {
	return sdk.Tool[ComputerSessionIDInput, computer.Summary]{
		Name: "computer_session_summary", Title: "Computer session summary", Toolset: ToolsetComputer, ReadOnly: true, Idempotent: true,
		Description: "Show a session's state, counts, errors and remaining limits without ending it.",
		Handler: func(_ context.Context, in ComputerSessionIDInput) (computer.Summary, error) {
			s, err := v.computerSession(in.SessionID)
			if err != nil {
				return computer.Summary{}, err
			}
			return s.GetSummary(), nil
		},
	}
}

// computerActionHistory declares computer_action_history.
func (v *Area) computerActionHistory() sdk.Tool[ComputerSessionIDInput, HistoryOutput] {
	return sdk.Tool[ComputerSessionIDInput, HistoryOutput]{
		Name: "computer_action_history", Title: "Computer action history", Toolset: ToolsetComputer, ReadOnly: true, Idempotent: true,
		Description: "List a session's executed actions in order.",
		Handler: func(_ context.Context, in ComputerSessionIDInput) (HistoryOutput, error) {
			s, err := v.computerSession(in.SessionID)
			if err != nil {
				return HistoryOutput{}, err
			}
			h := s.GetActionHistory()
			return HistoryOutput{SessionID: s.ID(), Actions: h, Count: len(h)}, nil
		},
	}
}

// computerBetaStatus declares computer_beta_status.
func (v *Area) computerBetaStatus() sdk.Tool[struct{}, BetaStatusOutput] {
	return sdk.Tool[struct{}, BetaStatusOutput]{
		Name: "computer_beta_status", Title: "Computer-use API status", Toolset: ToolsetComputer, ReadOnly: true, OpenWorld: true,
		Description: "Show the computer tool version, beta header, model and whether the hosted API answers.",
		Handler: func(ctx context.Context, _ struct{}) (BetaStatusOutput, error) {
			v.mu.RLock()
			beta, display := v.beta, v.display
			v.mu.RUnlock()
			if beta == nil {
				return BetaStatusOutput{}, notReady()
			}
			out := BetaStatusOutput{Tool: beta.Tool(), Model: beta.Model(), Versions: computer.ToolVersions(), APIKeySet: beta.Configured(), Display: display}
			w, h := v.agentDisplaySize(0, 0)
			out.Definitions = computer.GetBetaToolDefinitions(beta.Tool(), w, h, nil)
			if err := beta.CheckAvailable(ctx); err != nil {
				out.Reason = errs.From(err).Message
			} else {
				out.Available = true
			}
			return out, nil
		},
	}
}

// computerAgentRun declares computer_agent_run.
func (v *Area) computerAgentRun() sdk.Tool[AgentRunInput, AgentOutput] {
	return sdk.Tool[AgentRunInput, AgentOutput]{
		Name: "computer_agent_run", Title: "Let the hosted model drive the screen", Toolset: ToolsetComputer, Destructive: true, OpenWorld: true,
		// Up to 500 model turns: a task the client polls (docs/decisions.md D39).
		TaskSupport: sdk.TaskOptional,
		Description: "Let the hosted model drive a session by screenshots until it stops or a limit is reached (needs ANTHROPIC_API_KEY and DISPLAY).",
		Handler:     v.runAgent,
	}
}

// runAgent is computer_agent_run: it lets the hosted model drive a given
// session, or one it starts and ends for the run, and shows how the run
// left the screen.
func (v *Area) runAgent(ctx context.Context, in AgentRunInput) (AgentOutput, error) {
	v.mu.RLock()
	beta := v.beta
	v.mu.RUnlock()
	if beta == nil {
		return AgentOutput{}, notReady()
	}
	if !beta.Configured() {
		return AgentOutput{}, imaging.NotConfiguredError()
	}
	m, err := v.mgr()
	if err != nil {
		return AgentOutput{}, err
	}
	var s *computer.Session
	owned := false
	if in.SessionID != "" {
		if s, err = m.Get(in.SessionID); err != nil {
			return AgentOutput{}, err
		}
		if err := beta.CheckAvailable(ctx); err != nil {
			return AgentOutput{}, err
		}
	} else {
		cfg := in.config()
		if cfg.CaptureScreenshots == nil {
			f := false // the model takes its own screenshots
			cfg.CaptureScreenshots = &f
		}
		if cfg.DisplayWidth == 0 && cfg.DisplayHeight == 0 {
			cfg.DisplayWidth, cfg.DisplayHeight = v.agentDisplaySize(0, 0)
		}
		if s, _, err = m.StartSession(ctx, cfg, computer.WithBetaCheck(beta.CheckAvailable)); err != nil {
			return AgentOutput{}, err
		}
		owned = true
	}
	res, err := beta.RunAgent(ctx, s, computer.AgentOptions{
		Task: in.Task, MaxTurns: in.MaxTurns,
		Progress: func(turn int, msg string) { sdk.ReportProgress(ctx, float64(turn), 0, msg) },
	})
	out := AgentOutput{}
	if owned {
		if end, e2 := s.End(context.WithoutCancel(ctx)); e2 == nil {
			out.SessionEnded = true
			if res != nil {
				res.Summary = end.Summary
			}
		}
	}
	if err != nil {
		return AgentOutput{}, err
	}
	out.AgentResult = *res
	// Show the agent host how the run left the screen (not counted
	// against the session's limits: the run is over).
	if d, derr := m.Driver(); derr == nil {
		if img, cerr := d.Capture(); cerr == nil {
			cfg := s.Config()
			if data, eerr := computer.EncodeScreenshot(img, cfg.DisplayWidth, cfg.DisplayHeight); eerr == nil {
				out.images = []sdk.Content{{Type: "image", Data: data, MIMEType: "image/png"}}
			}
		}
	}
	return out, nil
}

// agentDisplaySize is the coordinate space the hosted model is given: the
// screen's size scaled down, aspect kept, to the model's image limits
// (screenshots above them are downscaled by the API, which would make the
// model's coordinates miss). Without a display it is the seed's
// 1920×1080, scaled the same way.
func (v *Area) agentDisplaySize(w, h int) (int, int) {
	if w == 0 || h == 0 {
		w, h = computer.DefaultDisplayWidth, computer.DefaultDisplayHeight
		if m, err := v.mgr(); err == nil {
			if d, err := m.Driver(); err == nil {
				w, h = d.Size()
			}
		}
	}
	return imaging.FitWithin(w, h, imaging.DefaultLimits.MaxLongEdge, imaging.DefaultLimits.MaxPixels)
}
