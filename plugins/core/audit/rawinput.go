package audit

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// The tool inputs check their raw JSON before decoding: encoding/json would
// replace invalid UTF-8 and lone surrogate escapes with U+FFFD, and the
// decision trail would then hash text the caller never sent (D11). The host
// runs the same check on every call; this keeps the trail safe when the
// service is reached some other way.

// MaxInputDepth bounds the nesting of a tool input (metadata included).
const MaxInputDepth = rawjson.DefaultMaxDepth

// decodeChecked checks raw and decodes it into dst, which must be a pointer
// to a type without its own UnmarshalJSON (the alias types below).
func decodeChecked(raw []byte, dst any) error {
	if e := rawjson.Check(raw, MaxInputDepth); e != nil {
		return e
	}
	return json.Unmarshal(raw, dst)
}

// UnmarshalJSON refuses invalid UTF-8 and excessive nesting in the raw input.
func (in *RecordInput) UnmarshalJSON(raw []byte) error {
	type plain RecordInput
	return decodeChecked(raw, (*plain)(in))
}

// UnmarshalJSON refuses invalid UTF-8 and excessive nesting in the raw input.
func (in *ListInput) UnmarshalJSON(raw []byte) error {
	type plain ListInput
	return decodeChecked(raw, (*plain)(in))
}

// UnmarshalJSON refuses invalid UTF-8 and excessive nesting in the raw input.
func (in *StartInput) UnmarshalJSON(raw []byte) error {
	type plain StartInput
	return decodeChecked(raw, (*plain)(in))
}

// UnmarshalJSON refuses invalid UTF-8 and excessive nesting in the raw input.
func (in *VerifyInput) UnmarshalJSON(raw []byte) error {
	type plain VerifyInput
	return decodeChecked(raw, (*plain)(in))
}

// UnmarshalJSON refuses invalid UTF-8 and excessive nesting in the raw input.
func (in *FinalizeInput) UnmarshalJSON(raw []byte) error {
	type plain FinalizeInput
	return decodeChecked(raw, (*plain)(in))
}

// UnmarshalJSON refuses invalid UTF-8 and excessive nesting in the raw input.
func (in *RootInput) UnmarshalJSON(raw []byte) error {
	type plain RootInput
	return decodeChecked(raw, (*plain)(in))
}
