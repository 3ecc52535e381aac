package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-mcp/cairn/internal/heldstores"
)

// StateFile is the state document's path relative to a data dir (and to a
// backup dir, which is laid out like one).
const StateFile = stateRel

// PostgresTable is the table the state lives in on PostgreSQL.
const PostgresTable = "sdd_state"

// StateProblem is one thing wrong with a state document.
type StateProblem struct {
	// Record names the part at fault (a byte offset, a field), if any.
	Record string
	Damage string
	// Fatal is false for what the engine reads past (an unknown field).
	Fatal bool
}

// StateReport is what a check of the state found.
type StateReport struct {
	// File is the document's path, or the redacted database URL.
	File     string
	Found    bool
	Postgres bool
	Bytes    int
	Problems []StateProblem
}

// CheckStateData checks a state document for `cairn store check`: it must
// parse as one JSON document, carry a schema version this build reads,
// and decode into the state's schema.
func CheckStateData(data []byte) []StateProblem {
	bad := func(record, format string, args ...any) []StateProblem {
		return []StateProblem{{Record: record, Damage: fmt.Sprintf(format, args...), Fatal: true}}
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
		return []StateProblem{{Damage: fmt.Sprintf("the state holds a field this cairn does not know (%v); it is kept but ignored", err)}}
	}
	return nil
}

// CheckStateFile checks the state document of dataDir, at rest.
func CheckStateFile(dataDir string) StateReport {
	rep := StateReport{File: filepath.Join(dataDir, stateRel)}
	data, err := readState(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		// Missing is a fault where the data dir has held the state
		// (docs/decisions.md D42).
		if listed, lerr := heldstores.Listed(dataDir, stateRel); lerr != nil || listed {
			damage := fmt.Sprintf("the file is missing, but %s lists it: this data dir has held it (restore it with `cairn restore <backup dir>`)", filepath.Join(dataDir, heldstores.FileName))
			if lerr != nil {
				damage = lerr.Error()
			}
			rep.Problems = []StateProblem{{Damage: damage, Fatal: true}}
		}
		return rep
	}
	rep.Found = true
	if err != nil {
		rep.Problems = []StateProblem{{Damage: fmt.Sprintf("cannot be read: %v", err), Fatal: true}}
		return rep
	}
	rep.Bytes, rep.Problems = len(data), CheckStateData(data)
	return rep
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
func (e *Engine) Check() (StateReport, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pg != nil {
		rep := StateReport{File: e.pg.where, Postgres: true}
		data, err := e.pg.load()
		if err != nil {
			return rep, err
		}
		rep.Found, rep.Bytes = data != nil, len(data)
		if data != nil {
			rep.Problems = CheckStateData(data)
		}
		return rep, nil
	}
	return CheckStateFile(e.dataDir), nil
}

// IsPostgres reports whether the engine keeps its state in PostgreSQL.
func (e *Engine) IsPostgres() bool { return e.pg != nil }

// DataDir is the data dir whose state file the engine serves.
func (e *Engine) DataDir() string { return e.dataDir }

// BackupState copies the state document of dataDir into dir (as
// state/sdd-state.json), written beside and renamed; with e not nil,
// under the engine's lock, so no write lands halfway. It answers the
// copy's size and sha256; a data dir without a state document copies
// nothing (ok false).
func BackupState(e *Engine, dataDir, dir string) (size int, sum string, ok bool, err error) {
	if e != nil {
		e.mu.Lock()
		defer e.mu.Unlock()
	}
	data, err := readState(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", false, nil
	}
	if err != nil {
		return 0, "", false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, "", false, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return 0, "", false, err
	}
	defer r.Close()
	if err := writeAtomic(r, stateRel, data); err != nil {
		return 0, "", false, err
	}
	h := sha256.Sum256(data)
	return len(data), hex.EncodeToString(h[:]), true, nil
}
