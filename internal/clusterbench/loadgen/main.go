// Command loadgen is the load generator of the cluster bundle (`make
// cluster-bundle`, docs/performance.md): a static program that, on a bare
// machine with no network and no PostgreSQL client tools, creates a
// database, runs a TPC-B-like transaction floor with pgx, and drives MCP
// over HTTP sessions against `cairn serve --http` servers, printing the
// rates. run.sh beside it in the bundle calls it.
//
//	loadgen createdb -dsn DSN -name NAME
//	loadgen tpcb     -dsn DSN [-conns 32] [-scale 1] [-duration 10s]
//	loadgen writes   -urls URL,… -keys FILE [-writers 32] [-duration 10s]
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "createdb":
		err = createDB(args)
	case "tpcb":
		err = tpcb(args)
	case "writes":
		err = writes(args)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: loadgen createdb|tpcb|writes [flags] (loadgen <command> -h)")
	os.Exit(2)
}
