package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// skillsExtension is the MCP skills extension's identifier (SEP-2640).
const skillsExtension = "io.modelcontextprotocol/skills"

// namedSkill is a skill whose frontmatter names it, as the Agent Skills
// format asks; eraWorkspace's cairn-debug has no name and is served as a
// prompt and by skill_list, not through the extension.
const namedSkill = "---\nname: cairn-named\nversion: \"1.0.0\"\ndescription: \"Use when a skill must be found by skills/list.\"\ncapabilities: [listing]\nmetadata:\n  since: 2026-01-02\n---\n\nList it.\n"

func skillDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// skillURIs are the URIs a skills/list answer names.
func skillURIs(res map[string]any) []string {
	var out []string
	list, _ := res["skills"].([]any)
	for _, s := range list {
		e, _ := s.(map[string]any)
		uri, _ := e["uri"].(string)
		out = append(out, uri)
	}
	return out
}

// TestSkillsExtensionOverStdio checks the skills extension (docs/decisions.md
// D14) over stdio, in this process and relayed to the shared daemon: the
// declaration at initialize, skills/list entries whose digest, size and
// frontmatter are those of the file resources/read returns, skills/get,
// its refusals, edits seen live (and told as resources/list_changed, the
// skill being a resource), and the session's toolsets honoured as for
// prompts.
func TestSkillsExtensionOverStdio(t *testing.T) {
	for name, env := range map[string][]string{"no daemon": nil, "relay": sharedEnv} {
		t.Run(name, func(t *testing.T) {
			w := eraWorkspace(t)
			w.writeFile(".agents/skills/cairn-named/SKILL.md", namedSkill, 0o644)
			r := startRaw(t, w, env...)
			r.send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
				"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}})
			init, _ := r.next(60*time.Second, "initialize", idIs(0))["result"].(map[string]any)
			caps, _ := init["capabilities"].(map[string]any)
			if ext, _ := caps["extensions"].(map[string]any); ext[skillsExtension] == nil {
				t.Fatalf("initialize capabilities %v: no %s", caps, skillsExtension)
			}
			r.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})

			id := 0
			ask := func(method string, params map[string]any) map[string]any {
				t.Helper()
				id++
				r.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
				return r.next(30*time.Second, method, idIs(float64(id)))
			}
			list := func() map[string]any {
				t.Helper()
				m := ask("skills/list", map[string]any{})
				res, _ := m["result"].(map[string]any)
				if res == nil || res["resultType"] != "complete" || res["cacheScope"] != "private" || res["ttlMs"] == nil {
					t.Fatalf("skills/list answered %v", m)
				}
				return res
			}

			res := list()
			if got := skillURIs(res); !slices.Equal(got, []string{"skill://cairn-named/SKILL.md"}) {
				t.Fatalf("skills/list names %v; want cairn-named alone (cairn-debug and cairn-review have no name)", got)
			}
			entry := res["skills"].([]any)[0].(map[string]any)
			fm, _ := entry["frontmatter"].(map[string]any)
			if fm["name"] != "cairn-named" || fm["version"] != "1.0.0" || fm["metadata"].(map[string]any)["since"] != "2026-01-02" {
				t.Errorf("frontmatter %v", fm)
			}
			files, _ := entry["resources"].([]any)
			file, _ := files[0].(map[string]any)
			if len(files) != 1 || file["uri"] != "skill://cairn-named/SKILL.md" || file["digest"] != skillDigest(namedSkill) || file["size"] != float64(len(namedSkill)) {
				t.Errorf("resources %v; want the file's digest %s and size %d", files, skillDigest(namedSkill), len(namedSkill))
			}

			read, _ := ask("resources/read", map[string]any{"uri": "skill://cairn-named/SKILL.md"})["result"].(map[string]any)
			contents, _ := read["contents"].([]any)
			if len(contents) != 1 || contents[0].(map[string]any)["text"] != namedSkill {
				t.Errorf("resources/read of the skill: %v", read)
			}

			got, _ := ask("skills/get", map[string]any{"uri": "skill://cairn-named/SKILL.md"})["result"].(map[string]any)
			if s, _ := got["skill"].(map[string]any); s["uri"] != "skill://cairn-named/SKILL.md" || got["resultType"] != "complete" {
				t.Errorf("skills/get answered %v", got)
			}
			for _, uri := range []string{"skill://cairn-debug/SKILL.md", "skill://cairn-none/SKILL.md"} {
				e, _ := ask("skills/get", map[string]any{"uri": uri})["error"].(map[string]any)
				if e["code"] != float64(mcp.INVALID_PARAMS) {
					t.Errorf("skills/get %s: %v; want invalid params", uri, e)
				}
			}

			// Live: a skill added shows in the next listing, an edit
			// changes its digest, a removal takes it away.
			edited := namedSkill + "More.\n"
			w.writeFile(".agents/skills/cairn-added/SKILL.md", "---\nname: cairn-added\nversion: \"1\"\ndescription: Added later.\n---\nNew.\n", 0o644)
			w.writeFile(".agents/skills/cairn-named/SKILL.md", edited, 0o644)
			r.next(30*time.Second, "resources/list_changed for the added skill", func(m map[string]any) bool {
				return m["method"] == string(mcp.MethodNotificationResourcesListChanged)
			})
			eventually(t, patience, "the added and edited skills in skills/list", func() bool {
				res := list()
				if !slices.Contains(skillURIs(res), "skill://cairn-added/SKILL.md") {
					return false
				}
				for _, s := range res["skills"].([]any) {
					e := s.(map[string]any)
					if e["uri"] == "skill://cairn-named/SKILL.md" {
						return e["resources"].([]any)[0].(map[string]any)["digest"] == skillDigest(edited)
					}
				}
				return false
			})
			if err := os.RemoveAll(filepath.Join(w.root, ".agents", "skills", "cairn-added")); err != nil {
				t.Fatal(err)
			}
			eventually(t, patience, "the removed skill gone from skills/list", func() bool {
				return !slices.Contains(skillURIs(list()), "skill://cairn-added/SKILL.md")
			})
			if e, _ := ask("skills/get", map[string]any{"uri": "skill://cairn-added/SKILL.md"})["error"].(map[string]any); e["code"] != float64(mcp.INVALID_PARAMS) {
				t.Errorf("skills/get of a removed skill: %v", e)
			}
		})
	}
}

// A session that does not see the core area's tools sees none of its
// skills, as it sees none of its prompts (D21); the 2026-07-28 era gets the
// same answer, without a handshake.
func TestSkillsExtensionFollowsTheSession(t *testing.T) {
	w := eraWorkspace(t)
	w.writeFile(".agents/skills/cairn-named/SKILL.md", namedSkill, 0o644)

	hidden := startRaw(t, w, "CAIRN_TOOLSETS=sdd")
	hidden.initialize()
	hidden.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": map[string]any{}})
	res, _ := hidden.next(30*time.Second, "skills/list", idIs(1))["result"].(map[string]any)
	if got := skillURIs(res); res == nil || len(got) != 0 {
		t.Errorf("skills/list without the core toolset: %v", res)
	}

	// A workspace of its own: two processes serving one data dir without
	// the daemon would share its store.
	w = eraWorkspace(t)
	w.writeFile(".agents/skills/cairn-named/SKILL.md", namedSkill, 0o644)
	modern := startRaw(t, w)
	modern.send(modernRequest(1, "skills/list", nil, modernMeta(mcp.ProtocolVersion20260728, "raw-modern", "")))
	res, _ = modern.next(30*time.Second, "skills/list", idIs(1))["result"].(map[string]any)
	if got := skillURIs(res); !slices.Equal(got, []string{"skill://cairn-named/SKILL.md"}) || res["resultType"] != "complete" {
		t.Errorf("2026-07-28 skills/list: %v", res)
	}
}

// Over streamable HTTP the host answers the extension's methods as over
// stdio, here to a 2026-07-28 request.
func TestSkillsExtensionOverHTTP(t *testing.T) {
	w := eraWorkspace(t)
	w.writeFile(".agents/skills/cairn-named/SKILL.md", namedSkill, 0o644)
	url := serveHTTPNoAuth(t, w)
	v := mcp.ProtocolVersion20260728
	body, _ := json.Marshal(modernRequest(1, "skills/get", map[string]any{"uri": "skill://cairn-named/SKILL.md"}, modernMeta(v, "raw-http", "")))
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, v)
	req.Header.Set(mcp.HeaderMethod, "skills/get")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("skills/get over HTTP: %d %v", resp.StatusCode, err)
	}
	res, _ := m["result"].(map[string]any)
	skill, _ := res["skill"].(map[string]any)
	files, _ := skill["resources"].([]any)
	if resp.StatusCode != http.StatusOK || len(files) != 1 || files[0].(map[string]any)["digest"] != skillDigest(namedSkill) {
		t.Errorf("skills/get over HTTP: %d %v", resp.StatusCode, m)
	}
}
