package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cairn-mcp/cairn/plugins/vision/computer/xvfb"
	"github.com/cairn-mcp/cairn/plugins/vision/visiontest"
)

// Every tool publishes its real output schema: the success object or the
// error envelope (docs/decisions.md D37). These tests read the schemas from
// the tools/list the server sends and judge them with an independent JSON
// Schema 2020-12 validator, not cairn's own.

// publishedSchemas is every listed tool's outputSchema, compiled, from the
// raw tools/list of a session with every toolset.
type publishedSchema struct {
	raw      json.RawMessage
	compiled *sjs.Schema
	success  map[string]any // the anyOf's success half
	readOnly bool
	required bool // the input schema requires an argument
}

func publishedSchemas(t *testing.T, w *workspace, env ...string) map[string]*publishedSchema {
	t.Helper()
	var res struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  struct {
				ReadOnly bool `json:"readOnlyHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(rawToolsList(t, w, env...), &res); err != nil {
		t.Fatal(err)
	}
	out := map[string]*publishedSchema{}
	for _, tool := range res.Tools {
		if len(tool.OutputSchema) == 0 {
			t.Errorf("%s publishes no outputSchema", tool.Name)
			continue
		}
		var root struct {
			Type   string           `json:"type"`
			Schema *string          `json:"$schema"`
			AnyOf  []map[string]any `json:"anyOf"`
			Defs   map[string]any   `json:"$defs"`
		}
		if err := json.Unmarshal(tool.OutputSchema, &root); err != nil {
			t.Fatalf("%s outputSchema: %v", tool.Name, err)
		}
		// MCP wants an object root; a $schema other than draft 7 makes the
		// TypeScript SDK's default Ajv refuse the whole schema.
		if root.Type != "object" || root.Schema != nil || len(root.AnyOf) != 2 || root.AnyOf[1]["$ref"] != "#/$defs/error" || root.Defs["error"] == nil {
			t.Errorf("%s outputSchema is not {type: object, anyOf: [success, $ref error], $defs: {error}}: %.300s", tool.Name, tool.OutputSchema)
			continue
		}
		doc, err := sjs.UnmarshalJSON(bytes.NewReader(tool.OutputSchema))
		if err != nil {
			t.Fatal(err)
		}
		c := sjs.NewCompiler()
		c.DefaultDraft(sjs.Draft2020)
		url := "mem://" + tool.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Errorf("%s outputSchema does not compile: %v", tool.Name, err)
			continue
		}
		var in struct {
			Required []string `json:"required"`
		}
		_ = json.Unmarshal(tool.InputSchema, &in)
		out[tool.Name] = &publishedSchema{raw: tool.OutputSchema, compiled: sch, success: root.AnyOf[0], readOnly: tool.Annotations.ReadOnly, required: len(in.Required) > 0}
	}
	return out
}

func (p *publishedSchema) admits(doc []byte) error {
	inst, err := sjs.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return p.compiled.Validate(inst)
}

// onePixelPNG is a 1x1 PNG, base64.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

// wrongTyped is a value of another JSON type than the schema s asks for.
func wrongTyped(s map[string]any) any {
	switch s["type"] {
	case "string":
		return 12345
	case "object", "array", "integer", "number", "boolean":
		return "not a " + s["type"].(string)
	}
	return map[string]any{"unexpected": []any{1.5}}
}

// No published schema admits just anything: each refuses an unknown field,
// an empty object when its success has required fields, a wrong-typed
// required field, and a malformed error envelope, and admits a well-formed
// envelope.
func TestPublishedOutputSchemasRefuseGarbage(t *testing.T) {
	w := newWorkspace(t)
	schemas := publishedSchemas(t, w, "CAIRN_TOOLSETS=all")
	if len(schemas) != 92 {
		t.Errorf("%d tools with an output schema, want 92", len(schemas))
	}
	for name, p := range schemas {
		if err := p.admits([]byte(`{"error":{"code":"ERR_NOT_FOUND","message":"m","details":{"field":"x"}}}`)); err != nil {
			t.Errorf("%s refuses a well-formed error envelope: %v", name, err)
		}
		garbage := []string{
			`{"unexpected":1}`,
			`{"error":{"code":1,"message":"m","details":{}}}`,
			`{"error":{"code":"ERR_X","message":"m"}}`,
			`{"error":"not an object"}`,
			`[]`,
		}
		props, _ := p.success["properties"].(map[string]any)
		var required []string
		if r, ok := p.success["required"].([]any); ok {
			for _, x := range r {
				required = append(required, x.(string))
			}
		}
		if len(required) > 0 {
			garbage = append(garbage, `{}`)
			wrong := map[string]any{}
			for _, r := range required {
				ps, _ := props[r].(map[string]any)
				wrong[r] = wrongTyped(ps)
			}
			raw, _ := json.Marshal(wrong)
			garbage = append(garbage, string(raw))
		}
		if p.success["additionalProperties"] != false {
			t.Errorf("%s's success schema admits unknown fields: %.200s", name, p.raw)
		}
		for _, g := range garbage {
			if err := p.admits([]byte(g)); err == nil {
				t.Errorf("%s's outputSchema admits %s", name, g)
			}
		}
	}
}

// Every tool of every toolset is called once with an argument no schema
// knows (an error) and at least once with valid arguments (the vision and
// computer tools with a fake hosted model and a virtual display, when Xvfb
// is installed); the structuredContent of each result must validate against
// the tool's published outputSchema. The sessions run in TEST mode, where
// every plugin also checks its outputs against its success schema.
func TestEveryToolsResultsMatchItsPublishedOutputSchema(t *testing.T) {
	w := newWorkspace(t)
	env := []string{"CAIRN_TOOLSETS=all", "CAIRN_MODE=TEST", "CAIRN_PROJECT=web", "CAIRN_AGENT_ID=agent-a", "CAIRN_ENV=development"}
	schemas := publishedSchemas(t, w, env...)
	s := w.serve(env...)

	check := func(name string, res *mcp.CallToolResult) map[string]any {
		t.Helper()
		p := schemas[name]
		if p == nil {
			t.Fatalf("no published schema for %s", name)
		}
		raw := res.RawStructuredContent
		if len(raw) == 0 {
			raw, _ = json.Marshal(res.StructuredContent)
		}
		if err := p.admits(raw); err != nil {
			t.Errorf("%s (isError %v): structuredContent does not validate against its outputSchema: %v\n%s", name, res.IsError, err, raw)
		}
		return structured(t, res)
	}
	errored := map[string]bool{}
	for name := range schemas {
		res := s.call(name, map[string]any{"unexpected_argument": 1})
		if !res.IsError {
			t.Errorf("%s accepted an unknown argument: %v", name, structured(t, res))
			continue
		}
		check(name, res)
		errored[name] = true
	}

	succeeded := map[string]bool{}
	ok := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res := s.call(name, args)
		if res.IsError {
			t.Errorf("%s %v: %v", name, args, structured(t, res))
			return map[string]any{}
		}
		succeeded[name] = true
		return check(name, res)
	}
	str := func(m map[string]any, keys ...string) string {
		var v any = m
		for _, k := range keys {
			mm, _ := v.(map[string]any)
			v = mm[k]
		}
		s, _ := v.(string)
		return s
	}

	// system and core.
	ok("server_ping", map[string]any{})
	ok("server_health", map[string]any{})
	parent := str(ok("task_create", map[string]any{"title": "Payments", "priority": "high", "labels": []string{"pay"}}), "task_id")
	child := str(ok("task_create", map[string]any{"title": "Refunds", "parent_id": parent, "depends_on": []string{parent}}), "task_id")
	ok("task_update", map[string]any{"task_id": parent, "status": "todo", "progress": 10})
	ok("task_get", map[string]any{"task_id": parent, "include_thought_trail": true, "include_dependents": true})
	ok("task_list", map[string]any{"status": []string{"todo", "backlog"}, "limit": 5})
	ok("task_next_actions", map[string]any{"include_blocked": true})
	ok("skill_list", map[string]any{})
	ok("thought_record", map[string]any{"task_id": parent, "type": "decision", "content": "use idempotency keys", "metadata": map[string]any{"pr": 7}})
	ok("thought_record", map[string]any{"task_id": child, "type": "risk", "content": "refund race"})
	ok("thought_record_list", map[string]any{"task_id": parent, "verify_chain": true})
	ok("task_update", map[string]any{"task_id": parent, "claim": true})
	ok("task_context", map[string]any{"max_bytes": 2000})
	audit := str(ok("audit_session_start", map[string]any{"task_id": parent, "auditor_id": "reviewer", "scope": "deep"}), "session_id")
	ok("audit_verify_chain", map[string]any{"session_id": audit, "full_trace": true})
	ok("merkle_root", map[string]any{"session_id": audit})
	ok("merkle_finalize", map[string]any{"session_id": audit})

	// sdd.
	ok("sdd_vitals", map[string]any{})
	ok("sdd_discuss", map[string]any{"phase": 1, "topic": "login"})
	ok("sdd_plan", map[string]any{"phase": "1", "context": "Users log in\n- add the form\nsuccess: a user logs in", "auto_spawn": true})
	ok("sdd_validate", map[string]any{"content": "<objective>x</objective>", "type": "plan"})
	ok("sdd_state", map[string]any{"action": "set", "keyPath": "phases.1.decisions", "value": []any{"sessions", map[string]any{"n": 2}}})
	ok("sdd_state", map[string]any{"action": "get", "keyPath": "phases.1.decisions"})
	ok("sdd_state", map[string]any{"action": "list"})
	lease := ok("sdd_lease", map[string]any{"action": "issue", "taskId": parent, "scope": []string{"web/"}})
	ok("sdd_lease", map[string]any{"action": "list"})
	ok("sdd_lease", map[string]any{"action": "return", "leaseId": str(lease, "lease", "leaseId")})
	ok("sdd_dash", map[string]any{"format": "json"})
	ok("sdd_dash", map[string]any{})
	ok("sdd_evolve", map[string]any{"action": "detect"})
	ok("sdd_evolve", map[string]any{"action": "report"})
	ok("sdd_agent", map[string]any{"action": "rules"})
	ok("sdd_agent", map[string]any{"action": "plan", "intent": "plan_phase"})
	ok("sdd_agent", map[string]any{"action": "queue"})
	ok("sdd_agent", map[string]any{"action": "history"})
	ok("sdd_skill", map[string]any{"action": "list"})
	ok("sdd_skill", map[string]any{"action": "register", "skillId": "go-tests", "title": "Go tests"})
	ok("sdd_skill", map[string]any{"action": "recommend", "intent": "plan_phase"})

	// admin.
	recv := newHookReceiver(t)
	ws := str(ok("admin_workspace_create", map[string]any{"name": "Platform"}), "id")
	ok("admin_workspace_get", map[string]any{"workspace_id": ws})
	ok("admin_workspace_list", map[string]any{})
	ok("admin_workspace_update", map[string]any{"workspace_id": ws, "name": "Platform team"})
	ok("admin_workspace_stats", map[string]any{"workspace_id": ws})
	prj := str(ok("admin_project_create", map[string]any{"workspace_id": ws, "name": "Billing API"}), "id")
	ok("admin_project_get", map[string]any{"project_id": prj})
	ok("admin_project_list", map[string]any{"workspace_id": ws})
	ok("admin_project_update", map[string]any{"project_id": prj, "description": "invoices"})
	ok("admin_project_archive", map[string]any{"project_id": prj})
	ok("admin_project_unarchive", map[string]any{"project_id": prj})
	ok("admin_member_add", map[string]any{"workspace_id": ws, "user_id": "mia", "role": "member"})
	ok("admin_member_get", map[string]any{"workspace_id": ws, "user_id": "mia"})
	ok("admin_member_list", map[string]any{"workspace_id": ws})
	ok("admin_member_update_role", map[string]any{"workspace_id": ws, "user_id": "mia", "role": "admin"})
	ok("admin_member_remove", map[string]any{"workspace_id": ws, "user_id": "mia"})
	inv := ok("admin_invitation_create", map[string]any{"workspace_id": ws, "email": "ann@example.com", "role": "member"})
	ok("admin_invitation_list", map[string]any{"workspace_id": ws})
	ok("admin_invitation_revoke", map[string]any{"invitation_id": str(inv, "id")})
	inv = ok("admin_invitation_create", map[string]any{"workspace_id": ws, "email": "bob@example.com", "role": "viewer"})
	ok("admin_invitation_accept", map[string]any{"token": str(inv, "token"), "user_id": "bob"})
	key := ok("admin_key_create", map[string]any{"name": "ci"})
	keyID := str(key, "id")
	ok("admin_key_get", map[string]any{"key_id": keyID})
	ok("admin_key_list", map[string]any{})
	ok("admin_key_validate", map[string]any{"key": str(key, "plaintext_key")})
	ok("admin_key_usage", map[string]any{"key_id": keyID})
	ok("admin_key_check_rate_limit", map[string]any{"key_id": keyID})
	ok("admin_key_audit_log", map[string]any{"key_id": keyID})
	ok("admin_key_update", map[string]any{"key_id": keyID, "name": "ci-2"})
	ok("admin_key_rotate", map[string]any{"key_id": keyID})
	ok("admin_key_revoke", map[string]any{"key_id": keyID})
	hook := str(ok("admin_webhook_register", map[string]any{"url": recv.srv.URL + "/hook", "event_types": []string{"task.*"}}), "webhook", "id")
	ok("admin_webhook_get", map[string]any{"webhook_id": hook})
	ok("admin_webhook_list", map[string]any{})
	ok("admin_webhook_update", map[string]any{"webhook_id": hook, "event_types": []string{"task.created"}})
	ok("admin_webhook_test", map[string]any{"webhook_id": hook})
	ok("admin_webhook_stats", map[string]any{})
	ok("admin_webhook_deliveries", map[string]any{"webhook_id": hook})
	ok("admin_webhook_pause", map[string]any{"webhook_id": hook})
	ok("admin_webhook_resume", map[string]any{"webhook_id": hook})
	ok("admin_webhook_rotate_secret", map[string]any{"webhook_id": hook})
	ok("admin_webhook_unregister", map[string]any{"webhook_id": hook})
	ok("admin_event_types", map[string]any{})
	ok("admin_event_trigger", map[string]any{"event_type": "task.created", "payload": map[string]any{"task_id": "PROBE-1"}})
	ok("admin_project_delete", map[string]any{"project_id": prj})
	ok("admin_workspace_delete", map[string]any{"workspace_id": ws})

	// vision and computer: what runs without a hosted model or a display.
	try := func(name string, args map[string]any) {
		t.Helper()
		res := s.call(name, args)
		check(name, res)
		if res.IsError {
			t.Logf("%s answers an error here (checked against its schema too): %v", name, structured(t, res)["error"])
			return
		}
		succeeded[name] = true
	}
	try("vision_load_image", map[string]any{"data": onePixelPNG, "name": "pixel.png"})
	try("vision_list_images", map[string]any{})
	try("computer_beta_status", map[string]any{})

	// With a fake hosted model and a virtual display, every vision and
	// computer tool too.
	_, noXvfb := exec.LookPath("Xvfb")
	if noXvfb != nil {
		t.Log("Xvfb is absent, so the vision and computer tools' successes are not checked (on Debian: apt-get install xvfb)")
	} else {
		visionAndComputerSucceed(t, w, env, check, succeeded)
	}

	var missing, covered []string
	for name := range schemas {
		if !errored[name] {
			t.Errorf("%s: no error result checked", name)
		}
		if succeeded[name] {
			covered = append(covered, name)
		} else {
			missing = append(missing, name)
		}
	}
	sort.Strings(covered)
	sort.Strings(missing)
	t.Logf("success results validated for %d of %d tools: %s", len(covered), len(schemas), strings.Join(covered, ", "))
	t.Logf("error results only: %s", strings.Join(missing, ", "))
	for _, name := range missing {
		if noXvfb == nil || !strings.HasPrefix(name, "vision_") && !strings.HasPrefix(name, "computer_") {
			t.Errorf("%s: no success result validated", name)
		}
	}
}

// visionAndComputerSucceed calls every vision and computer tool with a fake
// hosted model and a virtual display, as TestVisionAndComputerEndToEnd does,
// each vision tool answered by one generic reply, and checks each result.
func visionAndComputerSucceed(t *testing.T, w *workspace, env []string, check func(string, *mcp.CallToolResult) map[string]any, succeeded map[string]bool) {
	t.Helper()
	str := func(m map[string]any, key string) string {
		s, _ := m[key].(string)
		return s
	}
	display := xvfb.Start(t, 800, 600)
	api := visiontest.New(t, "sk-e2e-key")
	api.Fallback = func(visiontest.Request) visiontest.Reply {
		return visiontest.JSONReply(map[string]any{"description": "a red square", "confidence": 0.8, "text": "hello",
			"summary": "a square", "similarity": 0.5, "similarityScore": 0.5, "objects": []any{}, "faces": []any{}, "colors": []any{},
			"dominantColors": []any{}, "labels": []any{}, "differences": []any{}, "similarities": []any{}, "scene": "indoor", "data": []any{}})
	}
	v := w.serve(append(append([]string{}, env...), "ANTHROPIC_API_KEY=sk-e2e-key", "ANTHROPIC_BASE_URL="+api.URL,
		"CAIRN_VISION_MODEL=e2e-model", "DISPLAY="+display.Display)...)
	tryOn := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res := v.call(name, args)
		out := check(name, res)
		if res.IsError {
			t.Errorf("%s %v: %v", name, args, out["error"])
			return out
		}
		succeeded[name] = true
		return out
	}
	img := str(tryOn("vision_load_image", map[string]any{"data": onePixelPNG, "name": "a.png"}), "imageId")
	img2 := str(tryOn("vision_load_image", map[string]any{"data": onePixelPNG, "name": "b.png"}), "imageId")
	tryOn("vision_analyze", map[string]any{"imageId": img, "analysisType": "general"})
	tryOn("vision_analyze_chart", map[string]any{"imageId": img})
	tryOn("vision_analyze_colors", map[string]any{"imageId": img})
	tryOn("vision_analyze_faces", map[string]any{"imageId": img})
	tryOn("vision_classify_scene", map[string]any{"imageId": img})
	tryOn("vision_detect_objects", map[string]any{"imageId": img})
	tryOn("vision_extract_text", map[string]any{"imageId": img})
	tryOn("vision_compare", map[string]any{"imageId1": img, "imageId2": img2})
	tryOn("vision_compare_advanced", map[string]any{"imageId1": img, "imageId2": img2})
	tryOn("vision_batch_analyze", map[string]any{"imageIds": []string{img, img2}, "analysisType": "general"})
	session := str(tryOn("computer_session_start", map[string]any{"maxActions": 10}), "sessionId")
	if session != "" {
		tryOn("computer_action", map[string]any{"sessionId": session, "action": "screenshot"})
		tryOn("computer_sequence", map[string]any{"sessionId": session, "actions": []any{map[string]any{"action": "screenshot"}}})
		tryOn("computer_action_history", map[string]any{"sessionId": session})
		tryOn("computer_session_pause", map[string]any{"sessionId": session})
		tryOn("computer_session_resume", map[string]any{"sessionId": session})
		tryOn("computer_session_summary", map[string]any{"sessionId": session})
		tryOn("computer_session_end", map[string]any{"sessionId": session})
	}
	tryOn("computer_agent_run", map[string]any{"task": "look at the screen", "maxActions": 2})
}
