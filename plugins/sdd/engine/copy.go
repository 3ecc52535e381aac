package engine

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// CopyReport is what CopyState moved.
type CopyReport struct {
	Area  string `json:"area"`
	Found bool   `json:"found"`
	Bytes int    `json:"bytes"`
}

// CopyState moves dataDir's state document into the database at dsn
// (`cairn store copy`), refusing a database that already holds one (an
// error naming "to"), and reads it back to compare. A data dir without a
// state document has nothing to move. The document must decode: a corrupt
// file is reported, never carried over.
func CopyState(ctx context.Context, dataDir, dsn string) (CopyReport, error) {
	rep := CopyReport{Area: MigrationArea}
	r, err := os.OpenRoot(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, errs.Invalidf("from", "readable", "cannot open the data dir %s: %v", dataDir, err)
	}
	defer r.Close()
	data, err := readRegular(r, stateRel, maxStateReadBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	path := filepath.Join(dataDir, stateRel)
	if err != nil {
		return rep, errs.Invalidf("from", "readable", "cannot read the SDD state %s: %v", path, err)
	}
	if _, err := decodeState(data); err != nil {
		return rep, errs.Invalidf("from", "valid", "the SDD state %s does not decode (%v); repair it before copying", path, err)
	}
	rep.Found, rep.Bytes = true, len(data)
	p, err := openPGState(dsn)
	if err != nil {
		return rep, errs.Invalidf("to", "reachable", "%v", err)
	}
	defer p.close()
	err = pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		var doc []byte
		if err := tx.QueryRow(ctx, "SELECT doc FROM sdd_state WHERE id = 1 FOR UPDATE").Scan(&doc); err != nil {
			return p.failed(err)
		}
		if len(doc) > 0 {
			return errs.Invalidf("to", "empty", "%s already holds an SDD state: `cairn store copy` moves a data dir into an empty database only", p.where)
		}
		_, err := tx.Exec(ctx, "UPDATE sdd_state SET doc = $1, updated_at = now() WHERE id = 1", data)
		return err
	})
	if err != nil {
		if _, ok := errs.As(err); ok {
			return rep, err
		}
		return rep, errs.Newf(503, errs.Unavailable, "%v", p.failed(err))
	}
	back, err := p.load()
	if err != nil || !bytes.Equal(back, data) {
		return rep, errs.Newf(500, errs.Internal, "the SDD state read back from %s differs from %s (%v)", p.where, path, err)
	}
	return rep, nil
}
