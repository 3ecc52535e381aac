package accounts

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// limiterStep changes the limits (when limit is set), moves the clock, then
// makes requests and checks what they did.
type limiterStep struct {
	advance   time.Duration
	limit     *RateLimit
	requests  int
	allowed   int
	limitedBy string   // of the last refusal, when there was one
	events    []string // window:level@used, in order
	used      [3]int   // minute, hour, day after the step
}

var limiterCases = []struct {
	name  string
	limit RateLimit
	steps []limiterStep
}{
	{"windows roll over", RateLimit{2, 100, 1000}, []limiterStep{
		{requests: 3, allowed: 2, limitedBy: "minute", events: []string{"minute:warning@2", "minute:limit@2"}, used: [3]int{2, 2, 2}},
		{advance: time.Minute, requests: 2, allowed: 2, events: []string{"minute:warning@2", "minute:limit@2"}, used: [3]int{2, 4, 4}},
		{advance: time.Hour, requests: 1, allowed: 1, used: [3]int{1, 1, 5}},
		{advance: 24 * time.Hour, requests: 1, allowed: 1, used: [3]int{1, 1, 1}},
	}},
	{"a refusal counts nowhere", RateLimit{5, 3, 100}, []limiterStep{
		{requests: 3, allowed: 3, events: []string{"hour:warning@3", "hour:limit@3"}, used: [3]int{3, 3, 3}},
		{requests: 4, allowed: 0, limitedBy: "hour", used: [3]int{3, 3, 3}},
		{advance: time.Minute, requests: 1, allowed: 0, limitedBy: "hour", used: [3]int{0, 3, 3}},
	}},
	{"thresholds once per window and level", RateLimit{10, 1000, 10000}, []limiterStep{
		{requests: 7, allowed: 7, used: [3]int{7, 7, 7}},
		{requests: 1, allowed: 1, events: []string{"minute:warning@8"}, used: [3]int{8, 8, 8}},
		{requests: 1, allowed: 1, used: [3]int{9, 9, 9}},
		{requests: 1, allowed: 1, events: []string{"minute:limit@10"}, used: [3]int{10, 10, 10}},
		{requests: 3, allowed: 0, limitedBy: "minute", used: [3]int{10, 10, 10}},
		{advance: time.Minute, requests: 10, allowed: 10, events: []string{"minute:warning@8", "minute:limit@10"}, used: [3]int{10, 20, 20}},
	}},
	{"limits lowered after a window filled", RateLimit{10, 1000, 10000}, []limiterStep{
		{requests: 6, allowed: 6, used: [3]int{6, 6, 6}},
		// The first refusal announces both levels the lower limit reached.
		{limit: &RateLimit{5, 1000, 10000}, requests: 2, allowed: 0, limitedBy: "minute", events: []string{"minute:warning@6", "minute:limit@6"}, used: [3]int{6, 6, 6}},
		// Raised again: this window announced both levels already.
		{limit: &RateLimit{10, 1000, 10000}, requests: 4, allowed: 4, used: [3]int{10, 10, 10}},
		{advance: time.Minute, requests: 8, allowed: 8, events: []string{"minute:warning@8"}, used: [3]int{8, 18, 18}},
	}},
	{"limits lowered below an announced count", RateLimit{10, 1000, 10000}, []limiterStep{
		{requests: 10, allowed: 10, events: []string{"minute:warning@8", "minute:limit@10"}, used: [3]int{10, 10, 10}},
		{limit: &RateLimit{4, 1000, 10000}, requests: 2, allowed: 0, limitedBy: "minute", used: [3]int{10, 10, 10}},
	}},
}

func TestLimiterTable(t *testing.T) { pgtest.EachStore(t, testLimiterTable) }

// The same script and assertions on both backends: bbolt counts inside an
// admin Update, PostgreSQL in one statement on the usage tables.
func testLimiterTable(t *testing.T) {
	for _, tc := range limiterCases {
		t.Run(tc.name, func(t *testing.T) {
			a, c, _ := newAdmin(t)
			lim := tc.limit
			k, err := a.CreateAPIKey(CreateAPIKeyOptions{Name: "rl", UserID: "u", RateLimit: &lim})
			if err != nil {
				t.Fatal(err)
			}
			drain(t, a)
			for i, s := range tc.steps {
				if s.limit != nil {
					if _, err := a.UpdateAPIKey(k.ID, APIKeyUpdates{RateLimit: s.limit}); err != nil {
						t.Fatal(err)
					}
					drain(t, a)
				}
				c.add(s.advance)
				allowed, limitedBy := 0, ""
				for range s.requests {
					r, err := a.CheckRateLimit(k.ID)
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if r.Allowed {
						allowed++
					} else {
						limitedBy = strings.Join(r.LimitedBy, ",")
					}
				}
				if allowed != s.allowed || limitedBy != s.limitedBy {
					t.Errorf("step %d: %d allowed, limited by %q; want %d, %q", i, allowed, limitedBy, s.allowed, s.limitedBy)
				}
				if got := thresholdEvents(t, a); strings.Join(got, " ") != strings.Join(s.events, " ") {
					t.Errorf("step %d: events %v, want %v", i, got, s.events)
				}
				u, err := a.GetAPIKeyUsage(k.ID, UsageOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := [3]int{u.Minute.Used, u.Hour.Used, u.Day.Used}; got != s.used {
					t.Errorf("step %d: used %v, want %v", i, got, s.used)
				}
			}
		})
	}
	a, _, _ := newAdmin(t)
	if _, err := a.CheckRateLimit("key_missing"); code(err) != errs.NotFound || field(err) != "api_key_id" {
		t.Fatalf("unknown key: %v", err)
	}
}

// thresholdEvents drains the outbox and lists its usage.threshold_exceeded
// events as window:level@used.
func thresholdEvents(t *testing.T, a *Admin) []string {
	t.Helper()
	var out []string
	for _, ev := range drain(t, a) {
		if ev.Type == EventUsageThreshold {
			d := eventData(t, ev)
			out = append(out, fmt.Sprintf("%v:%v@%v", d["window"], d["level"], d["used"]))
		}
	}
	return out
}

func TestLimiterAcrossServers(t *testing.T) { pgtest.EachStore(t, testLimiterAcrossServers) }

// Goroutines spread over three stores (three servers' connection pools on
// PostgreSQL; on bbolt three Stores of this process on one file) hammer
// one key: exactly the limit is allowed, and each window announces each
// level exactly once.
func testLimiterAcrossServers(t *testing.T) {
	const pools, perPool, each, limit = 3, 8, 4, 30
	a, c, dir := newAdmin(t)
	libs := []*Admin{a}
	for len(libs) < pools {
		st, err := store.OpenFor(dir, os.Getenv(store.SettingEnv))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		lib, err := New(st, Options{Now: c.now})
		if err != nil {
			t.Fatal(err)
		}
		libs = append(libs, lib)
	}
	k, err := a.CreateAPIKey(CreateAPIKeyOptions{Name: "rl", UserID: "u", RateLimit: &RateLimit{limit, limit, 1000}})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, a)
	hammer := func() int64 {
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for p := range pools * perPool {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					r, err := libs[p%pools].CheckRateLimit(k.ID)
					if err != nil {
						t.Error(err)
						return
					}
					if r.Allowed {
						allowed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		return allowed.Load()
	}
	want := fmt.Sprintf("hour:limit@%d hour:warning@%d minute:limit@%d minute:warning@%d", limit, limit*8/10, limit, limit*8/10)
	for round, advance := range []time.Duration{0, time.Hour} {
		c.add(advance)
		if n := hammer(); n != limit {
			t.Fatalf("round %d: %d of %d requests allowed, want exactly %d", round, n, pools*perPool*each, limit)
		}
		got := thresholdEvents(t, a)
		slices.Sort(got)
		if strings.Join(got, " ") != want {
			t.Fatalf("round %d: events %v, want each window and level once: %s", round, got, want)
		}
	}
	u, err := a.GetAPIKeyUsage(k.ID, UsageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u.TotalRequests != 2*limit || u.Day.Used != 2*limit || len(u.Daily) != 1 || u.Daily[0].Requests != 2*limit {
		t.Fatalf("usage after two rounds: %+v", u)
	}
}
