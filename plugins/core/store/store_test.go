package store

import (
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "core.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

// openEach opens a store in a fresh data dir on the backend CAIRN_STORE
// names (pgtest.EachStore sets it) and returns it with the setting to reopen.
func openEach(t *testing.T) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenFor(dir, os.Getenv(SettingEnv))
	if err != nil {
		t.Fatalf("OpenFor: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

func wantInitFailed(t *testing.T, err error, contains string) {
	t.Helper()
	e, ok := err.(*errs.Error)
	if !ok {
		t.Fatalf("error %T %v, want *errs.Error", err, err)
	}
	if e.Code != errs.InitFailed {
		t.Fatalf("code %s, want %s", e.Code, errs.InitFailed)
	}
	if !strings.Contains(e.Message, contains) {
		t.Fatalf("message %q lacks %q", e.Message, contains)
	}
}

func TestOpenCreatesLayoutAndVersion(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	if s.Path() != path {
		t.Fatalf("Path %q, want %q", s.Path(), path)
	}
	if s.UserVersion() != CurrentVersion || CurrentVersion != 11 {
		t.Fatalf("UserVersion %d, CurrentVersion %d, want 11", s.UserVersion(), CurrentVersion)
	}
	if s.DB().NoSync {
		t.Fatal("NoSync must stay false: commits are durable")
	}
	err := s.View(func(tx kv.Tx) error {
		for _, b := range []string{BucketMeta, BucketCounters, BucketProjectSeq, BucketProjects, BucketTasks,
			BucketTasksByProject, BucketTasksByProjectStatus, BucketTasksByStatus, BucketTaskChildren} {
			if !tx.Bucket([]byte(b)).Exists() {
				t.Errorf("bucket %s missing", b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReopenKeepsVersionAndCounters(t *testing.T) {
	pgtest.EachStore(t, testReopenKeepsVersionAndCounters)
}

func testReopenKeepsVersionAndCounters(t *testing.T) {
	s, dir := openEach(t)
	var got []uint64
	for i := 0; i < 3; i++ {
		if err := s.Update(func(tx kv.Tx) error {
			n, err := NextID(tx, CounterTask)
			got = append(got, n)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// A rolled-back transaction does not consume a number.
	_ = s.Update(func(tx kv.Tx) error {
		if _, err := NextID(tx, CounterTask); err != nil {
			return err
		}
		return os.ErrInvalid
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenFor(dir, os.Getenv(SettingEnv))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.UserVersion() != CurrentVersion {
		t.Fatalf("UserVersion after reopen %d", s2.UserVersion())
	}
	err = s2.Update(func(tx kv.Tx) error {
		n, err := NextID(tx, CounterTask)
		got = append(got, n)
		if err != nil {
			return err
		}
		// Independent counters share the mechanism but not the numbers.
		th, err := NextID(tx, CounterThought)
		if err != nil || th != 1 {
			t.Errorf("thought counter %d %v, want 1", th, err)
		}
		a, err := NextID(tx, CounterAudit)
		if err != nil || a != 1 {
			t.Errorf("audit counter %d %v, want 1", a, err)
		}
		n5, p1, _ := NextTaskNumbers(tx, "alpha", false)
		n6, p2, _ := NextTaskNumbers(tx, "alpha", false)
		n7, q1, _ := NextTaskNumbers(tx, "beta", false)
		if p1 != 1 || p2 != 2 || q1 != 1 || n5 != 5 || n6 != 6 || n7 != 7 {
			t.Errorf("task numbers %d %d %d with project sequences %d %d %d, want 5 6 7 with 1 2 1", n5, n6, n7, p1, p2, q1)
		}
		if PeekID(tx, CounterTask) != 7 {
			t.Errorf("PeekID %d, want 7", PeekID(tx, CounterTask))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{1, 2, 3, 4}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("numbers %v, want %v", got, want)
		}
	}
}

func TestLockedStoreFailsFast(t *testing.T) {
	t.Parallel()
	// Returning at all is the point: without the lock timeout, Open would
	// block until the go test deadline.
	_, path := openTemp(t)
	s2, err := Open(path, Options{Timeout: 200 * time.Millisecond})
	if err == nil {
		s2.Close()
		t.Fatal("second Open of a locked store succeeded")
	}
	wantInitFailed(t, err, "locked by another cairn process")
	if !strings.Contains(err.Error(), "CAIRN_DATA_DIR") {
		t.Fatalf("message should say what to do: %v", err)
	}
}

func TestDefaultTimeoutIsAboutOneSecond(t *testing.T) {
	t.Parallel()
	if DefaultTimeout != time.Second {
		t.Fatalf("DefaultTimeout %v, want 1s", DefaultTimeout)
	}
	_, path := openTemp(t)
	_, err := Open(path, Options{})
	if err == nil {
		t.Fatal("Open of a locked store with the default timeout succeeded")
	}
	wantInitFailed(t, err, "locked")
}

func TestOpenFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a bolt file ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(junk, Options{})
	wantInitFailed(t, err, "is damaged: page 0 (meta): both meta pages are invalid")

	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Open(filepath.Join(blocker, "sub", "core.db"), Options{})
	wantInitFailed(t, err, "data directory")
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	if err := s.Update(func(tx kv.Tx) error {
		return tx.Bucket([]byte(BucketMeta)).Put(keyUserVersion, U64(99))
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(path, Options{})
	wantInitFailed(t, err, "newer than this cairn")
}

func TestMigrationsMoveVersionForward(t *testing.T) {
	s, path := openTemp(t)
	s.Close()

	saved := migrations
	defer func() { migrations = saved }()
	ran := 0
	migrations = append(append([]Migration{}, saved...), func(tx *bolt.Tx) error {
		ran++
		_, err := tx.CreateBucketIfNotExists([]byte("thoughts"))
		return err
	})
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	next := CurrentVersion + 1
	if s2.UserVersion() != next || ran != 1 {
		t.Fatalf("version %d ran %d, want %d and 1", s2.UserVersion(), ran, next)
	}
	s2.Close()
	s3, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if s3.UserVersion() != next || ran != 1 {
		t.Fatalf("reopen: version %d ran %d, want %d and 1 (a migration runs once)", s3.UserVersion(), ran, next)
	}
	var stored uint64
	_ = s3.View(func(tx kv.Tx) error {
		raw := tx.Bucket([]byte(BucketMeta)).Get(keyUserVersion)
		for _, c := range raw {
			stored = stored<<8 | uint64(c)
		}
		return nil
	})
	if stored != uint64(next) {
		t.Fatalf("stored user_version %d", stored)
	}
}

func TestFailedMigrationLeavesVersion(t *testing.T) {
	s, path := openTemp(t)
	s.Close()
	saved := migrations
	defer func() { migrations = saved }()
	migrations = append(append([]Migration{}, saved...), func(tx *bolt.Tx) error { return os.ErrPermission })
	_, err := Open(path, Options{})
	wantInitFailed(t, err, "migrate")
	migrations = saved
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.UserVersion() != CurrentVersion {
		t.Fatalf("version %d after failed migration, want %d", s2.UserVersion(), CurrentVersion)
	}
}

// A store written by schema v1 gains the decision-trail buckets on open and
// keeps its data.
func TestV1StoreMigratesToV2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	saved := migrations
	migrations = saved[:1]
	s, err := Open(path, Options{})
	migrations = saved
	if err != nil {
		t.Fatal(err)
	}
	if s.UserVersion() != 1 {
		t.Fatalf("v1 store has version %d", s.UserVersion())
	}
	if err := s.Update(func(tx kv.Tx) error { _, err := NextID(tx, CounterTask); return err }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.UserVersion() != CurrentVersion {
		t.Fatalf("migrated version %d, want %d", s2.UserVersion(), CurrentVersion)
	}
	_ = s2.View(func(tx kv.Tx) error {
		for _, b := range append([]string{BucketChainLinks, BucketAuditSessions, BucketAuditFrozen,
			BucketTaskDeps, BucketTaskDependents, BucketTaskClaims, BucketTaskTrigrams, BucketTaskSearchText}, IdempotencyBuckets()...) {
			if !tx.Bucket([]byte(b)).Exists() {
				t.Errorf("bucket %s missing after migration", b)
			}
		}
		for _, b := range []string{bucketIdempotencyOrder, bucketIdempotency, bucketIdempotencyAlt} {
			if tx.Bucket([]byte(b)).Exists() {
				t.Errorf("bucket %s left after migration", b)
			}
		}
		if PeekID(tx, CounterTask) != 1 {
			t.Errorf("task counter lost in migration")
		}
		return nil
	})
}

// Concurrent Commit calls all land, a failing call is answered with its own
// error and leaves no write behind, and its neighbours still commit.
func TestGroupCommit(t *testing.T) { pgtest.EachStore(t, testGroupCommit) }

func testGroupCommit(t *testing.T) {
	s, _ := openEach(t)
	const n = 64
	var wg sync.WaitGroup
	errsOut := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errsOut[i] = s.Commit(func(tx kv.Tx) error {
				if i%8 == 7 {
					return fmt.Errorf("refused %d", i)
				}
				if i == 13 {
					panic("boom")
				}
				_, err := NextID(tx, CounterThought)
				if err != nil {
					return err
				}
				return tx.Bucket([]byte(BucketMeta)).Put([]byte(fmt.Sprintf("k%02d", i)), []byte{1})
			})
		}(i)
	}
	wg.Wait()
	ok := 0
	for i, err := range errsOut {
		switch {
		case i%8 == 7:
			if err == nil || err.Error() != fmt.Sprintf("refused %d", i) {
				t.Errorf("call %d: err %v, want its own refusal", i, err)
			}
		case i == 13:
			if err == nil || !strings.Contains(err.Error(), "panicked") {
				t.Errorf("call 13: err %v, want the panic as an error", err)
			}
		default:
			if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			ok++
		}
	}
	_ = s.View(func(tx kv.Tx) error {
		if got := PeekID(tx, CounterThought); got != uint64(ok) {
			t.Errorf("counter %d, want %d: a failed call's writes must not land", got, ok)
		}
		meta := tx.Bucket([]byte(BucketMeta))
		for i := 0; i < n; i++ {
			has := meta.Get([]byte(fmt.Sprintf("k%02d", i))) != nil
			if want := i%8 != 7 && i != 13; has != want {
				t.Errorf("key k%02d present=%v, want %v", i, has, want)
			}
		}
		return nil
	})
}

// Local tells a bbolt file from a database: task_get runs inline on the
// plugin's call lane only where a read cannot wait on a network.
func TestLocalIsABboltFileNotADatabase(t *testing.T) {
	t.Parallel()
	s, err := OpenFor(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Local() {
		t.Fatal("a bbolt store says it is not local")
	}
	pg, err := OpenPostgres(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if pg.Local() {
		t.Fatal("a PostgreSQL store says it is local")
	}
}
