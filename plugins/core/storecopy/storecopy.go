// Package storecopy moves the core area's bbolt store into PostgreSQL
// (`cairn store copy`, docs/decisions.md D26) and proves the copy: every pair is
// copied byte for byte, then on the target every task's thought and event
// chain must verify and every finalized audit session's Merkle root,
// recomputed from the copied records, must equal the root the source
// recorded.
package storecopy

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Report is what a copy moved and verified.
type Report struct {
	Area    string `json:"area"`
	Buckets int    `json:"buckets"`
	Pairs   int    `json:"pairs"`
	// Tasks and ChainLinks count what verified on the target.
	Tasks      int `json:"tasks"`
	ChainLinks int `json:"chain_links"`
	// Sessions counts finalized audit sessions; RootsVerified those whose
	// root recomputed on the target equals the source's.
	Sessions      int `json:"sessions"`
	RootsVerified int `json:"roots_verified"`
}

// Copy moves the core store of dataDir into the empty database at dsn and
// verifies it there.
func Copy(ctx context.Context, dataDir, dsn string) (Report, error) {
	rep := Report{Area: "core"}
	path := filepath.Join(dataDir, store.FileName)
	if err := store.Settle(path); err != nil {
		return rep, err
	}
	db, err := kv.OpenBoltSource(path)
	if err != nil {
		return rep, err
	}
	if db == nil {
		return rep, errs.Invalidf("from", "exists", "%s holds no core store (%s): name the data dir a cairn server ran with", dataDir, store.FileName)
	}
	src, err := store.OnBolt(db)
	if err != nil {
		_ = db.Close()
		return rep, err
	}
	defer src.Close()
	want, err := audit.New(src, audit.Config{}).FinalizedRoots()
	if err != nil {
		return rep, errs.Newf(500, errs.Internal, "read the finalized roots of %s: %v", path, err)
	}
	copied, err := store.CopyFromBolt(ctx, db, dsn)
	if err != nil {
		return rep, err
	}
	rep.Buckets, rep.Pairs = copied.Buckets, copied.Pairs

	dst, err := store.OpenPostgres(dsn)
	if err != nil {
		return rep, err
	}
	defer dst.Close()
	check, err := audit.New(dst, audit.Config{}).CheckStore()
	if err != nil {
		return rep, errs.Newf(500, errs.Internal, "verify the copy: %v", err)
	}
	rep.Tasks, rep.ChainLinks, rep.Sessions = check.Tasks, check.ChainLinks, check.Sessions
	var problems []string
	for _, b := range check.Broken {
		problems = append(problems, fmt.Sprintf("%s %s: %s", b.TaskID, b.Reason, b.Detail))
	}
	for id, root := range want {
		switch got, ok := check.Roots[id]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("session %s is not finalized on the target", id))
		case got != root:
			problems = append(problems, fmt.Sprintf("session %s: root %s on the target, %s on the source", id, got, root))
		default:
			rep.RootsVerified++
		}
	}
	if len(problems) > 0 || rep.Sessions != len(want) {
		sort.Strings(problems)
		e := errs.Newf(500, errs.Internal, "the copy in %s did not verify (%d problem(s)); drop that database and copy again: %v", dst.Path(), len(problems), problems)
		e.Details["report"] = rep
		return rep, e
	}
	return rep, nil
}
