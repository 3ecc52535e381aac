package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/poll"
	"github.com/cairn-mcp/cairn/internal/release"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	binDir     string
	cairnBin   string
	testkitBin string
	semverBin  string
	trustFile  string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-e2e-bin-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	cairnBin = filepath.Join(dir, "cairn")
	testkitBin = filepath.Join(dir, "cairn-plugin-testkit")
	semverBin = filepath.Join(dir, "cairn-plugin-semver")
	if err := buildCairn(dir); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	for out, pkg := range map[string]string{
		testkitBin: "github.com/cairn-mcp/cairn/host/internal/testkit/cmd/cairn-plugin-testkit",
		semverBin:  "github.com/cairn-mcp/cairn/examples/cairn-plugin-semver",
	} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n", pkg, err)
			os.Exit(1)
		}
	}
	// The operator trusts the plugins the tests build (docs/decisions.md D23);
	// tests of trust itself give a workspace its own store.
	trustFile = filepath.Join(dir, "trust.json")
	if err := writeTrustStore(trustFile, testkitBin, semverBin); err != nil {
		fmt.Fprintf(os.Stderr, "trust store: %v\n", err)
		os.Exit(1)
	}
	// One throwaway PostgreSQL server for every test that asks for a
	// database, started on first use.
	code := pgtest.Main(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildCairn builds cairn into dir as a user gets it: static, with
// cairn-areas beside it and its build ID linked into cairn, by the release's
// own builder, at the version a plain build says.
func buildCairn(dir string) error {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return err
	}
	_, err = release.BuildBinaries(context.Background(), "go", repo, dir, release.HostTarget(), host.Version)
	return err
}

// workspace is a temporary repository root with a plugin directory.
type workspace struct {
	t              *testing.T
	root           string
	env            []string
	schemaOnce     sync.Once
	schemas        map[string]json.RawMessage
	successSchemas map[string]json.RawMessage
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".cairn", "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := &workspace{t: t, root: root, env: []string{
		"CAIRN_ROOT=" + root,
		"CAIRN_LOG_LEVEL=debug",
		// Most tests look at one host process (its PID, its signals, its
		// plugins); the shared daemon has tests of its own.
		"CAIRN_DAEMON=off",
		"CAIRN_TRUST_FILE=" + trustFile,
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
	}}
	if suiteOnPostgres {
		// A database of its own, as a bbolt workspace has files of its own.
		w.env = append(w.env, "CAIRN_STORE="+pgtest.DSN(t))
	}
	// Runs before the temporary root is removed: a shared daemon that
	// outlived its sessions is stopped, so it neither writes into a
	// directory being removed nor lingers into later tests.
	t.Cleanup(w.stopDaemon)
	return w
}

// stopDaemon ends the workspace's shared daemon, if one runs: SIGTERM,
// then SIGKILL after 10 s.
func (w *workspace) stopDaemon() {
	pid := daemonPID(w.t, w)
	if !processAlive(pid) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if poll.Within(10*time.Second, func() bool { return !processAlive(pid) }) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

func (w *workspace) dataDir() string { return filepath.Join(w.root, ".cairn", "data") }

// addPlugin installs bin into the plugin directory as cairn-plugin-<name>.
func (w *workspace) addPlugin(name, bin string) {
	w.t.Helper()
	dst := filepath.Join(w.root, ".cairn", "plugins", "cairn-plugin-"+name)
	if err := os.Symlink(bin, dst); err != nil {
		w.t.Fatal(err)
	}
}

func (w *workspace) writeFile(rel, content string, mode os.FileMode) string {
	w.t.Helper()
	p := filepath.Join(w.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// syncBuffer collects a child's stderr safely.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// session is one `cairn serve` over stdio with a connected mcp-go client.
type session struct {
	t      *testing.T
	c      *client.Client
	cmd    *exec.Cmd
	stderr *syncBuffer
	mu     sync.Mutex
	notes  []mcp.JSONRPCNotification
}

func (w *workspace) serve(extraEnv ...string) *session {
	w.t.Helper()
	s, err := startSession(w, extraEnv...)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(s.close)
	return s
}

// startSession starts one `cairn serve` and initializes an MCP client on
// it. It returns errors instead of failing the test, so many sessions can
// start from goroutines at the same instant; the caller closes it.
func startSession(w *workspace, extraEnv ...string) (*session, error) {
	return startSessionOf(w, cairnBin, extraEnv...)
}

// startSessionOf is startSession with the cairn binary at bin.
func startSessionOf(w *workspace, bin string, extraEnv ...string) (*session, error) {
	s := &session{t: w.t, stderr: &syncBuffer{}}
	env := append(append([]string{}, w.env...), extraEnv...)
	c, err := client.NewStdioMCPClientWithOptions(bin, env, []string{"serve"},
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			cmd.Dir = w.root
			s.cmd = cmd
			return cmd, nil
		}),
		transport.WithCommandStderrWriter(s.stderr),
	)
	if err != nil {
		return nil, fmt.Errorf("start cairn: %v", err)
	}
	s.c = c
	// NewStdioMCPClientWithOptions starts the transport but not the client,
	// and only Start routes notifications to OnNotification handlers.
	if err := c.Start(context.Background()); err != nil {
		return nil, fmt.Errorf("start client: %v", err)
	}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		s.mu.Lock()
		s.notes = append(s.notes, n)
		s.mu.Unlock()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "e2e-client", Version: "1.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		return nil, fmt.Errorf("initialize: %v\nstderr:\n%s", err, s.stderr.String())
	}
	return s, nil
}

func (s *session) close() {
	_ = s.c.Close()
	if s.cmd != nil && s.cmd.Process != nil {
		done := make(chan struct{})
		go func() { _, _ = s.cmd.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
		}
	}
	if s.t.Failed() {
		s.t.Logf("cairn stderr:\n%s", s.stderr.String())
	}
}

func (s *session) notifications(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, x := range s.notes {
		if x.Method == method {
			n++
		}
	}
	return n
}

func (s *session) tools() map[string]mcp.Tool {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		s.t.Fatalf("tools/list: %v", err)
	}
	out := map[string]mcp.Tool{}
	for _, t := range res.Tools {
		out[t.Name] = t
	}
	return out
}

func (s *session) call(name string, args any) *mcp.CallToolResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.callCtx(ctx, name, args)
	if err != nil {
		s.t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func (s *session) callCtx(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return s.c.CallTool(ctx, req)
}

// structured decodes a result's structuredContent.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	raw := res.RawStructuredContent
	if len(raw) == 0 {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structuredContent is not an object: %s", raw)
	}
	return m
}

func metaStatus(res *mcp.CallToolResult) float64 {
	if res.Meta == nil {
		return 0
	}
	v, _ := res.Meta.AdditionalFields["status"].(float64)
	return v
}

// rawOutputSchemas returns every tool's output schema exactly as the host
// declares it (mcp-go's client keeps only part of a schema), read from
// `cairn tools --json --all`.
func rawOutputSchemas(t *testing.T, w *workspace) map[string]json.RawMessage {
	t.Helper()
	w.schemaOnce.Do(func() {
		code, out, errOut := runCairn(t, w, "", nil, "tools", "--json", "--all")
		if code != 0 {
			t.Fatalf("cairn tools --json: exit %d\n%s", code, errOut)
		}
		var list []struct {
			Name          string          `json:"name"`
			OutputSchema  json.RawMessage `json:"outputSchema"`
			SuccessSchema json.RawMessage `json:"successSchema"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("cairn tools --json: %v\n%s", err, out)
		}
		w.schemas = map[string]json.RawMessage{}
		w.successSchemas = map[string]json.RawMessage{}
		for _, l := range list {
			w.schemas[l.Name] = l.OutputSchema
			w.successSchemas[l.Name] = l.SuccessSchema
		}
	})
	return w.schemas
}

// validateAgainst checks a value against a tool's listed output schema
// and, for a success object, against the plugin's full success schema.
func validateAgainst(t *testing.T, w *workspace, tool mcp.Tool, value map[string]any) {
	t.Helper()
	raw, ok := rawOutputSchemas(t, w)[tool.Name]
	if !ok {
		t.Fatalf("no output schema for %s", tool.Name)
	}
	validateWith(t, tool.Name, raw, value)
	if _, isError := value["error"]; !isError && len(w.successSchemas[tool.Name]) > 0 {
		validateWith(t, tool.Name, w.successSchemas[tool.Name], value)
	}
}

func validateWith(t *testing.T, name string, raw json.RawMessage, value map[string]any) {
	t.Helper()
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource("mem://out.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("mem://out.json")
	if err != nil {
		t.Fatalf("output schema of %s does not compile: %v\n%s", name, err, raw)
	}
	vb, _ := json.Marshal(value)
	inst, _ := sjs.UnmarshalJSON(bytes.NewReader(vb))
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("structuredContent of %s does not validate against its output schema: %v\nvalue: %s\nschema: %s", name, err, vb, raw)
	}
}

// eventually polls f until it returns true or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	poll.Until(t, d, what, f)
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil {
		return false
	}
	// A zombie still answers kill(0); read its state.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

// runCairn runs the cairn binary to completion and returns its exit status
// and output.
func runCairn(t *testing.T, w *workspace, stdin string, extraEnv []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(cairnBin, args...)
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	cmd.Dir = w.root
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("cairn %v did not finish\nstderr:\n%s", args, errb.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// startHTTP starts `cairn serve --http 127.0.0.1:0` with args and extra
// environment, waits for its listener (and for the stderr text ready, when
// given) and returns its MCP URL and stderr. The server is stopped with
// SIGTERM when the test ends; its stderr is logged if the test failed.
func startHTTP(t *testing.T, w *workspace, env []string, ready string, args ...string) (string, *syncBuffer) {
	t.Helper()
	cmd := newCmd(w, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("cairn stderr:\n%s", stderr.String())
		}
	})
	var url string
	eventually(t, 60*time.Second, "the HTTP listener", func() bool {
		text := stderr.String()
		if ready != "" && !strings.Contains(text, ready) {
			return false
		}
		for _, line := range strings.Split(text, "\n") {
			// The listener's line; a plugin's configuration may name
			// another URL (vision's ANTHROPIC_BASE_URL).
			if i := strings.Index(line, "url=http://"); i >= 0 && strings.HasSuffix(strings.TrimSpace(line), "/mcp") {
				url = strings.Trim(strings.TrimSpace(line[i+4:]), `"`)
				return true
			}
		}
		return false
	})
	return url, stderr
}

// startSessions starts n `cairn serve` sessions at the same instant, the
// i-th with env(i) added, and closes them when the test ends. It fails the
// test if any could not start.
func startSessions(t *testing.T, w *workspace, n int, env func(i int) []string) []*session {
	t.Helper()
	all := make([]*session, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range all {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			all[i], errs[i] = startSession(w, env(i)...)
		}(i)
	}
	wg.Wait()
	for _, s := range all {
		if s != nil {
			t.Cleanup(s.close)
		}
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return all
}
