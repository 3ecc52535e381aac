package audit

import (
	"encoding/binary"
	"encoding/json"
	"errors"
)

// Link values are stored in a small binary form: an audit of a million
// records decodes a million links, and JSON decoding cost ten times the
// hashing. Layout after the 40-byte prefix (sequence, raw hash):
//
//	version byte (1)
//	id, type, content, previous_hash, recorded_at, recorded_by,
//	branch, commit_sha                   each uvarint length + bytes
//	tests_run, blockers                  uvarint count, then strings as above
//	metadata                             uvarint length + JSON bytes
//	trace_id (version 2 only)            uvarint length + bytes
//
// previous_hash is empty for the first link (null); stored hashes are never
// empty otherwise. Text is kept as the exact bytes hashed, so a rewritten
// byte anywhere shows up in verification.
//
// A link written by a traced call is version 2: it keeps the call's trace
// id after the hashed fields, outside the hash (docs/decisions.md D38). A
// link without one stays version 1, byte for byte what it was before.
const (
	linkFormat      byte = 1
	linkFormatTrace byte = 2
)

var errLinkFormat = errors.New("malformed link encoding")

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendList(b []byte, l []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(l)))
	for _, s := range l {
		b = appendStr(b, s)
	}
	return b
}

// encodeBody appends the binary form of body to dst.
func encodeBody(dst []byte, body *linkBody) []byte {
	format := linkFormat
	if body.TraceID != "" {
		format = linkFormatTrace
	}
	dst = append(dst, format)
	prev := ""
	if body.PreviousHash != nil {
		prev = *body.PreviousHash
	}
	for _, s := range [...]string{body.ID, body.Type, body.Content, prev, body.RecordedAt, body.RecordedBy, body.Branch, body.CommitSHA} {
		dst = appendStr(dst, s)
	}
	dst = appendList(dst, body.TestsRun)
	dst = appendList(dst, body.Blockers)
	dst = appendStr(dst, string(body.Metadata))
	if format == linkFormatTrace {
		dst = appendStr(dst, body.TraceID)
	}
	return dst
}

// bodyReader decodes the binary form, remembering the first error.
type bodyReader struct {
	b   []byte
	err error
}

func (r *bodyReader) str() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.err = errLinkFormat
		return ""
	}
	s := string(r.b[k : k+int(n)])
	r.b = r.b[k+int(n):]
	return s
}

func (r *bodyReader) list() []string {
	if r.err != nil {
		return nil
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)) { // each item takes at least a byte
		r.err = errLinkFormat
		return nil
	}
	r.b = r.b[k:]
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

// decodeBody decodes the binary form of a link body.
func decodeBody(b []byte, body *linkBody) error {
	if len(b) == 0 || (b[0] != linkFormat && b[0] != linkFormatTrace) {
		return errLinkFormat
	}
	r := bodyReader{b: b[1:]}
	body.ID, body.Type, body.Content = r.str(), r.str(), r.str()
	if prev := r.str(); prev != "" {
		body.PreviousHash = &prev
	} else {
		body.PreviousHash = nil
	}
	body.RecordedAt, body.RecordedBy, body.Branch, body.CommitSHA = r.str(), r.str(), r.str(), r.str()
	body.TestsRun, body.Blockers = r.list(), r.list()
	if m := r.str(); m != "" {
		body.Metadata = json.RawMessage(m)
	} else {
		body.Metadata = nil
	}
	body.TraceID = ""
	if b[0] == linkFormatTrace {
		// A version 2 link always has one: an empty one would encode as
		// version 1.
		if body.TraceID = r.str(); body.TraceID == "" && r.err == nil {
			r.err = errLinkFormat
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errLinkFormat
	}
	return r.err
}
