package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The official MCP conformance suite and the Node it needs, pinned. Node
// comes from the npm package `node` into the test's own directory, never
// onto the system.
const (
	conformancePackage = "@modelcontextprotocol/conformance@0.1.16"
	nodePackage        = "node@22.23.3"
)

// conformanceCannotApply lists the scenarios a plugin cannot serve through
// the SDK, with why. They must fail; one that starts passing fails the test
// so the table stays true. With the pinned suite every scenario passes.
var conformanceCannotApply = map[string]string{}

func TestOfficialConformanceSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite installs Node and the suite from npm; skipped with -short")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is absent, so the official conformance suite cannot be installed: install npm (Debian: apt-get install npm) to run it")
	}
	tools := t.TempDir()
	install := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", tools, conformancePackage, nodePackage)
	install.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s %s: %v\n%s", conformancePackage, nodePackage, err, out)
	}
	nodeBin := filepath.Join(tools, "node_modules", "node", "bin")
	if out, err := exec.Command(filepath.Join(nodeBin, "node"), "--version").Output(); err != nil || !strings.HasPrefix(string(out), "v22.") {
		t.Fatalf("node from %s: %q %v", nodePackage, out, err)
	}

	fixture := everythingFixture(t)
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t, fixture)
	w.env = append(w.env, trustEnv, "CAIRN_TOOLSETS=all", "CAIRN_MODE=TEST")
	w.addPlugin("everything", fixture)
	url := serveHTTPWithFixture(t, w)

	out := t.TempDir()
	run := exec.Command(filepath.Join(nodeBin, "node"), filepath.Join(tools, "node_modules", ".bin", "conformance"),
		"server", "--url", url, "--suite", "all", "-o", out)
	run.Env = append(os.Environ(), "PATH="+nodeBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	log, _ := run.CombinedOutput() // non-zero whenever a scenario fails; the tables judge
	results := conformanceResults(t, out)
	if len(results) == 0 {
		t.Fatalf("the suite ran no scenario:\n%s", log)
	}

	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		failures := results[n]
		why := conformanceCannotApply[n]
		switch {
		case why == "" && len(failures) > 0:
			t.Errorf("scenario %s fails: %s", n, strings.Join(failures, "; "))
		case why != "" && len(failures) == 0:
			t.Errorf("scenario %s passes now; remove it from its expected-failure table (%s)", n, why)
		case why != "":
			t.Logf("%-32s expected failure: %s", n, why)
		default:
			t.Logf("%-32s pass", n)
		}
	}
	for n := range conformanceCannotApply {
		if _, ran := results[n]; !ran {
			t.Errorf("scenario %s is in the expected-failure table but the pinned suite did not run it", n)
		}
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", log)
	}
}

// serveHTTPWithFixture starts `cairn serve --http 127.0.0.1:0 --no-auth`
// with the fixture plugin ready and returns its MCP URL.
func serveHTTPWithFixture(t *testing.T, w *workspace) string {
	t.Helper()
	url, _ := startHTTP(t, w, nil, "cairn.plugin.everything: plugin ready", "--no-auth")
	return url
}

var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$`)

// conformanceResults reads the suite's output directory: for each scenario
// the messages of its failed checks (none when it passed).
func conformanceResults(t *testing.T, dir string) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatalf("scenario %s: %v", m[1], err)
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(raw, &checks); err != nil {
			t.Fatalf("scenario %s checks.json: %v", m[1], err)
		}
		failures := []string{}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				failures = append(failures, c.ID+": "+c.ErrorMessage)
			}
		}
		out[m[1]] = failures
	}
	return out
}
