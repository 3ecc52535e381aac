package computer

import (
	"context"
	"sync"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// MaxSessions is how many sessions a Manager keeps; the oldest ended ones
// are forgotten first, and a new session is refused while all are open.
const MaxSessions = 32

// Manager owns the display driver and the sessions on it. The driver is
// opened at the first session and reopened when its display was lost.
type Manager struct {
	mu       sync.Mutex
	open     func() (Driver, error)
	drv      Driver
	sessions map[string]*Session
	order    []string
	opts     []SessionOption
}

// NewManager makes a manager that opens its driver with open.
func NewManager(open func() (Driver, error), opts ...SessionOption) *Manager {
	return &Manager{open: open, sessions: map[string]*Session{}, opts: opts}
}

type lossReporter interface{ Lost() bool }

// Driver returns the open driver, opening it if needed.
func (m *Manager) Driver() (Driver, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.driverLocked()
}

func (m *Manager) driverLocked() (Driver, error) {
	if m.drv != nil {
		if l, ok := m.drv.(lossReporter); !ok || !l.Lost() {
			return m.drv, nil
		}
		_ = m.drv.Close()
		m.drv = nil
	}
	d, err := m.open()
	if err != nil {
		return nil, err
	}
	m.drv = d
	return d, nil
}

// StartSession creates a session with cfg and starts it.
func (m *Manager) StartSession(ctx context.Context, cfg SessionConfig, opts ...SessionOption) (*Session, *StartResult, error) {
	m.mu.Lock()
	d, err := m.driverLocked()
	if err != nil {
		m.mu.Unlock()
		return nil, nil, err
	}
	if len(m.sessions) >= MaxSessions && !m.forgetEndedLocked() {
		m.mu.Unlock()
		return nil, nil, errs.Conflictf(errs.LimitExceeded, "%d computer sessions are open; end one before starting another", MaxSessions)
	}
	s, err := NewSession(cfg, d, append(append([]SessionOption{}, m.opts...), opts...)...)
	if err != nil {
		m.mu.Unlock()
		return nil, nil, err
	}
	m.sessions[s.ID()] = s
	m.order = append(m.order, s.ID())
	m.mu.Unlock()
	res, err := s.Start(ctx)
	if err != nil {
		m.mu.Lock()
		m.removeLocked(s.ID())
		m.mu.Unlock()
		return nil, nil, err
	}
	return s, res, nil
}

func (m *Manager) forgetEndedLocked() bool {
	for _, id := range m.order {
		if m.sessions[id].State() == Ended {
			m.removeLocked(id)
			return true
		}
	}
	return false
}

func (m *Manager) removeLocked(id string) {
	delete(m.sessions, id)
	for i, x := range m.order {
		if x == id {
			m.order = append(m.order[:i:i], m.order[i+1:]...)
			break
		}
	}
}

// Get returns a session by id.
func (m *Manager) Get(id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return nil, errs.NotFoundf(errs.SessionNotFound, "sessionId", "no computer session %q; start one with computer_session_start (sessions live until the plugin restarts)", id)
	}
	return s, nil
}

// Close ends nothing but releases the display connection.
func (m *Manager) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.drv == nil {
		return nil
	}
	err := m.drv.Close()
	m.drv = nil
	return err
}
