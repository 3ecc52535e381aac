package sdk

import (
	"context"
	"sort"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// CompletionRef names what is being completed: a prompt's argument
// (RefType "prompt", Name the prompt) or a resource template's variable
// (RefType "resource", Name the URI template).
type CompletionRef struct {
	RefType string
	Name    string
}

// CompletionRequest is one completion/complete call routed to a plugin.
type CompletionRequest struct {
	Ref CompletionRef
	// Argument is the argument (or template variable) being completed and
	// Value what the user has typed of it so far.
	Argument string
	Value    string
	// Context holds the arguments already resolved.
	Context map[string]string
}

// Completer suggests values for an argument. ok false means it does not
// know the argument, so the next completer is asked.
type Completer func(ctx context.Context, req CompletionRequest) (values []string, ok bool, err error)

// MaxCompletions is the most values one completion answer holds (MCP caps
// it at 100); when a completer offers more, the answer's total counts what
// it offered and hasMore is set.
const MaxCompletions = 100

// CompleteWith registers a completer; completers are asked in the order
// they were registered until one knows the argument.
func (p *Plugin) CompleteWith(c Completer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.completers = append(p.completers, c)
}

// Complete asks the plugin's completers for values.
func (p *Plugin) complete(ctx context.Context, req CompletionRequest) ([]string, error) {
	p.mu.RLock()
	list := append([]Completer(nil), p.completers...)
	p.mu.RUnlock()
	for _, c := range list {
		values, ok, err := c(ctx, req)
		if err != nil {
			return nil, err
		}
		if ok {
			return values, nil
		}
	}
	return nil, nil
}

// MatchPrefix keeps the candidates that start with typed (ignoring case),
// sorted and without duplicates: the common case of a completer.
func MatchPrefix(candidates []string, typed string) []string {
	typed = strings.ToLower(typed)
	seen := map[string]bool{}
	var out []string
	for _, c := range candidates {
		if !seen[c] && strings.HasPrefix(strings.ToLower(c), typed) {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// completionRequest is the SDK's view of the seam's completion request.
func completionRequest(r seam.CompleteRequest) CompletionRequest {
	return CompletionRequest{
		Ref:      CompletionRef{RefType: r.RefType, Name: r.RefName},
		Argument: r.Argument, Value: r.Value, Context: r.Context,
	}
}

func (s *server) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	values, err := s.p.complete(ctx, completionRequest(convert.CompleteRequestFromProto(req)))
	if err != nil {
		return nil, err
	}
	out := seam.Completion{Values: values}
	if len(values) > MaxCompletions {
		out.Values, out.Total, out.HasMore = values[:MaxCompletions], len(values), true
	}
	return convert.CompletionToProto(out), nil
}
