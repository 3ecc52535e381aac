package pgmigrate

import (
	"context"
	"time"
)

// StoreStatus is an area's answer to `cairn migrate`: the kind of store
// it keeps its state in and, on PostgreSQL, the migration state of its
// schema. The host asks the area for it (an internal tool) instead of
// reading the area's tables itself.
type StoreStatus struct {
	Store string `json:"store"`
	Status
}

// ReadAt connects to dsn, reads area's migration state and disconnects. It
// creates nothing and applies nothing, so `cairn migrate status` can run
// before the first migration and beside running servers.
func ReadAt(ctx context.Context, dsn, area string, steps []Step) (Status, error) {
	pool, err := Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		return Status{Area: area}, err
	}
	defer pool.Close()
	return Read(ctx, pool, area, steps)
}
