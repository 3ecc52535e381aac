package store

import "github.com/cairn-mcp/cairn/internal/kv"

// Tx, Bucket and Cursor are the shared key-value layer's (internal/kv):
// ordered buckets of byte keys and values inside one transaction, on bbolt
// or PostgreSQL alike.
type (
	Tx     = kv.Tx
	Bucket = kv.Bucket
	Cursor = kv.Cursor
)
