package tasks

import (
	"bytes"
	"encoding/binary"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// The search text: per task, the lower-cased title and
// description — folded as the match folds them — behind the fields a
// search filters and sorts on (the facet member value: status, priority,
// created, updated, progress) and the project. Verifying a search
// candidate against D9's substring rule is then a bytes.Contains on one
// short value, with no task record decoded; only the page's tasks are read.
// Title and description are joined by a newline: a term never holds
// whitespace, so it occurs in the joined text exactly when it occurs in
// one of the two.

var metaSearchTextBuilt = []byte("search_text_built")

// metaSearchTextUpto is the next task number a search text build will
// write; present only while a build is under way.
var metaSearchTextUpto = []byte("search_text_upto")

func searchTextValue(rec *record) []byte {
	title, desc := lowerText(rec.title), lowerText(rec.searched())
	v := make([]byte, 0, 26+binary.MaxVarintLen64+len(rec.project)+len(title)+1+len(desc))
	v = append(v, memberValue(rec)...)
	v = binary.AppendUvarint(v, uint64(len(rec.project)))
	v = append(v, rec.project...)
	v = append(v, title...)
	v = append(v, '\n')
	return append(v, desc...)
}

// searchEntry is a search text value decoded; project and text alias it.
type searchEntry struct {
	member
	project []byte
	text    []byte
}

func decodeSearchEntry(num uint64, v []byte) (searchEntry, bool) {
	if len(v) < 26 {
		return searchEntry{}, false
	}
	m, _ := decodeMember(num, v[:26])
	n, w := binary.Uvarint(v[26:])
	if w <= 0 || uint64(len(v)-26-w) < n {
		return searchEntry{}, false
	}
	rest := v[26+w:]
	return searchEntry{member: m, project: rest[:n], text: rest[n:]}, true
}

// indexSearchText writes rec's search text. Every task write changes at
// least its update time, so it is always rewritten.
func indexSearchText(tx kv.Tx, rec *record) error {
	b := tx.Bucket([]byte(store.BucketTaskSearchText))
	if !b.Exists() {
		return nil // a store opened read-only by an older layout's tooling
	}
	return b.Put(store.U64(rec.num), searchTextValue(rec))
}

func searchTextReady(tx kv.Tx) bool {
	return tx.Bucket([]byte(store.BucketMeta)).Get(metaSearchTextBuilt) != nil
}

// ensureSearchText writes the search text of every stored task when this
// store has not (one written before schema v6), in batches of rebuildBatch
// tasks, and marks it built in the last batch's transaction. A write made
// meanwhile writes its task's value itself — the same bytes a batch
// writes — so the two never disagree; progress in meta lets servers
// opening one database at once share the build.
func (s *Service) ensureSearchText() error {
	built := false
	if err := s.st.View(func(tx kv.Tx) error {
		built = searchTextReady(tx)
		return nil
	}); err != nil || built {
		return err
	}
	return s.indexStoredTasks(metaSearchTextBuilt, metaSearchTextUpto, func(tx kv.Tx, raw *rawRecord) error {
		return indexSearchText(tx, raw.materialize())
	})
}

// textMatches reports whether every term occurs in text.
func textMatches(text []byte, terms [][]byte) bool {
	for _, t := range terms {
		if !bytes.Contains(text, t) {
			return false
		}
	}
	return true
}
