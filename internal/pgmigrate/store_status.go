package pgmigrate

import (
	"context"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ReadOnlySetting set to ReadOnly in an area's settings starts the area
// without opening its store, so no migration is applied: `cairn migrate
// status` starts the areas that way and asks each (an internal tool) what
// is applied and what is pending, since the host never reads an area's
// tables itself.
const (
	ReadOnlySetting = "migrations"
	ReadOnly        = "read"
)

// IsPostgres reports whether a CAIRN_STORE setting names PostgreSQL (a
// postgres:// or postgresql:// URL).
func IsPostgres(setting string) bool {
	return strings.HasPrefix(setting, "postgres://") || strings.HasPrefix(setting, "postgresql://")
}

// ReadStore is an area's answer to `cairn migrate status` for the
// CAIRN_STORE setting: "" or "bbolt" is the area's embedded store, named
// embedded (it has no migrations); a PostgreSQL URL is read with ReadAt.
// what names the store in errors ("admin store").
func ReadStore(ctx context.Context, setting, area, embedded, what string, steps []Step) (StoreStatus, error) {
	out := StoreStatus{Store: embedded, Status: Status{Area: area}}
	switch {
	case setting == "" || setting == "bbolt":
		return out, nil
	case !IsPostgres(setting):
		return out, errs.Invalidf("CAIRN_STORE", "enum", "CAIRN_STORE must be bbolt or a postgres:// URL")
	}
	st, err := ReadAt(ctx, setting, area, steps)
	if err != nil {
		return out, errs.Newf(503, errs.Unavailable, "%s at %s: %v", what, Redact(setting), err)
	}
	out.Store, out.Status = "postgres", st
	return out, nil
}

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
