package mcpserver

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// approvalStateTTL is how long a person has to answer an input request
// before the client's retry is refused (docs/decisions.md D45).
const approvalStateTTL = 10 * time.Minute

// approvalSigner signs and checks the requestState of an approval's input
// request (protocol 2026-07-28, which asks the client by answering the
// call and takes the answer on a retry). The host keeps nothing between
// the two calls: the token carries what the retry may do, under an HMAC
// whose key lives only in this process, so a client can neither forge nor
// alter it, nor take it to another session or tool call.
type approvalSigner struct {
	key []byte
	now func() time.Time
}

// newApprovalSigner draws a fresh key: tokens do not outlive the process
// (a retry after a restart is refused and the call asks again).
func newApprovalSigner() *approvalSigner {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		// crypto/rand does not fail on the platforms Go supports; a key
		// of zeros would let anyone forge a token, so refuse to ask.
		return nil
	}
	return &approvalSigner{key: key, now: time.Now}
}

// approvalState is what a token binds: who may retry (the client session,
// else the caller), which call (tool and a digest of its canonical
// arguments), which approve tool with which arguments, and until when.
type approvalState struct {
	Session     string          `json:"s,omitempty"`
	Caller      string          `json:"c,omitempty"`
	Tool        string          `json:"t"`
	ArgsDigest  string          `json:"a"`
	ApproveTool string          `json:"at"`
	ApproveArgs json.RawMessage `json:"aa"`
	Expires     int64           `json:"e"`
	// ByID and BySource are who the pipeline found the caller to be
	// (its identify stage), whom the decision is recorded as: the retry
	// is settled before its own call runs the pipeline.
	ByID     string `json:"bi"`
	BySource string `json:"bs"`
}

// callBinding is the part of a state that must match the retried call:
// the call as it came, before the pipeline identified its caller.
type callBinding struct {
	session, source, id, tool string
	args                      json.RawMessage
}

func (b callBinding) caller() string { return b.source + ":" + b.id }

func (b callBinding) matches(s approvalState) bool {
	return s.Session == b.session && s.Caller == b.caller() && s.Tool == b.tool && s.ArgsDigest == argsDigest(b.args)
}

// sign returns the token for ask on the call b, whose caller the pipeline
// identified as by: base64url(state) "." base64url(HMAC-SHA256(key,
// state)).
func (s *approvalSigner) sign(b callBinding, by seam.Caller, ask approvalAsk) (string, error) {
	st := approvalState{
		Session: b.session, Caller: b.caller(), Tool: b.tool, ArgsDigest: argsDigest(b.args),
		ApproveTool: ask.Tool, ApproveArgs: ask.Args,
		Expires: s.now().Add(approvalStateTTL).Unix(),
		ByID:    by.ID, BySource: by.Source,
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(raw) + "." + enc.EncodeToString(s.mac(raw)), nil
}

// verify returns the state token carries when the host signed it, it has
// not expired, and it was issued for the call b; otherwise a 400 naming
// requestState. Nothing is recorded either way.
func (s *approvalSigner) verify(token string, b callBinding) (approvalState, *errs.Error) {
	var st approvalState
	enc := base64.RawURLEncoding.Strict() // one spelling per token
	body, tag, ok := strings.Cut(token, ".")
	raw, err1 := enc.DecodeString(body)
	sum, err2 := enc.DecodeString(tag)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(sum, s.mac(raw)) {
		return st, errs.Invalid("requestState", "signature", "requestState is not one this server issued (or it was altered, or the server restarted since): call the tool again without inputResponses and requestState to be asked anew")
	}
	if json.Unmarshal(raw, &st) != nil {
		return st, errs.Invalid("requestState", "signature", "requestState cannot be read: call the tool again without inputResponses and requestState")
	}
	if s.now().Unix() > st.Expires {
		return st, errs.Invalid("requestState", "expired", "requestState expired: a person has "+approvalStateTTL.String()+" to answer; call the tool again without inputResponses and requestState to be asked anew")
	}
	if !b.matches(st) {
		return st, errs.Invalid("requestState", "sameCall", "requestState was issued for another call (another session, caller, tool or arguments): retry exactly the call that was answered with it")
	}
	return st, nil
}

func (s *approvalSigner) mac(raw []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(raw)
	return m.Sum(nil)
}

// argsDigest is the hex SHA-256 of the arguments in canonical form (object
// keys sorted, no spaces, numbers as written), so a retry that spaces or
// orders its arguments otherwise is the same call, and any other is not.
func argsDigest(args json.RawMessage) string {
	sum := sha256.Sum256(canonicalArgs(args))
	return hex.EncodeToString(sum[:])
}

// canonicalArgs re-encodes args canonically; absent arguments are {}, and
// bytes that are not JSON are hashed as they are (the tool refuses them).
func canonicalArgs(args json.RawMessage) []byte {
	if len(bytes.TrimSpace(args)) == 0 {
		return []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return args
	}
	out, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return out
}
