package store

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Encoding outbox entries without reflection: every durable
// write records one, and encoding/json's reflection over an event's map and
// then over the entry (re-scanning the data it had just produced) was a
// tenth of a thought record's CPU. The bytes are exactly encoding/json's:
// anything the fast path is not sure to encode alike (a string needing an
// escape, a number that is not an integer, a nested value) falls back to
// encoding/json.

// plainJSONString reports whether encoding/json writes s as its bytes
// between quotes: printable ASCII with nothing to escape (it escapes <, >
// and & for HTML).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func appendJSONString(b []byte, s string) []byte {
	if plainJSONString(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	raw, _ := json.Marshal(s) // a string always encodes
	return append(b, raw...)
}

// appendJSONValue appends v as encoding/json would, if it is of a kind the
// fast path knows; false otherwise.
func appendJSONValue(b []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONString(b, v), true
	case bool:
		return strconv.AppendBool(b, v), true
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case uint64:
		return strconv.AppendUint(b, v, 10), true
	case []string:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, s)
		}
		return append(b, ']'), true
	}
	return b, false
}

// marshalEventData encodes an event's data as json.Marshal does.
func marshalEventData(data any) ([]byte, error) {
	m, ok := data.(map[string]any)
	if !ok || m == nil {
		return json.Marshal(data)
	}
	keys := make([]string, 0, 16)
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // encoding/json orders a map's keys so
	b := make([]byte, 0, 256)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		if b, ok = appendJSONValue(b, m[k]); !ok {
			return json.Marshal(data)
		}
	}
	return append(b, '}'), nil
}

// marshalOutboxEvent encodes ev as json.Marshal does; ev.Data must be
// compact JSON as encoding/json writes it (what marshalEventData returns,
// or what an earlier encoding stored).
func marshalOutboxEvent(ev OutboxEvent) []byte {
	b := make([]byte, 0, 64+len(ev.ID)+len(ev.Type)+len(ev.Time)+len(ev.Data)+len(ev.Owner))
	b = append(b, `{"id":`...)
	b = appendJSONString(b, ev.ID)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, ev.Type)
	b = append(b, `,"time":`...)
	b = appendJSONString(b, ev.Time)
	b = append(b, `,"data":`...)
	if ev.Data == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, ev.Data...)
	}
	if ev.Owner != "" {
		b = append(b, `,"owner":`...)
		b = appendJSONString(b, ev.Owner)
	}
	if ev.Until != 0 {
		b = append(b, `,"until":`...)
		b = strconv.AppendInt(b, ev.Until, 10)
	}
	if ev.Attempts != 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(ev.Attempts), 10)
	}
	return append(b, '}')
}
