package jsonrpc

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// AppendMessage appends one JSON-RPC message as a line (without the
// newline) to dst.
//
// A tool call's answer is most of what a session writes, and its result
// carries the plugin's JSON twice: as structuredContent and as the text of
// the first content block. encoding/json reaches it through mcp-go's
// MarshalJSON (a map, then a compaction of the whole output) and scans the
// JSON four times; a 50-row page made that a large share of the call. Here
// the result is written directly: the plugin's bytes are checked once
// (rawjson, the same rules as the arguments) and copied as they are, and
// the text block is escaped from the same bytes. Anything else, and any
// result this path does not know field for field, goes to encoding/json.
func AppendMessage(dst []byte, v any) ([]byte, error) {
	if resp, ok := v.(mcp.JSONRPCResponse); ok {
		if res, ok := resp.Result.(*mcp.CallToolResult); ok {
			if out, ok := appendToolResponse(dst, resp, res); ok {
				return out, nil
			}
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// MaxOutputDepth bounds the nesting of a result written directly (and of a
// plugin's output, which the host checks with the same bound); deeper
// results (none that cairn's tools produce) take encoding/json's path.
const MaxOutputDepth = 512

// appendToolResponse writes a JSON-RPC response carrying a tool result; false
// when the result holds anything it does not write itself (dst is then
// unchanged in content).
func appendToolResponse(dst []byte, resp mcp.JSONRPCResponse, res *mcp.CallToolResult) ([]byte, bool) {
	if res.StructuredContent != nil && len(res.RawStructuredContent) == 0 ||
		len(res.InputRequests) > 0 || res.RequestState != "" {
		return dst, false
	}
	raw := res.RawStructuredContent
	if len(raw) > 0 && !embeddable(raw) {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst, ok := appendID(dst, resp.ID)
	if !ok {
		return dst[:start], false
	}
	dst = append(dst, `,"result":{`...)
	if res.Meta != nil {
		dst = append(dst, `"_meta":`...)
		if status, ok := onlyStatus(res.Meta); ok {
			dst = append(dst, `{"status":`...)
			dst = strconv.AppendInt(dst, int64(status), 10)
			dst = append(dst, '}')
		} else {
			// A fuller _meta (a 2026-07-28 session's serverInfo) is
			// small: encoding/json writes it.
			meta, err := json.Marshal(res.Meta)
			if err != nil {
				return dst[:start], false
			}
			dst = append(dst, meta...)
		}
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		if t, ok := c.(mcp.TextContent); ok && t.Annotations == nil && t.Meta == nil {
			dst = append(dst, `{"type":"text","text":`...)
			dst = appendString(dst, t.Text)
			dst = append(dst, '}')
			continue
		}
		b, err := json.Marshal(c)
		if err != nil {
			return dst[:start], false
		}
		dst = append(dst, b...)
	}
	dst = append(dst, ']')
	if res.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if res.ResultType != "" {
		dst = append(dst, `,"resultType":`...)
		dst = appendString(dst, string(res.ResultType))
	}
	if len(raw) > 0 {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, raw...)
	}
	return append(dst, "}}"...), true
}

// onlyStatus reports the status when it is all a result's _meta holds (what
// toResult sets).
func onlyStatus(m *mcp.Meta) (int, bool) {
	if m.ProgressToken != nil || len(m.AdditionalFields) != 1 {
		return 0, false
	}
	status, ok := m.AdditionalFields["status"].(int)
	return status, ok
}

// embeddable reports whether raw can be copied into a JSON-RPC line as it
// is: one valid JSON value (rawjson's rules: syntax, UTF-8, nesting) without
// a line break, which in valid JSON can only be whitespace between tokens.
func embeddable(raw []byte) bool {
	return bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 &&
		!blank(raw) && rawjson.Check(raw, MaxOutputDepth) == nil
}

// blank reports whether raw holds only JSON whitespace, which rawjson
// passes (nothing to refuse) but which is no value.
func blank(raw []byte) bool { return len(bytes.Trim(raw, " \t\r\n")) == 0 }

// appendID writes a request id. mcp-go hands back the id it decoded into an
// any: a string or a float64 (an integer, from every client we know).
func appendID(dst []byte, id mcp.RequestId) ([]byte, bool) {
	switch v := id.Value().(type) {
	case string:
		return appendString(dst, v), true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return strconv.AppendInt(dst, int64(v), 10), true
		}
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case int:
		return strconv.AppendInt(dst, int64(v), 10), true
	}
	b, err := json.Marshal(id)
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// stringSafe marks the ASCII bytes a JSON string carries unescaped.
var stringSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD and
// U+2028 and U+2029 are escaped, as encoding/json does; HTML characters are
// not (MarshalJSON in the SDK does not escape them either).
func appendString(dst []byte, s string) []byte {
	// Room for the quotes and an escape every eighth byte (JSON text has a
	// quote every few bytes) so the copies below rarely grow dst.
	dst = slices.Grow(dst, len(s)+len(s)/8+2)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if stringSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
