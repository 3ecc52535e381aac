package mcpserver

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/internal/skillsext"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// skillsTTLMs is the freshness hint of a skills/list or skills/get answer:
// the registry shows an edit within a second (docs/decisions.md D14).
const skillsTTLMs = 1000

// skillsCapability is what initialize declares of the skills extension: it
// is served, without resources/directory/read (a cairn skill is one file,
// which its entry already lists).
func skillsCapability() map[string]any {
	return map[string]any{skillsext.ExtensionKey: map[string]any{}}
}

// extensionsCapability declares every extension the host serves: skills
// and MCP tasks (mcp_tasks.go).
func extensionsCapability() map[string]any {
	ext := skillsCapability()
	ext[mcpTasksExtension] = map[string]any{}
	return ext
}

// answerSkills answers skills/list and skills/get from the skill:// SKILL.md
// resources the session's plugins serve, read through the plugin as
// resources/read reads them (docs/decisions.md D14). ok is false for any
// other message, which goes on to mcp-go. Every transport calls it before
// dispatching.
func (srv *Server) answerSkills(ctx context.Context, method string, body []byte) (resp mcp.JSONRPCMessage, ok bool) {
	if method != skillsext.MethodList && method != skillsext.MethodGet {
		return nil, false
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			URI    *string `json:"uri"`
			Cursor *string `json:"cursor"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.ID) == 0 {
		return nil, false // mcp-go answers what is not a request
	}
	var id any
	_ = json.Unmarshal(req.ID, &id)
	refuse := func(msg, field string) (mcp.JSONRPCMessage, bool) {
		return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id),
			Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_PARAMS, msg, map[string]any{"field": field})}, true
	}
	// Skills come and go with their files: ask the plugins again, as
	// resources/list does.
	srv.refreshResources(ctx)
	entries := srv.skillEntries(ctx)
	result := map[string]any{"resultType": "complete", "ttlMs": skillsTTLMs, "cacheScope": "private"}
	if method == skillsext.MethodList {
		if req.Params.Cursor != nil {
			return refuse("skills/list returns every skill in one page, so it takes no cursor", "cursor")
		}
		result["skills"] = entries
		return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), result), true
	}
	if req.Params.URI == nil || *req.Params.URI == "" {
		return refuse("skills/get needs params.uri, the URI of a skill's SKILL.md (skills/list names them)", "uri")
	}
	for _, e := range entries {
		if e.URI == *req.Params.URI {
			result["skill"] = e
			return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), result), true
		}
	}
	return refuse("No skill is served at "+*req.Params.URI+": skills/list names the skills this session sees", "uri")
}

// skillEntries builds the entry of every skill:// SKILL.md resource listed
// by a plugin the session sees (prompts follow the same rule), sorted by
// URI. A file that is no valid skill entry is left out and logged.
func (srv *Server) skillEntries(ctx context.Context) []skillsext.Skill {
	visible := srv.catalog.VisiblePlugins(ctx)
	type source struct {
		plugin resourcePlugin
		uri    string
	}
	var sources []source
	srv.mu.Lock()
	for name, l := range srv.resources {
		p := srv.fleet.Process(name)
		if p == nil || !visible[name] {
			continue
		}
		for _, r := range l {
			if skillsext.IsSkillURI(r.Resource.URI) {
				sources = append(sources, source{p, r.Resource.URI})
			}
		}
	}
	srv.mu.Unlock()
	sort.Slice(sources, func(i, j int) bool { return sources[i].uri < sources[j].uri })
	out := []skillsext.Skill{}
	for _, s := range sources {
		data, err := readSkillFile(ctx, s.plugin, s.uri)
		if err == nil {
			var e skillsext.Skill
			if e, err = skillsext.Entry(s.uri, data); err == nil {
				out = append(out, e)
				continue
			}
		}
		srv.log.Debug("skill left out of skills/list", "plugin", s.plugin.Name(), "uri", s.uri, "error", err)
	}
	return out
}

// readSkillFile is the bytes a resources/read of uri returns.
func readSkillFile(ctx context.Context, p resourcePlugin, uri string) ([]byte, error) {
	r, err := p.ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, r.Err
	}
	for _, c := range r.Contents {
		if c.URI == uri {
			return contentBytes(c), nil
		}
	}
	return nil, errs.NotFoundf(errs.ResourceNotFound, "uri", "reading %s returned no contents for that URI", uri)
}

func contentBytes(c seam.ResourceContents) []byte {
	if c.Blob != nil {
		return c.Blob
	}
	return []byte(c.Text)
}
