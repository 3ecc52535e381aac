package audit

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/internal/trail/tree"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// StoreCheck is what CheckStore found in a whole store: what
// `cairn store copy` verifies on the target after copying.
type StoreCheck struct {
	// Tasks is the number of tasks whose chains were verified.
	Tasks int `json:"tasks"`
	// ChainLinks is the number of thought and event links verified.
	ChainLinks int `json:"chain_links"`
	// Sessions is the number of finalized audit sessions.
	Sessions int `json:"sessions"`
	// Roots maps each finalized session to the Merkle root recomputed from
	// the records stored now.
	Roots map[string]string `json:"-"`
	// Broken lists every disagreement found (empty when all verifies).
	Broken []trail.BrokenLink `json:"broken_links,omitempty"`
}

// checkBatch is how many tasks one verification pass holds in memory.
const checkBatch = 500

// CheckStore verifies every task's thought and event chain, in batches of
// tasks each read on one snapshot, and recomputes every finalized
// session's root from its sealed records.
func (s *Service) CheckStore() (StoreCheck, error) {
	out := StoreCheck{Roots: map[string]string{}}
	var from uint64 = 1
	for {
		var scope []uint64
		err := s.st.View(func(tx kv.Tx) error {
			c := tx.Bucket([]byte(store.BucketTasks)).Cursor()
			for k, _ := c.Seek(store.U64(from)); k != nil && len(scope) < checkBatch; k, _ = c.Next() {
				if len(k) == 8 {
					scope = append(scope, binary.BigEndian.Uint64(k))
				}
			}
			if len(scope) == 0 {
				return nil
			}
			r, err := verifyScope(tx, scope, []byte{chainThought, chainEvent})
			if err != nil {
				return err
			}
			out.Tasks += len(scope)
			out.ChainLinks += r.Total
			out.Broken = append(out.Broken, r.BrokenLinks...)
			return nil
		})
		if err != nil {
			return out, err
		}
		if len(scope) == 0 {
			break
		}
		from = scope[len(scope)-1] + 1
	}
	err := s.st.View(func(tx kv.Tx) error {
		return tx.Bucket([]byte(store.BucketAuditSessions)).ForEach(func(k, v []byte) error {
			var sess session
			if err := json.Unmarshal(v, &sess); err != nil {
				return fmt.Errorf("corrupt audit session %x: %v", k, err)
			}
			if sess.Frozen == nil || len(k) != 8 {
				return nil
			}
			sess.num = binary.BigEndian.Uint64(k)
			refs, err := frozenRefs(tx, &sess)
			if err != nil {
				return err
			}
			leaves := make([][]byte, len(refs))
			for i, r := range refs {
				l, ok, err := getLink(tx, r.task, r.chain, r.pos)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("audit session %s seals %s's record %d, which is missing", sess.SessionID, taskID(r.task), r.pos)
				}
				leaves[i] = l.hash[:]
			}
			out.Sessions++
			out.Roots[sess.SessionID] = hex.EncodeToString(tree.Root(leaves))
			return nil
		})
	})
	return out, err
}

// FinalizedRoots maps every finalized session to the root it recorded.
func (s *Service) FinalizedRoots() (map[string]string, error) {
	out := map[string]string{}
	err := s.st.View(func(tx kv.Tx) error {
		return tx.Bucket([]byte(store.BucketAuditSessions)).ForEach(func(_, v []byte) error {
			var sess session
			if err := json.Unmarshal(v, &sess); err != nil {
				return err
			}
			if sess.Frozen != nil {
				out[sess.SessionID] = sess.Frozen.Root
			}
			return nil
		})
	})
	return out, err
}

// StoreProblems runs CheckStore and compares every recomputed root with the
// root its session froze, for `cairn store check`: each broken link and
// each root that moved is one problem naming the record, in file's terms.
func (s *Service) StoreProblems(file string) ([]boltcheck.Problem, map[string]int, error) {
	want, err := s.FinalizedRoots()
	if err != nil {
		return []boltcheck.Problem{{File: file, Bucket: store.BucketAuditSessions, Damage: fmt.Sprintf("the audit sessions cannot be read: %v", err)}}, nil, nil
	}
	check, err := s.CheckStore()
	if err != nil {
		return []boltcheck.Problem{{File: file, Damage: fmt.Sprintf("the chains cannot be verified: %v", err)}}, nil, nil
	}
	var out []boltcheck.Problem
	for _, b := range check.Broken {
		rec := fmt.Sprintf("task %s %s chain position %d", b.TaskID, b.Chain, b.Position)
		if b.RecordID != "" {
			rec += " (" + b.RecordID + ")"
		}
		damage := b.Reason
		if b.Detail != "" {
			damage += ": " + b.Detail
		}
		if b.ExpectedHash != "" || b.ActualHash != "" {
			damage += fmt.Sprintf(" (expected %s, found %s)", b.ExpectedHash, b.ActualHash)
		}
		out = append(out, boltcheck.Problem{File: file, Bucket: store.BucketChainLinks, Record: rec, Damage: damage})
	}
	verified := 0
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		switch got, ok := check.Roots[id]; {
		case !ok:
			out = append(out, boltcheck.Problem{File: file, Bucket: store.BucketAuditSessions, Record: "audit session " + id, Damage: "the session froze a root but its sealed records cannot be found"})
		case got != want[id]:
			out = append(out, boltcheck.Problem{File: file, Bucket: store.BucketAuditSessions, Record: "audit session " + id,
				Damage: fmt.Sprintf("the frozen Merkle root is %s but the sealed records give %s", want[id], got)})
		default:
			verified++
		}
	}
	return out, map[string]int{"tasks": check.Tasks, "chain_links": check.ChainLinks, "sessions": check.Sessions, "roots_verified": verified}, nil
}
