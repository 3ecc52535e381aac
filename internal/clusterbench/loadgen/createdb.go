package main

import (
	"context"
	"flag"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbName is the spelling createdb accepts: it goes into SQL unquoted.
var dbName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// createDB creates an empty database on the server of -dsn (which names an
// existing database to connect to, such as postgres).
func createDB(args []string) error {
	fs := flag.NewFlagSet("createdb", flag.ExitOnError)
	dsn := fs.String("dsn", "", "a database of the server to connect to")
	name := fs.String("name", "", "the database to create")
	_ = fs.Parse(args)
	if !dbName.MatchString(*name) {
		return fmt.Errorf("-name %q: want lower-case letters, digits and _, at most 63", *name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, *dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+*name)
	return err
}
