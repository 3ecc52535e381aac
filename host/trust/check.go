package trust

import (
	"strings"
)

// Candidate is a plugin binary that came with a workspace and so needs the
// operator's trust before it runs.
type Candidate struct {
	Name string
	Path string
	// Origin says where the workspace named it, e.g. "plugin dir /r/.cairn/plugins".
	Origin string
}

// Untrusted is a workspace plugin that is not started, with what to run to
// trust it.
type Untrusted struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	SHA256  string `json:"sha256,omitempty"`
	Origin  string `json:"origin"`
	Reason  string `json:"reason"`
	Command string `json:"trust_command"`
}

// Check decides one candidate. A nil store (it could not be read) trusts
// nothing: failing closed is the point of the store. loadErr explains a nil
// store in the reason.
func Check(s *Store, loadErr error, c Candidate) (Untrusted, bool) {
	u := Untrusted{Name: c.Name, Path: c.Path, Origin: c.Origin, Command: Command(c.Path)}
	sum, err := SHA256(c.Path)
	if err != nil {
		u.Reason = "cannot read the binary to check its sha256: " + err.Error()
		return u, false
	}
	u.SHA256 = sum
	if s == nil {
		u.Reason = "the trust store cannot be read"
		if loadErr != nil {
			u.Reason += ": " + loadErr.Error()
		}
		return u, false
	}
	if s.Trusts(sum) {
		return u, true
	}
	u.Reason = "not in the trust store " + s.Path()
	if prev := s.ByPath(c.Path); len(prev) > 0 {
		e, _ := s.Lookup(prev[0])
		u.Reason = "the binary changed since it was trusted at " + e.TrustedAt + " (sha256 was " + prev[0][:12] + "…, is " + sum[:12] + "…)"
	}
	return u, false
}

// Command is the command line that trusts the binary at path.
func Command(path string) string {
	return "cairn plugins trust " + shellQuote(path)
}

// shellQuote quotes s for a POSIX shell when it holds anything but the
// characters that are safe bare.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+:@%,=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Gate decides candidates against one reading of the store.
type Gate struct {
	store *Store
	err   error
}

// OpenGate loads the store at path; pathErr says why there is no path. A
// store that cannot be located or read makes a gate that trusts nothing.
func OpenGate(path string, pathErr error) *Gate {
	if pathErr != nil {
		return &Gate{err: pathErr}
	}
	s, err := Load(path)
	return &Gate{store: s, err: err}
}

// Admit reports whether a candidate may run, and if not, why.
func (g *Gate) Admit(c Candidate) (Untrusted, bool) {
	return Check(g.store, g.err, c)
}
