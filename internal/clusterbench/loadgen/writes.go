package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// writes drives -writers MCP sessions, spread over the servers of -urls
// turn by turn, each with an API key of -keys (one a line, taken turn by
// turn): every writer creates the task its thoughts go to, then all call
// task_create back to back for -duration, then thought_record for
// -duration. It prints both rates, then a profile of each phase (profile.go)
// on lines of their own that begin "profile ", sampling PostgreSQL's
// backends through -dsn when it is given. A failed call ends the run: a
// rate that skips failures would flatter the servers.
func writes(args []string) error {
	fs := flag.NewFlagSet("writes", flag.ExitOnError)
	urls := fs.String("urls", "", "the servers' MCP endpoints, comma-separated (http://127.0.0.1:18001/mcp,…)")
	keysFile := fs.String("keys", "", "a file of API keys, one a line")
	writers := fs.Int("writers", 32, "MCP sessions writing at once")
	d := fs.Duration("duration", 10*time.Second, "how long each of the two phases runs")
	wait := fs.Duration("wait", 2*time.Minute, "how long to wait for the servers to listen")
	dsn := fs.String("dsn", "", "the servers' PostgreSQL database, whose backends each phase's profile samples (none: bbolt)")
	_ = fs.Parse(args)
	servers := strings.Split(*urls, ",")
	keys, err := readKeys(*keysFile)
	if err != nil {
		return err
	}
	if *urls == "" || *writers < 1 {
		return fmt.Errorf("want -urls and -writers ≥ 1")
	}
	ctx := context.Background()
	for _, u := range servers {
		if err := waitListening(u, *wait); err != nil {
			return err
		}
	}
	sessions := make([]*client.Client, *writers)
	own := make([]string, *writers)
	for i := range sessions {
		c, err := connect(ctx, servers[i%len(servers)], keys[i%len(keys)], fmt.Sprintf("loadgen-%d", i))
		if err != nil {
			return fmt.Errorf("writer %d: %w", i, err)
		}
		defer c.Close()
		sessions[i] = c
		out, err := call(ctx, c, "task_create", map[string]any{"title": fmt.Sprintf("thoughts of writer %d", i)})
		if err != nil {
			return fmt.Errorf("writer %d: %w", i, err)
		}
		own[i], _ = out["task_id"].(string)
	}
	creates, createsProfile, err := profiledPhase(ctx, "task_create", *dsn, sessions, *d, func(i int, n int64) error {
		_, err := call(ctx, sessions[i], "task_create", map[string]any{"title": fmt.Sprintf("task %d", n), "labels": []string{"bench"}})
		return err
	})
	if err != nil {
		return err
	}
	thoughts, thoughtsProfile, err := profiledPhase(ctx, "thought_record", *dsn, sessions, *d, func(i int, n int64) error {
		_, err := call(ctx, sessions[i], "thought_record", map[string]any{"task_id": own[i], "type": "reflection", "content": fmt.Sprintf("thought %d", n)})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Printf("writes servers=%d writers=%d task_create=%.0f/s thought_record=%.0f/s\n", len(servers), *writers, creates, thoughts)
	for _, row := range []string{createsProfile, thoughtsProfile} {
		if row != "" {
			fmt.Println("profile " + row)
		}
	}
	return nil
}

// profiledPhase runs phase and returns its rate and its profile row; the
// row is empty where /proc cannot be read.
func profiledPhase(ctx context.Context, name, dsn string, sessions []*client.Client, d time.Duration, step func(i int, n int64) error) (float64, string, error) {
	var waits *waitTally
	if dsn != "" {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		waits = sampleWaits(sctx, dsn, 20*time.Millisecond)
	}
	before, errBefore := takeCPUSnapshot("/proc")
	rate, writes, err := phase(sessions, d, step)
	if err != nil {
		return 0, "", err
	}
	after, errAfter := takeCPUSnapshot("/proc")
	if errBefore != nil || errAfter != nil {
		return rate, "", nil
	}
	seconds, busy := cpuBetween(before, after)
	return rate, profileRow(name, writes, seconds, busy, waits), nil
}

// phase runs step from every writer until d has passed and returns the
// steps per second and their number; n numbers the steps across writers.
func phase(sessions []*client.Client, d time.Duration, step func(i int, n int64) error) (float64, int64, error) {
	var count atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, len(sessions))
	start := time.Now()
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < d {
				if err := step(i, count.Add(1)); err != nil {
					errc <- fmt.Errorf("writer %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return 0, 0, err
	}
	return float64(count.Load()) / time.Since(start).Seconds(), count.Load(), nil
}

// connect opens one initialized session, on a connection of its own as
// one agent's would be.
func connect(ctx context.Context, url, key, name string) (*client.Client, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	c, err := client.NewStreamableHttpClient(url,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}),
		transport.WithHTTPBasicClient(hc))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// call is one tools/call that must succeed; it returns the structured answer.
func call(ctx context.Context, c *client.Client, name string, args map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s: %v", name, res.Content)
	}
	out, _ := res.StructuredContent.(map[string]any)
	return out, nil
}

// waitListening waits until the server of url accepts connections.
func waitListening(url string, d time.Duration) error {
	host := strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "https://")
	host, _, _ = strings.Cut(host, "/")
	deadline := time.Now().Add(d)
	for {
		conn, err := net.DialTimeout("tcp", host, time.Second)
		if err == nil {
			_ = conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not listen after %v: %w", host, d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func readKeys(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-keys: %w", err)
	}
	defer f.Close()
	var keys []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k := strings.TrimSpace(sc.Text()); k != "" {
			keys = append(keys, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("-keys %s holds no key", path)
	}
	return keys, nil
}
