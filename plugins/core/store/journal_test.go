package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// crashWriterEnv names the store a re-run of this test binary writes to
// and then leaves without closing it, as a killed process does.
const crashWriterEnv = "CAIRN_TEST_CRASH_WRITER"

func init() {
	path := os.Getenv(crashWriterEnv)
	if path == "" {
		return
	}
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for i := range 10 {
		if err := s.Update(func(tx kv.Tx) error {
			return tx.Bucket([]byte(BucketProjects)).Put(fmt.Appendf(nil, "crash-%d", i), []byte("{}"))
		}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(0) // no Close: the commits are in the journal alone
}

// projectsInFile counts the keys the file itself holds under prefix
// crash-, read with bbolt alone, as a copy or a check of the file reads it.
func projectsInFile(t *testing.T, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	_ = db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(BucketProjects)).Cursor()
		for k, _ := c.Seek([]byte("crash-")); k != nil && string(k[:min(len(k), 6)]) == "crash-"; k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n
}

// TestJournalOfAKilledProcessIsFoldedIn: a process commits ten writes and
// exits without closing its store. The file alone lacks them, the journal
// beside it has them; Settle (what backup, check and copy run at rest)
// folds them in, and so does the next open.
func TestJournalOfAKilledProcessIsFoldedIn(t *testing.T) {
	if os.Getenv(SettingEnv) != "" && os.Getenv(SettingEnv) != "bbolt" {
		t.Skip("the journal is the bbolt store's")
	}
	path := filepath.Join(t.TempDir(), "core.db")
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), crashWriterEnv+"="+path, "CAIRN_STORE_JOURNAL=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writer: %v\n%s", err, out)
	}
	if n := projectsInFile(t, path); n != 0 {
		t.Fatalf("the file holds %d of the writes before any checkpoint; the test wants them in the journal alone", n)
	}
	if _, err := os.Stat(path + "-journal-0"); err != nil {
		t.Fatalf("no journal beside the file: %v", err)
	}
	if err := Settle(path); err != nil {
		t.Fatal(err)
	}
	if n := projectsInFile(t, path); n != 10 {
		t.Fatalf("after Settle the file holds %d of the 10 acknowledged writes", n)
	}
	// Settled, the journal holds nothing the file lacks: a second Settle
	// opens nothing, and the store opens with every write.
	if err := Settle(path); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_ = s.View(func(tx kv.Tx) error {
		for i := range 10 {
			if tx.Bucket([]byte(BucketProjects)).Get(fmt.Appendf(nil, "crash-%d", i)) == nil {
				t.Errorf("write %d lost", i)
			}
		}
		return nil
	})
}

// TestCheckpointPutsEveryCommitInTheFile: what a live backup or check runs
// first. Without it the file lacks the journal's commits.
func TestCheckpointPutsEveryCommitInTheFile(t *testing.T) {
	if os.Getenv("CAIRN_STORE_JOURNAL") == "off" {
		t.Skip("no journal")
	}
	s, _ := openTemp(t)
	for i := range 5 {
		if err := s.Update(func(tx kv.Tx) error {
			return tx.Bucket([]byte(BucketProjects)).Put(fmt.Appendf(nil, "crash-%d", i), []byte("{}"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	count := func() (n int) {
		_ = s.DB().View(func(tx *bolt.Tx) error {
			c := tx.Bucket([]byte(BucketProjects)).Cursor()
			for k, _ := c.Seek([]byte("crash-")); k != nil; k, _ = c.Next() {
				n++
			}
			return nil
		})
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("the file holds %d commits before a checkpoint", n)
	}
	if err := s.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 5 {
		t.Fatalf("after Checkpoint the file holds %d of 5 commits", n)
	}
	if s.Checkpoints() == 0 {
		t.Fatal("Checkpoints did not count it")
	}
}
