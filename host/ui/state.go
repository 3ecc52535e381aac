package ui

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// StateFile is the dashboard's file in the data dir: its port, kept stable
// across daemon restarts so an open page reconnects to the same address, and
// the key that signs login cookies, so a restart does not log people out.
const StateFile = "ui.json"

// state is what StateFile holds.
type state struct {
	Port   int    `json:"port"`
	Secret []byte `json:"secret"`
}

// loadState reads the data dir's dashboard state, creating a fresh secret
// when the file is missing or unreadable (a damaged file must not keep the
// dashboard down; a new secret only logs people out).
func loadState(dataDir string) (state, error) {
	var st state
	b, err := os.ReadFile(filepath.Join(dataDir, StateFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return st, err
	}
	if err == nil && json.Unmarshal(b, &st) != nil {
		st = state{}
	}
	if len(st.Secret) < 32 {
		st.Secret = make([]byte, 32)
		if _, err := rand.Read(st.Secret); err != nil {
			return st, err
		}
	}
	if st.Port < 0 || st.Port > 65535 {
		st.Port = 0
	}
	return st, nil
}

func saveState(dataDir string, st state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	tmp := filepath.Join(dataDir, StateFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dataDir, StateFile))
}

// listen opens the dashboard's loopback listener: on the recorded port when
// it is free, else on a fresh one, which is then recorded. Only loopback:
// the dashboard is never reachable from another machine.
func listen(dataDir string) (net.Listener, state, error) {
	st, err := loadState(dataDir)
	if err != nil {
		return nil, st, err
	}
	var ln net.Listener
	if st.Port != 0 {
		// A recorded port someone else took is not an error: pick another.
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(st.Port))); err == nil {
			ln = l
		}
	}
	if ln == nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, st, fmt.Errorf("dashboard: listen on loopback: %w", err)
		}
	}
	st.Port = ln.Addr().(*net.TCPAddr).Port
	if err := saveState(dataDir, st); err != nil {
		ln.Close()
		return nil, st, err
	}
	return ln, st, nil
}
