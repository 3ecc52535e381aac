package sdk

import (
	"context"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Prompt is an MCP prompt a plugin serves: a message template the client
// offers its user (a slash command), filled in with Arguments.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	// Render builds the messages from the arguments. It returns an *Error
	// for an invalid argument (400) or a prompt that no longer exists (404).
	Render func(ctx context.Context, args map[string]string) (PromptResult, error)
}

// PromptArgument is one named argument of a prompt (the seam's type).
type PromptArgument = seam.PromptArgument

// PromptResult is a rendered prompt.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
}

// PromptMessage is one message of a rendered prompt; Role is "user" or
// "assistant". Its content is Text, or Content when set (an image, audio
// clip or embedded resource; see ImageContent, EmbeddedResource). It is
// the seam's type.
type PromptMessage = seam.PromptMessage

// promptSet holds a plugin's fixed prompts and the functions that list its
// changing ones (a registry that files come and go from).
type promptSet struct {
	fixed   []Prompt
	listers []func(ctx context.Context) ([]Prompt, error)
}

// AddPrompt declares a prompt.
func (p *Plugin) AddPrompt(pr Prompt) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prompts.fixed = append(p.prompts.fixed, pr)
}

// ListPromptsWith registers a function that lists prompts that change while
// the plugin runs. The host asks again whenever a client lists prompts, and
// tells clients the list changed when the answer differs.
func (p *Plugin) ListPromptsWith(f func(ctx context.Context) ([]Prompt, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prompts.listers = append(p.prompts.listers, f)
}

// listPrompts returns every prompt the plugin serves now, sorted by name; a
// fixed prompt wins over a listed one of the same name.
func (p *Plugin) listPrompts(ctx context.Context) ([]Prompt, error) {
	p.mu.RLock()
	out := append([]Prompt(nil), p.prompts.fixed...)
	listers := append([]func(context.Context) ([]Prompt, error)(nil), p.prompts.listers...)
	p.mu.RUnlock()
	seen := map[string]bool{}
	for _, pr := range out {
		seen[pr.Name] = true
	}
	for _, l := range listers {
		more, err := l(ctx)
		if err != nil {
			return nil, err
		}
		for _, pr := range more {
			if !seen[pr.Name] {
				seen[pr.Name] = true
				out = append(out, pr)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// getPrompt renders the named prompt, checking its required arguments.
func (p *Plugin) getPrompt(ctx context.Context, name string, args map[string]string) (PromptResult, error) {
	list, err := p.listPrompts(ctx)
	if err != nil {
		return PromptResult{}, err
	}
	for _, pr := range list {
		if pr.Name != name {
			continue
		}
		for _, a := range pr.Arguments {
			if a.Required && args[a.Name] == "" {
				return PromptResult{}, errs.Invalid(a.Name, "required", "prompt "+name+" needs argument "+a.Name)
			}
		}
		if pr.Render == nil {
			return PromptResult{Description: pr.Description}, nil
		}
		return pr.Render(ctx, args)
	}
	return PromptResult{}, errs.NotFoundf(errs.NotFound, "name", "no prompt named %q in plugin %s", name, p.name)
}

// seamPrompt is a prompt as it crosses to the host: without its Render.
func seamPrompt(pr Prompt) seam.Prompt {
	return seam.Prompt{Name: pr.Name, Title: pr.Title, Description: pr.Description, Arguments: pr.Arguments}
}

func (s *server) ListPrompts(ctx context.Context, _ *pb.ListPromptsRequest) (*pb.ListPromptsResponse, error) {
	list, err := s.p.listPrompts(ctx)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	prompts := make([]seam.Prompt, 0, len(list))
	for _, pr := range list {
		prompts = append(prompts, seamPrompt(pr))
	}
	return convert.PromptsToProto(prompts), nil
}

func (s *server) GetPrompt(ctx context.Context, req *pb.GetPromptRequest) (*pb.GetPromptResponse, error) {
	name, args := convert.GetPromptFromProto(req)
	res, err := s.p.getPrompt(ctx, name, args)
	if err != nil {
		e := errs.From(err)
		if e.Status == 0 {
			e.Status = 500
		}
		return convert.PromptResultToProto(seam.PromptResult{Err: e}), nil
	}
	return convert.PromptResultToProto(seam.PromptResult{Description: res.Description, Messages: res.Messages}), nil
}
