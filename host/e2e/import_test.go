
// Through a running daemon the import is the daemon's core area's: a
// session of that daemon reads the imported tasks at once.
func TestImportThroughDaemon(t *testing.T) {
	w := newWorkspace(t)
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	file := w.writeFile("few.jsonl", `{"task_id":"a","title":"first","status":"done"}
{"task_id":"b","title":"second","depends_on":["a"],"parent_id":"a","labels":["x"]}
`, 0o644)
	code, out, errOut := runCairn(t, w, "", daemonEnv, "import", file, "--json")
	if code != 0 {
		t.Fatalf("import through the daemon: %d %s", code, errOut)
	}
	var res struct {
		Project string            `json:"project"`
		IDs     map[string]string `json:"ids"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Project != "web" {
		t.Fatalf("import answered %s (%v); want the session's project web (CAIRN_PROJECT)", out, err)
	}
	got, err := callOK(s, "task_get", map[string]any{"task_id": res.IDs["b"]})
	if err != nil {
		t.Fatal(err)
	}
	if got["title"] != "second" || got["parent_id"] != res.IDs["a"] || fmt.Sprint(got["depends_on"]) != "["+res.IDs["a"]+"]" || got["project"] != "web" {
		t.Fatalf("the session reads %v", got)
	}
	if first, _ := callOK(s, "task_get", map[string]any{"task_id": res.IDs["a"]}); first["status"] != "done" {
		t.Fatalf("first task: %v", first)
	}
}
