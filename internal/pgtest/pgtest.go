// Package pgtest runs a throwaway PostgreSQL server for tests: initdb and
// pg_ctl from the machine's PostgreSQL packages (Debian's postgresql puts
// them under /usr/lib/postgresql/<version>/bin), listening only on a Unix
// socket in a temporary directory. PostgreSQL refuses to run as root, so
// when the tests run as root the server runs as the unprivileged user
// "nobody", in a directory that user owns.
//
// Tests call DSN for a fresh, empty database. A package whose TestMain calls
// Main shares one server between its tests; otherwise each test gets its
// own server, stopped when the test ends.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// superuser is the role initdb creates; the server trusts local connections.
const superuser = "cairn"

// Server is one running PostgreSQL server.
type Server struct {
	dir  string
	bin  string
	cred *syscall.Credential
	dbs  atomic.Int64
}

var (
	sharedMu  sync.Mutex
	useShared bool
	shared    *Server
)

// Binaries returns the directory holding initdb and pg_ctl, or an error
// saying they are absent.
func Binaries() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "initdb")); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL binaries (initdb, pg_ctl) not found on PATH or under /usr/lib/postgresql/*/bin; install them with apt-get install postgresql")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Main runs the package's tests with one shared server, started on first
// use and stopped after them. Use it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	sharedMu.Lock()
	useShared = true
	sharedMu.Unlock()
	code := m.Run()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
		shared = nil
	}
	return code
}

// DSN returns the URL of a new, empty database. It skips the test, saying
// why, when the PostgreSQL binaries are absent; any other failure fails it.
func DSN(t testing.TB) string {
	t.Helper()
	bin, err := Binaries()
	if err != nil {
		t.Skip(err.Error())
	}
	srv, err := sharedServer(bin)
	if err != nil {
		t.Fatal(err)
	}
	if srv == nil {
		if srv, err = Start(bin); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
	}
	dsn, err := srv.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// sharedServer is the server of a package that uses Main (started on first
// use), or nil without Main.
func sharedServer(bin string) (*Server, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if !useShared {
		return nil, nil
	}
	if shared == nil {
		srv, err := Start(bin)
		if err != nil {
			return nil, err
		}
		shared = srv
	}
	return shared, nil
}

// Start runs initdb and pg_ctl from bin in a fresh temporary directory;
// settings are extra server settings ("shared_preload_libraries=…"), for
// benchmarks that read the server's own statistics.
func Start(bin string, settings ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "cairn-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			return nil, fmt.Errorf("tests run as root and PostgreSQL refuses root, but there is no user nobody to run it as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run("initdb", "-D", data, "-U", superuser, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=500", dir)
	for _, kv := range settings {
		opts += " -c " + kv
	}
	if out, err := s.run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return s, nil
}

func (s *Server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.Dir = s.dir
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd.CombinedOutput()
}

// Bin is the directory of the server's binaries (pgbench lies beside
// pg_ctl in Debian's packages).
func (s *Server) Bin() string { return s.bin }

// PID is the server's postmaster process, whose children are the
// backends (0 when its pid file cannot be read).
func (s *Server) PID() int {
	raw, err := os.ReadFile(filepath.Join(s.dir, "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// URL is the DSN of database db on this server.
func (s *Server) URL(db string) string {
	q := url.Values{"host": {s.dir}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User(superuser), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// NewDatabase creates an empty database and returns its DSN.
func (s *Server) NewDatabase() (string, error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", fmt.Errorf("connect to the test server: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// Stop stops the server at once and removes its directory.
func (s *Server) Stop() {
	_, _ = s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
	_ = os.RemoveAll(s.dir)
}

// StoreEnv is the setting that picks a store backend (docs/decisions.md D26).
const StoreEnv = "CAIRN_STORE"

// EachStore runs fn twice as subtests (or sub-benchmarks): "bbolt" with
// CAIRN_STORE unset (the data-dir files) and "postgres" with CAIRN_STORE
// naming a fresh database, so one suite's assertions catch any difference
// between the backends and one benchmark run measures both. The postgres
// run skips, saying why, when PostgreSQL is not installed.
func EachStore[T interface {
	testing.TB
	Run(name string, f func(T)) bool
}](t T, fn func(T)) {
	t.Helper()
	t.Run("bbolt", func(t T) {
		t.Setenv(StoreEnv, "")
		fn(t)
	})
	t.Run("postgres", func(t T) {
		t.Setenv(StoreEnv, DSN(t))
		fn(t)
	})
}
