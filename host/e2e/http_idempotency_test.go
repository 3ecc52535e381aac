package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// httpServer is one `cairn serve --http` process.
type httpServer struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
}

func startHTTPServer(t *testing.T, w *workspace, env []string) *httpServer {
	t.Helper()
	cmd := newCmd(w, "serve", "--http", "127.0.0.1:0", "--no-auth")
	cmd.Env = append(cmd.Env, env...)
	s := &httpServer{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	eventually(t, 60*time.Second, "the HTTP listener", func() bool {
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			if i := strings.Index(line, "url=http://"); i >= 0 {
				s.url = strings.Trim(strings.TrimSpace(line[i+4:]), `"`)
				return true
			}
		}
		return false
	})
	return s
}

// statelessCall is one tools/call of protocol 2026-07-28 (no session), with
// an Idempotency-Key header when key is set. It returns the tool's result,
// or an error for anything else (a refused connection, a JSON-RPC error).
func statelessCall(url, key, name string, args any) (map[string]any, error) {
	body, _ := json.Marshal(modernRequest(1, "tools/call", map[string]any{"name": name, "arguments": args},
		modernMeta(mcp.ProtocolVersion20260728, "http-writer", "")))
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, "tools/call")
	req.Header.Set(mcp.HeaderName, name)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	client := http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				_ = json.Unmarshal([]byte(d), &m)
			}
		}
	}
	res, _ := m["result"].(map[string]any)
	if res == nil {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, raw)
	}
	return res, nil
}

// Writers over HTTP send each write with an Idempotency-Key and retry it
// with the same key after any failure, while the server is SIGKILLed and
// restarted three times: every write is stored exactly once, on bbolt and
// on PostgreSQL, and a late retry returns the first outcome.
func TestHTTPIdempotencyKeySurvivesAKilledServer(t *testing.T) {
	for _, backend := range []string{"bbolt", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorkspace(t)
			env := []string{"CAIRN_PROJECT=web"}
			if backend == "postgres" {
				env = append(env, "CAIRN_STORE="+pgtest.DSN(t))
			}
			srv := startHTTPServer(t, w, env)
			var url atomic.Value
			url.Store(srv.url)
			const writers = 6
			var (
				mu      sync.Mutex
				created = map[string]string{} // key → task id acknowledged
				retries int
			)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for g := 0; g < writers; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						key := fmt.Sprintf("k-%d-%d", g, i)
						for {
							res, err := statelessCall(url.Load().(string), key, "task_create", map[string]any{"title": key})
							if err == nil && res["isError"] != true {
								sc, _ := res["structuredContent"].(map[string]any)
								mu.Lock()
								created[key], _ = sc["task_id"].(string)
								mu.Unlock()
								break
							}
							// Whatever went wrong, the same key makes the retry safe.
							mu.Lock()
							retries++
							mu.Unlock()
							// A client pauses before it retries.
							time.Sleep(20 * time.Millisecond)
						}
					}
				}(g)
			}
			for k := 0; k < 3; k++ {
				// Chaos: the kills land while calls are in flight, spread over the run.
				time.Sleep(500 * time.Millisecond)
				_ = srv.cmd.Process.Signal(syscall.SIGKILL)
				_ = srv.cmd.Wait()
				srv = startHTTPServer(t, w, env)
				url.Store(srv.url)
			}
			// Calls go on a moment against the last server before they stop.
			time.Sleep(300 * time.Millisecond)
			close(stop)
			wg.Wait()

			titles := map[string]int{}
			countTitles(titles, "", func(offset int) map[string]any {
				res, err := statelessCall(srv.url, "", "task_list", map[string]any{"limit": 500, "offset": offset})
				if err != nil || res["isError"] == true {
					t.Fatalf("task_list: %v %v", err, res)
				}
				return res["structuredContent"].(map[string]any)
			})
			storedOnce(t, created, titles)
			// A retry long after the first outcome returns it unchanged.
			for key, id := range created {
				res, err := statelessCall(srv.url, key, "task_create", map[string]any{"title": key})
				if err != nil {
					t.Fatal(err)
				}
				if got := res["structuredContent"].(map[string]any)["task_id"]; got != id {
					t.Errorf("late retry of %s answered %v, want the first outcome %s", key, got, id)
				}
				break
			}
			t.Logf("%s: %d writes acknowledged, %d retries with their keys, across 3 SIGKILLs", backend, len(created), retries)
			if len(created) == 0 {
				t.Fatal("no write was acknowledged")
			}
		})
	}
}
