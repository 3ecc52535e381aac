package importer

import (
	"bytes"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Whatever the bytes, the parsers answer tasks or one typed 400 naming the
// file (never a panic, never both), and every task they answer has a key
// and says where it was read.
func checkParsed(t *testing.T, ts []Task, err error) {
	if err != nil {
		e, ok := errs.As(err)
		if !ok || e.Status != 400 || e.Details["file"] == nil {
			t.Fatalf("untyped or unlocated error: %v", err)
		}
		if ts != nil {
			t.Fatalf("tasks beside an error")
		}
		return
	}
	for _, x := range ts {
		if x.Key == "" || x.Where.File == "" {
			t.Fatalf("task without key or place: %+v", x)
		}
	}
}

func FuzzReadJSONL(f *testing.F) {
	f.Add([]byte(`{"task_id":"T-1","title":"a","labels":["x"],"depends_on":["T-2"]}` + "\n" + `{"task_id":"T-2","title":"b"}`))
	f.Add([]byte(`{"task_id":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ReadJSONL("f.jsonl", bytes.NewReader(data))
		checkParsed(t, ts, err)
	})
}

func FuzzParseBacklogFile(f *testing.F) {
	f.Add([]byte(backlogTask))
	f.Add([]byte("---\nid: task-1\ntitle: a\nassignee: '@x'\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := ParseBacklogFile("task.md", data)
		if err != nil {
			checkParsed(t, nil, err)
			return
		}
		checkParsed(t, []Task{x}, nil)
	})
}

func FuzzReadTaskMaster(f *testing.F) {
	f.Add([]byte(`{"tasks":[{"id":1,"title":"a","subtasks":[{"id":1,"title":"b","dependencies":[1]}]}]}`))
	f.Add([]byte(`{"master":{"tasks":[{"id":1,"title":"a","dependencies":[2]}],"metadata":{}},"x":{"tasks":[{"id":2,"title":"b","dependencies":["1.1",1],"subtasks":[{"id":1,"title":"c"}]}]},"y":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ReadTaskMaster("tasks.json", data, Options{})
		checkParsed(t, ts, err)
		ts, err = ReadTaskMaster("tasks.json", data, Options{TagProjects: true})
		checkParsed(t, ts, err)
	})
}

func FuzzReadBeads(f *testing.F) {
	f.Add([]byte(`{"id":"bd-1","title":"a","status":"blocked","priority":0,"labels":["x"],"dependencies":[{"issue_id":"bd-1","depends_on_id":"bd-2","type":"blocks"},{"depends_on_id":"bd-3","type":"parent-child"},{"depends_on_id":"bd-4","type":"related"}],"comments":[{"author":"a","text":"t"}]}` + "\n" + `{"id":"bd-2","title":"b","status":"closed","priority":4}`))
	f.Add([]byte(`{"id":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, err := ReadBeads("issues.jsonl", bytes.NewReader(data))
		checkParsed(t, ts, err)
	})
}

func FuzzParseClaudeFile(f *testing.F) {
	f.Add([]byte(`{"id":"1","subject":"a","description":"d","activeForm":"A","status":"in_progress","blocks":["2"],"blockedBy":[3],"owner":"o","metadata":{"k":[1]}}`))
	f.Add([]byte(`{"id":"","subject":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, blocks, err := ParseClaudeFile("1.json", data)
		if err != nil {
			if blocks != nil {
				t.Fatalf("blocks beside an error")
			}
			checkParsed(t, nil, err)
			return
		}
		checkParsed(t, []Task{x}, nil)
	})
}
