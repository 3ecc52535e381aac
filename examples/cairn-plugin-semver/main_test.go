package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// sdktest.Invoke runs a tool exactly as a host call would (validation,
// decoding, handler, encoding) without starting a process.
func TestTools(t *testing.T) {
	p := newPlugin()
	ctx := context.Background()
	cases := []struct {
		tool, args, wantOut, wantCode, wantField string
	}{
		{"semver_compare", `{"a":"1.2.3","b":"v1.10.0"}`, `{"result":-1,"relation":"older"}`, "", ""},
		{"semver_compare", `{"a":"2.0.0","b":"2.0.0"}`, `{"result":0,"relation":"same"}`, "", ""},
		{"semver_compare", `{"a":"1.2","b":"1.0.0"}`, `{"result":1,"relation":"newer"}`, "", ""},
		{"semver_compare", `{"a":"banana","b":"1.0.0"}`, "", "ERR_INVALID_INPUT", "a"},
		{"semver_compare", `{"a":"1.0.0"}`, "", "ERR_INVALID_INPUT", "b"},
		{"semver_compare", `{"a":"","b":"1.0.0"}`, "", "ERR_INVALID_INPUT", "a"},
		{"semver_bump", `{"version":"1.2.3","part":"minor"}`, `{"previous":"1.2.3","version":"1.3.0"}`, "", ""},
		{"semver_bump", `{"version":"1.2.3","part":"major","prerelease":"rc.1"}`, `{"previous":"1.2.3","version":"2.0.0-rc.1"}`, "", ""},
		{"semver_bump", `{"version":"1.3.0-rc.2","part":"patch"}`, `{"previous":"1.3.0-rc.2","version":"1.3.0"}`, "", ""},
		{"semver_bump", `{"version":"1.2.3","part":"huge"}`, "", "ERR_INVALID_INPUT", "part"},
		{"semver_bump", `{"version":"1.2.3","part":"patch","prerelease":"no spaces"}`, "", "ERR_INVALID_INPUT", "prerelease"},
		{"semver_sort", `{"versions":["1.10.0","1.2.0","2.0.0-rc.1","1.9.9"]}`, `{"versions":["1.2.0","1.9.9","1.10.0","2.0.0-rc.1"],"latest":"1.10.0"}`, "", ""},
		{"semver_sort", `{"versions":["1.0.0","x"]}`, "", "ERR_INVALID_INPUT", "versions[1]"},
		{"semver_sort", `{"versions":[]}`, "", "ERR_INVALID_INPUT", "versions"},
		{"semver_sort", `{"versions":["1.0.0"],"extra":1}`, "", "ERR_INVALID_INPUT", "extra"},
	}
	for _, c := range cases {
		res := sdktest.Invoke(ctx, p, c.tool, []byte(c.args))
		if c.wantCode != "" {
			if res.Err == nil {
				t.Errorf("%s %s: want %s, got output %s", c.tool, c.args, c.wantCode, res.Output)
				continue
			}
			if res.Err.Code != c.wantCode || res.Err.Details["field"] != c.wantField || res.Status != 400 {
				t.Errorf("%s %s: got %s field=%v status=%d, want %s field=%s status 400", c.tool, c.args, res.Err.Code, res.Err.Details["field"], res.Status, c.wantCode, c.wantField)
			}
			continue
		}
		if res.Err != nil {
			t.Errorf("%s %s: unexpected error %v", c.tool, c.args, res.Err)
			continue
		}
		var got, want any
		_ = json.Unmarshal(res.Output, &got)
		_ = json.Unmarshal([]byte(c.wantOut), &want)
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("%s %s: got %s want %s", c.tool, c.args, gb, wb)
		}
	}
}
