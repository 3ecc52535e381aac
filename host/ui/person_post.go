package ui

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// maxActionBody bounds what a page posts (a comment is at most 5000
// characters, a description 8000; the rest is small).
const maxActionBody = 64 << 10

// readPersonPost reads what a page posts to act as the logged-in person:
// refused before anything is read when the login is read-only (the
// dashboard's switch, never a session mode), bounded, and a JSON object
// decoded into T. what names the posted thing in refusals. On a refusal it
// has written the error and returns false.
func readPersonPost[T any](w http.ResponseWriter, r *http.Request, what string) (Grant, T, bool) {
	var in T
	g := grantFrom(r.Context())
	if !g.AllowActions {
		writeErr(w, readOnlyRefusal())
		return g, in, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxActionBody+1))
	if err != nil || len(body) > maxActionBody {
		writeErr(w, errs.Invalidf("body", "maxLength", "the %s is missing or too large", what))
		return g, in, false
	}
	if err := json.Unmarshal(body, &in); err != nil {
		writeErr(w, errs.Invalidf("body", "type", "the %s is not a JSON object: %v", what, err))
		return g, in, false
	}
	return g, in, true
}
