package pgtest

import (
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Delayed returns a DSN for dsn's database reached through a proxy on
// loopback TCP that holds every chunk of bytes for d before passing it on,
// each way: a round trip of 2d, as for servers on other hosts than their
// database. Chunks keep their order, and a slow chunk does not hold back
// the reading of the next. The proxy stops with the test.
func Delayed(t testing.TB, dsn string, d time.Duration) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	socket := filepath.Join(q.Get("host"), ".s.PGSQL.5432")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			db, err := net.Dial("unix", socket)
			if err != nil {
				_ = c.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); delayCopy(db, c, d) }()
			go func() { defer wg.Done(); delayCopy(c, db, d) }()
		}
	}()
	q.Del("host")
	u.Host, u.RawQuery = ln.Addr().String(), q.Encode()
	return u.String()
}

// delayCopy copies src to dst, each chunk d after it was read, and closes
// both ends when either does.
func delayCopy(dst, src net.Conn, d time.Duration) {
	type chunk struct {
		at   time.Time
		data []byte
	}
	chunks := make(chan chunk, 1024)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 64<<10)
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{time.Now().Add(d), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.data); err != nil {
			break
		}
	}
	_ = dst.Close()
	_ = src.Close()
	// Drain, so the reader ends.
	for range chunks {
	}
}
