package core

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/cairn-mcp/cairn/plugins/core/skills"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
)

// taskArgument is the argument a skill takes when its frontmatter names
// none: the task to apply it to.
var taskArgument = sdk.PromptArgument{Name: "task_id", Description: "The task to apply the skill to (T-<n>); its title and status go into the prompt."}

// registerPrompts serves every skill of the registry as an MCP prompt of the
// same name, and tells the host when the registry changes so clients hear
// notifications/prompts/list_changed.
func (c *Area) registerPrompts() {
	c.p.ListPromptsWith(c.skillPrompts)
}

// watchSkills is called once the registry is open.
func (c *Area) watchSkills(reg *skills.Registry) {
	reg.OnChange(func() {
		// OnChange must not block the registry's goroutine.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
			defer cancel()
			if err := c.p.PromptsChanged(ctx); err != nil {
				c.p.Logger().Warn("prompt list change not published", "error", err)
			}
		}()
	})
}

func (c *Area) skillPrompts(context.Context) ([]sdk.Prompt, error) {
	list, err := c.skillSnapshot()
	if err != nil {
		return nil, err
	}
	out := make([]sdk.Prompt, 0, len(list)+1)
	out = append(out, c.resumePrompt())
	for _, s := range list {
		args := []sdk.PromptArgument{taskArgument}
		if len(s.Arguments) > 0 {
			args = args[:0]
			for _, a := range s.Arguments {
				args = append(args, sdk.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			}
		}
		skill := s
		out = append(out, sdk.Prompt{
			Name: s.Name, Title: "Skill " + s.Name, Description: s.Description, Arguments: args,
			Render: func(_ context.Context, in map[string]string) (sdk.PromptResult, error) {
				return c.renderSkill(skill, in)
			},
		})
	}
	return out, nil
}

// renderSkill is the skill's instructions, preceded by what the client
// filled in; a task_id brings the task's title and status.
func (c *Area) renderSkill(s skills.Skill, args map[string]string) (sdk.PromptResult, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Use the cairn skill %s (version %s).\n", s.Name, s.Version)
	if id := args["task_id"]; id != "" {
		svc, err := c.svc()
		if err != nil {
			return sdk.PromptResult{}, err
		}
		t, err := svc.Get(tasks.GetInput{TaskID: id})
		if err != nil {
			return sdk.PromptResult{}, err
		}
		fmt.Fprintf(&b, "Apply it to task %s %q (status %s, priority %s, project %s).\n", t.TaskID, t.Title, t.Status, t.Priority, t.Project)
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		if k != "task_id" && args[k] != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, args[k])
	}
	b.WriteString("\n")
	b.WriteString(s.Body)
	return sdk.PromptResult{Description: s.Description, Messages: []sdk.PromptMessage{{Role: "user", Text: b.String()}}}, nil
}
