package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
)

// StateFile is the state document's path relative to a data dir (and to a
// backup dir, which is laid out like one).
const StateFile = stateRel

// PostgresTable is the table the state lives in on PostgreSQL.
const PostgresTable = "sdd_state"

// CheckStateData checks a state document for `cairn store check`: it must
// parse as one JSON document, carry a schema version this build reads,
// and decode into the state's schema. file names it in the problems.
func CheckStateData(file string, data []byte) []boltcheck.Problem {
	bad := func(record, format string, args ...any) []boltcheck.Problem {
		return []boltcheck.Problem{{Area: MigrationArea, File: file, Record: record, Damage: fmt.Sprintf(format, args...), Fatal: true}}
	}
	if !json.Valid(data) {
		var syn *json.SyntaxError
		err := json.Unmarshal(data, new(any))
		if errors.As(err, &syn) {
			return bad(fmt.Sprintf("byte %d", syn.Offset), "the state does not parse as JSON: %v", err)
		}
		return bad("", "the state does not parse as JSON: %v", err)
	}
	st, err := decodeState(data)
	if err != nil {
		return bad("", "the state does not match its schema: %v", err)
	}
	if st.Version < 1 || st.Version > stateVersion {
		return bad("version", "the state has schema version %d; this cairn reads version %d", st.Version, stateVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(new(state)); err != nil {
		return []boltcheck.Problem{{Area: MigrationArea, File: file, Damage: fmt.Sprintf("the state holds a field this cairn does not know (%v); it is kept but ignored", err)}}
	}
	return nil
}

// CheckStateFile checks the state document of dataDir, at rest.
func CheckStateFile(dataDir string) (boltcheck.AreaReport, error) {
	path := filepath.Join(dataDir, stateRel)
	rep := boltcheck.AreaReport{Area: MigrationArea, Kind: "file", File: path, Problems: []boltcheck.Problem{}}
	data, err := readState(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	rep.Found = true
	if err != nil {
		rep.Problems = append(rep.Problems, boltcheck.Problem{Area: MigrationArea, File: path, Damage: fmt.Sprintf("cannot be read: %v", err), Fatal: true})
		return rep, nil
	}
	rep.Problems = append(rep.Problems, CheckStateData(path, data)...)
	rep.Counts = map[string]int{"bytes": len(data)}
	return rep, nil
}

func readState(dataDir string) ([]byte, error) {
	r, err := os.OpenRoot(dataDir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readRegular(r, stateRel, maxStateReadBytes)
}

// Check checks the state this engine serves: the file under the engine's
// lock (no write replaces it meanwhile), or on PostgreSQL the row.
func (e *Engine) Check() (boltcheck.AreaReport, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pg != nil {
		rep := boltcheck.AreaReport{Area: MigrationArea, Kind: "postgres", File: e.pg.where, Live: true, Problems: []boltcheck.Problem{}}
		data, err := e.pg.load()
		if err != nil {
			return rep, err
		}
		rep.Found = data != nil
		if data != nil {
			rep.Problems = append(rep.Problems, CheckStateData(e.pg.where, data)...)
		}
		return rep, nil
	}
	rep, err := CheckStateFile(e.dataDir)
	rep.Live = true
	return rep, err
}

// IsPostgres reports whether the engine keeps its state in PostgreSQL.
func (e *Engine) IsPostgres() bool { return e.pg != nil }

// DataDir is the data dir whose state file the engine serves.
func (e *Engine) DataDir() string { return e.dataDir }

// BackupState copies the state document of dataDir into dir (as
// state/sdd-state.json), atomically; with e not nil, under the engine's
// lock, so no write lands halfway. A data dir without a state document
// copies nothing (ok false).
func BackupState(e *Engine, dataDir, dir string) (c boltcheck.Copied, ok bool, err error) {
	if e != nil {
		e.mu.Lock()
		defer e.mu.Unlock()
	}
	data, err := readState(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	dst := filepath.Join(dir, stateRel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return c, false, err
	}
	c, err = boltcheck.WriteFileAtomic(dst, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	return c, err == nil, err
}
