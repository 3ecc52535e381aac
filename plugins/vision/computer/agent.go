package computer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/cairn-mcp/cairn/plugins/vision/imaging"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Agent-loop bounds.
const (
	DefaultMaxTurns    = 50
	MaxTurnsCeiling    = 500
	DefaultAgentTokens = 4096
	MaxTaskLength      = 20_000
)

// BetaClient calls the hosted model's beta Messages API with the computer
// tool (the specification's beta API client).
type BetaClient struct {
	cfg    imaging.Config
	tool   ToolVersion
	client anthropic.Client
}

// NewBetaClient builds a client from an explicit configuration (the same
// one the vision engine uses) and a tool version; a zero ToolVersion means
// DefaultToolVersion.
func NewBetaClient(cfg imaging.Config, tool ToolVersion) *BetaClient {
	if tool.ToolType == "" {
		tool = DefaultToolVersion
	}
	if cfg.Model == "" {
		cfg.Model = imaging.DefaultModel
	}
	return &BetaClient{cfg: cfg, tool: tool, client: imaging.NewClient(cfg)}
}

// Tool returns the tool version the client sends.
func (b *BetaClient) Tool() ToolVersion { return b.tool }

// Configured reports whether an API key is set.
func (b *BetaClient) Configured() bool { return b.cfg.Configured() }

// Model is the hosted model the client drives.
func (b *BetaClient) Model() string { return b.cfg.Model }

// CheckAvailable asks the API's models endpoint for the configured model
// with the tool version's beta header: a cheap call that needs no tokens.
// Without an API key it refuses with ERR_NOT_CONFIGURED naming
// ANTHROPIC_API_KEY; when the API refuses the model or the beta it
// returns the API's reason (ERR_UPSTREAM_FAILED).
func (b *BetaClient) CheckAvailable(ctx context.Context) error {
	if !b.cfg.Configured() {
		return errs.Newf(503, errs.NotConfigured,
			"computer use with a hosted model needs its API key: set %s in the environment cairn runs in (and optionally %s, %s, CAIRN_COMPUTER_TOOL), then restart cairn",
			imaging.EnvAPIKey, imaging.EnvBaseURL, imaging.EnvModel).With("variable", imaging.EnvAPIKey)
	}
	_, err := b.client.Beta.Models.Get(ctx, b.cfg.Model, anthropic.BetaModelGetParams{Betas: []anthropic.AnthropicBeta{anthropic.AnthropicBeta(b.tool.Beta)}})
	if err != nil {
		if ctx.Err() != nil {
			return errs.New(499, errs.Cancelled, "the availability check was cancelled")
		}
		return imaging.UpstreamError(err, fmt.Sprintf("computer-use availability check (model %s, beta %s)", b.cfg.Model, b.tool.Beta)).With("variable", imaging.EnvModel)
	}
	return nil
}

// IsBetaAPIAvailable reports CheckAvailable as a boolean (the
// specification's isBetaAPIAvailable).
func (b *BetaClient) IsBetaAPIAvailable(ctx context.Context) bool {
	return b.CheckAvailable(ctx) == nil
}

// ToolParams converts tool definitions to the SDK's typed computer-tool
// params of their version.
func ToolParams(defs []ToolDefinition) []anthropic.BetaToolUnionParam {
	out := make([]anthropic.BetaToolUnionParam, len(defs))
	for i, d := range defs {
		w, h := int64(d.DisplayWidthPx), int64(d.DisplayHeightPx)
		var num param.Opt[int64]
		if d.DisplayNumber != nil {
			num = param.NewOpt(int64(*d.DisplayNumber))
		}
		switch d.Type {
		case ToolVersion20241022.ToolType:
			out[i] = anthropic.BetaToolUnionParam{OfComputerUseTool20241022: &anthropic.BetaToolComputerUse20241022Param{DisplayWidthPx: w, DisplayHeightPx: h, DisplayNumber: num}}
		case ToolVersion20250124.ToolType:
			out[i] = anthropic.BetaToolUnionParam{OfComputerUseTool20250124: &anthropic.BetaToolComputerUse20250124Param{DisplayWidthPx: w, DisplayHeightPx: h, DisplayNumber: num}}
		case ToolVersion20251124.ToolType:
			p := &anthropic.BetaToolComputerUse20251124Param{DisplayWidthPx: w, DisplayHeightPx: h, DisplayNumber: num}
			if d.EnableZoom != nil {
				p.EnableZoom = param.NewOpt(*d.EnableZoom)
			}
			out[i] = anthropic.BetaToolUnionParam{OfComputerUseTool20251124: p}
		default:
			// Unknown versions never get here (ParseToolVersion refuses
			// them); send the definition as it is rather than nothing.
			out[i] = param.Override[anthropic.BetaToolUnionParam](d)
		}
	}
	return out
}

// AgentOptions configure one run of the hosted-model loop.
type AgentOptions struct {
	// Task is what the model should do on the screen.
	Task string
	// System replaces the default system prompt.
	System string
	// MaxTurns bounds model calls (default 50, ceiling 500); the session's
	// own limits bound the actions.
	MaxTurns int
	// MaxTokens per model reply (default 4096).
	MaxTokens int
	// Progress is told about each turn.
	Progress func(turn int, message string)
}

// AgentResult is a finished run.
type AgentResult struct {
	Success         bool    `json:"success"`
	SessionID       string  `json:"sessionId"`
	StopReason      string  `json:"stopReason"`
	LimitReason     string  `json:"limitReason,omitempty"`
	Turns           int     `json:"turns"`
	ActionsExecuted int     `json:"actionsExecuted"`
	ActionsRefused  int     `json:"actionsRefused"`
	FinalText       string  `json:"finalText"`
	TokensUsed      int     `json:"tokensUsed"`
	Summary         Summary `json:"summary"`
	// LastScreenshot is the last screenshot the model was sent.
	LastScreenshot *Shot `json:"lastScreenshot,omitempty"`
}

// Stop reasons of a run besides the model's own ("end_turn", "max_tokens",
// ...).
const (
	StopLimit    = "limit"
	StopMaxTurns = "max_turns"
	StopState    = "session_not_active"
)

const defaultAgentSystem = "You control a computer screen through the computer tool. Take a screenshot first to see the screen. " +
	"Work step by step, check the result of important actions with a screenshot, and stop (answer without a tool call) when the task is done or cannot be done. " +
	"Key names follow xdotool (Return, ctrl+c, super, F1)."

// RunAgent drives an ACTIVE session with the hosted model: it sends the
// task and the computer tool definition, executes each action the model
// requests under the session's limits, returns screenshots as tool
// results, and stops when the model answers without a tool call, when a
// session limit is reached (no further model call is made), when the
// session leaves ACTIVE, or after MaxTurns model calls.
func (b *BetaClient) RunAgent(ctx context.Context, s *Session, o AgentOptions) (*AgentResult, error) {
	if !b.cfg.Configured() {
		return nil, imaging.NotConfiguredError()
	}
	task := strings.TrimSpace(o.Task)
	if task == "" {
		return nil, errs.Invalid("task", "minLength", "task must say what to do on the screen")
	}
	if len([]rune(task)) > MaxTaskLength {
		return nil, errs.Invalidf("task", "maxLength", "task is longer than %d characters", MaxTaskLength)
	}
	turns := o.MaxTurns
	if turns == 0 {
		turns = DefaultMaxTurns
	}
	if turns < 1 || turns > MaxTurnsCeiling {
		return nil, errs.Invalidf("maxTurns", "maximum", "maxTurns must be 1 to %d", MaxTurnsCeiling)
	}
	maxTokens := o.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultAgentTokens
	}
	if st := s.State(); st != Active {
		return nil, transition(st, "drive", "start or resume the session first")
	}
	system := o.System
	if system == "" {
		system = defaultAgentSystem
	}
	cfg := s.Config()
	params := anthropic.BetaMessageNewParams{
		Model:     anthropic.Model(b.cfg.Model),
		MaxTokens: int64(maxTokens),
		System:    []anthropic.BetaTextBlockParam{{Text: system}},
		Tools:     ToolParams(GetBetaToolDefinitions(b.tool, cfg.DisplayWidth, cfg.DisplayHeight, nil)),
		Betas:     []anthropic.AnthropicBeta{anthropic.AnthropicBeta(b.tool.Beta)},
		Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(task))},
	}
	res := &AgentResult{SessionID: s.ID()}
	progress := func(msg string) {
		if o.Progress != nil {
			o.Progress(res.Turns, msg)
		}
	}
	for res.Turns < turns {
		if lim := s.CheckLimits(); lim.Limited {
			res.StopReason, res.LimitReason = StopLimit, lim.Reason
			break
		}
		if st := s.State(); st != Active {
			res.StopReason = StopState
			break
		}
		res.Turns++
		progress(fmt.Sprintf("turn %d: asking the model", res.Turns))
		msg, err := b.client.Beta.Messages.New(ctx, params)
		if err != nil {
			if ctx.Err() != nil {
				return nil, errs.New(499, errs.Cancelled, "the agent run was cancelled")
			}
			return nil, imaging.UpstreamError(err, "computer-use turn")
		}
		res.TokensUsed += int(msg.Usage.InputTokens + msg.Usage.OutputTokens)
		params.Messages = append(params.Messages, msg.ToParam())
		var results []anthropic.BetaContentBlockParamUnion
		var texts []string
		limitHit := false
		for _, blk := range msg.Content {
			switch blk.Type {
			case "text":
				texts = append(texts, blk.Text)
			case "tool_use":
				if limitHit {
					// The model asked for more in the same turn; nothing
					// more runs once a limit is reached.
					res.ActionsRefused++
					continue
				}
				tr, executed, lim := b.runTool(ctx, s, blk, res)
				results = append(results, tr)
				if executed {
					res.ActionsExecuted++
				} else {
					res.ActionsRefused++
				}
				if lim != "" {
					limitHit, res.LimitReason = true, lim
				}
			}
		}
		if len(texts) > 0 {
			res.FinalText = strings.Join(texts, "\n")
		}
		if limitHit {
			res.StopReason = StopLimit
			break
		}
		if len(results) == 0 {
			res.StopReason = string(msg.StopReason)
			if res.StopReason == "" {
				res.StopReason = "end_turn"
			}
			break
		}
		params.Messages = append(params.Messages, anthropic.NewBetaUserMessage(results...))
		progress(fmt.Sprintf("turn %d: executed %d action(s)", res.Turns, len(results)))
	}
	if res.StopReason == "" {
		res.StopReason = StopMaxTurns
	}
	res.Success = res.StopReason != StopState
	res.Summary = s.GetSummary()
	return res, nil
}

// runTool executes one tool_use block and builds its tool_result. It
// reports whether an action ran and, when a limit refused it, the reason.
func (b *BetaClient) runTool(ctx context.Context, s *Session, blk anthropic.BetaContentBlockUnion, res *AgentResult) (anthropic.BetaContentBlockParamUnion, bool, string) {
	fail := func(msg string) anthropic.BetaContentBlockParamUnion {
		r := anthropic.NewBetaToolResultTextBlockParam(blk.ID, msg, true)
		return anthropic.BetaContentBlockParamUnion{OfToolResult: &r}
	}
	if blk.Name != "computer" {
		return fail(fmt.Sprintf("unknown tool %q; only the computer tool is available", blk.Name)), false, ""
	}
	var input map[string]any
	if err := json.Unmarshal(blk.Input, &input); err != nil {
		return fail("the tool input is not a JSON object"), false, ""
	}
	action, _ := input["action"].(string)
	rest := make(map[string]any, len(input))
	for k, v := range input {
		if k != "action" {
			rest[k] = v
		}
	}
	if !b.tool.Allows(action) {
		// The model asked for an action its tool version lacks: say so in
		// words it can act on (the API's own tool_result error form).
		return fail(b.tool.refusal(action)), false, ""
	}
	internal, p, err := ConvertBetaToInternal(b.tool, action, rest)
	if err != nil {
		return fail(errs.From(err).Message), false, ""
	}
	if internal == CursorPosition {
		c := s.Cursor()
		r := anthropic.NewBetaToolResultTextBlockParam(blk.ID, fmt.Sprintf("X=%d,Y=%d", c.X, c.Y), false)
		return anthropic.BetaContentBlockParamUnion{OfToolResult: &r}, false, ""
	}
	out, err := s.ExecuteAction(ctx, internal, p)
	if err != nil {
		te := errs.From(err)
		lim := ""
		if te.Code == errs.LimitExceeded {
			lim = te.Message
		}
		return fail(te.Message), false, lim
	}
	if out.Screenshot != nil {
		if internal != string(Zoom) {
			res.LastScreenshot = &Shot{Success: true, MimeType: out.Screenshot.MimeType, Width: out.Screenshot.Width, Height: out.Screenshot.Height, Bytes: out.Screenshot.Bytes}
		}
		tr := anthropic.BetaToolResultBlockParam{ToolUseID: blk.ID}
		tr.Content = []anthropic.BetaToolResultBlockParamContentUnion{{OfImage: &anthropic.BetaImageBlockParam{
			Source: anthropic.BetaImageBlockParamSourceUnion{OfBase64: &anthropic.BetaBase64ImageSourceParam{
				Data: base64.StdEncoding.EncodeToString(out.Screenshot.Data), MediaType: anthropic.BetaBase64ImageSourceMediaTypeImagePNG,
			}},
		}}}
		return anthropic.BetaContentBlockParamUnion{OfToolResult: &tr}, true, ""
	}
	r := anthropic.NewBetaToolResultTextBlockParam(blk.ID, fmt.Sprintf("done: %s; cursor at %d,%d", s.lastResult(), out.Cursor.X, out.Cursor.Y), false)
	return anthropic.BetaContentBlockParamUnion{OfToolResult: &r}, true, ""
}
