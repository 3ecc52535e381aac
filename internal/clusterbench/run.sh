#!/bin/sh
# The cluster bench (docs/performance.md): on this machine, with no
# network, a PostgreSQL in a temporary directory, its own TPC-B-like floor
# (pgbench's default transaction, from loadgen), then for each server count
# N servers `cairn serve --http --no-daemon` on one fresh database and
# WRITERS MCP sessions with API keys writing through them: task_create and
# thought_record per second beside the floor, and where each phase's time
# went: how busy the cores were, the CPU per write of each kind of process
# and what PostgreSQL's busy backends were doing.
#
# Settings (environment):
#   SERVERS      server counts to run (default 1 2 4 8 … up to the cores)
#   WRITERS      MCP sessions writing at once (32)
#   DURATION     each phase: floor, task_create, thought_record (10s)
#   TPCB_CONNS   the floor's connections (32); TPCB_SCALE its branches (1)
#   KEYS         API keys, the writers taking them in turn (WRITERS)
#   BASE_PORT    server i of a run listens on BASE_PORT+i (18000)
#   PG_SETTINGS  extra server settings, "-c name=value …" (durable defaults)
#   BBOLT=0      leave out the last row: one server on bbolt, no PostgreSQL
#   KEEP=1       keep the temporary directory (logs) afterwards
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
CORES=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)
WRITERS=${WRITERS:-32}
DURATION=${DURATION:-10s}
TPCB_CONNS=${TPCB_CONNS:-32}
TPCB_SCALE=${TPCB_SCALE:-1}
KEYS=${KEYS:-$WRITERS}
BASE_PORT=${BASE_PORT:-18000}
PG_SETTINGS=${PG_SETTINGS:-}
BBOLT=${BBOLT:-1}
if [ -z "${SERVERS:-}" ]; then
	SERVERS=1
	n=2
	while [ "$n" -le "$CORES" ]; do SERVERS="$SERVERS $n"; n=$((n * 2)); done
	[ $((n / 2)) -eq "$CORES" ] || SERVERS="$SERVERS $CORES"
fi

WORK=$(mktemp -d /tmp/cairn-cluster-XXXXXX)
chmod 755 "$WORK"
mkdir -p "$WORK/db" "$WORK/logs" "$WORK/home"
PG="$HERE/pg"
as_pg() { "$@"; }
if [ "$(id -u)" = 0 ]; then
	# PostgreSQL will not run as root: it runs as nobody, from a copy of
	# its files nobody can reach.
	command -v setpriv >/dev/null ||
		{ echo "run.sh: as root it needs setpriv (util-linux) to run PostgreSQL as nobody; or run it as another user" >&2; rm -rf "$WORK"; exit 1; }
	cp -R "$HERE/pg" "$WORK/pg"
	PG="$WORK/pg"
	chown -R nobody "$WORK/db"
	as_pg() { setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups -- "$@"; }
fi
SERVER_PIDS=""
cleanup() {
	for p in $SERVER_PIDS; do kill "$p" 2>/dev/null || true; done
	as_pg "$PG/bin/pg_ctl" -D "$WORK/db/data" -m immediate -w stop >/dev/null 2>&1 || true
	if [ "${KEEP:-}" = 1 ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT INT TERM

dsn() { echo "postgres://postgres@/$1?host=$WORK/db&sslmode=disable"; }

echo "cluster bench: $CORES cores, servers: $SERVERS, $WRITERS writers, $DURATION a phase; $("$PG/bin/postgres" --version)" >&2
as_pg "$PG/bin/initdb" -D "$WORK/db/data" -U postgres -A trust -E UTF8 --locale=C >"$WORK/logs/initdb.log" 2>&1 ||
	{ cat "$WORK/logs/initdb.log" >&2; exit 1; }
# shellcheck disable=SC2086 # PG_SETTINGS is a list of options
as_pg "$PG/bin/pg_ctl" -D "$WORK/db/data" -l "$WORK/db/server.log" -w -t 120 \
	-o "-k $WORK/db -c listen_addresses='' -c max_connections=2000 -c shared_buffers=1GB $PG_SETTINGS" start >/dev/null ||
	{ cat "$WORK/db/server.log" >&2; exit 1; }

floor() {
	"$HERE/loadgen" tpcb -dsn "$(dsn tpcb)" -conns "$TPCB_CONNS" -scale "$TPCB_SCALE" -duration "$DURATION" |
		sed -n 's/.*tps=\([0-9]*\).*/\1/p'
}
"$HERE/loadgen" createdb -dsn "$(dsn postgres)" -name tpcb
FLOOR_BEFORE=$(floor)
echo "TPC-B-like floor, $TPCB_CONNS connections, scale $TPCB_SCALE: $FLOOR_BEFORE tps" >&2

# cairn_env runs cairn with workspace $1 on store $2, as every cairn
# process of a run is set up (host/e2e's benchCluster sets the same).
cairn_env() {
	root=$1 store=$2
	shift 2
	env HOME="$WORK/home" CAIRN_ROOT="$root" CAIRN_STORE="$store" CAIRN_LOG_LEVEL=warn CAIRN_DAEMON=off \
		CAIRN_TOOLSETS=core CAIRN_PROJECT=proj-0 "$HERE/cairn" "$@"
}

# keys creates KEYS API keys, with limits no bench reaches, on store $1 of
# workspace $3 into $2, one a line. On PostgreSQL ($4 = together) the first
# alone (it migrates the new database), the rest at once; on bbolt one after
# another, as one process at a time opens a data dir's files.
keys() {
	keys_root=$3
	mkdir -p "$keys_root/.cairn"
	mk() {
		cairn_env "$keys_root" "$1" admin keys create --json --name "loadgen $2" \
			--per-minute 100000000 --per-hour 100000000 --per-day 100000000 2>>"$WORK/logs/keys.log" |
			sed -n 's/.*"plaintext_key": *"\([^"]*\)".*/\1/p' >"$WORK/key.$2"
	}
	mk "$1" 1
	i=2
	while [ "$i" -le "$KEYS" ]; do
		if [ "$4" = together ]; then mk "$1" "$i" & else mk "$1" "$i"; fi
		i=$((i + 1))
	done
	wait
	cat "$WORK"/key.* >"$2"
	rm -f "$WORK"/key.*
	[ "$(wc -l <"$2")" -eq "$KEYS" ] || { echo "made $(wc -l <"$2") of $KEYS keys:" >&2; cat "$WORK/logs/keys.log" >&2; exit 1; }
}

# serve runs one server, workspace $1 on store $2 listening on $3, as
# cairn_env sets it up; exec, so that $! is the server itself and a kill
# reaches it.
serve() {
	exec env HOME="$WORK/home" CAIRN_ROOT="$1" CAIRN_STORE="$2" CAIRN_LOG_LEVEL=warn CAIRN_DAEMON=off \
		CAIRN_TOOLSETS=core CAIRN_PROJECT=proj-0 "$HERE/cairn" serve --http "$3" --no-daemon
}

# measure starts $2 servers on store $3 (workspaces $4-1, $4-2, …), drives
# the writers through them with the keys of file $5 and adds the rates to
# the results under label $1.
measure() {
	urls=""
	SERVER_PIDS=""
	i=1
	while [ "$i" -le "$2" ]; do
		mkdir -p "$4-$i/.cairn"
		port=$((BASE_PORT + i))
		serve "$4-$i" "$3" "127.0.0.1:$port" 2>"$WORK/logs/server-$1-$i.log" &
		SERVER_PIDS="$SERVER_PIDS $!"
		urls="$urls${urls:+,}http://127.0.0.1:$port/mcp"
		i=$((i + 1))
	done
	line=$("$HERE/loadgen" writes -urls "$urls" -keys "$5" -writers "$WRITERS" -duration "$DURATION" -dsn "$3") ||
		{ tail -n 20 "$WORK"/logs/server-"$1"-*.log >&2; exit 1; }
	echo "$line" >&2
	for p in $SERVER_PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $SERVER_PIDS; do wait "$p" 2>/dev/null || true; done
	SERVER_PIDS=""
	echo "$1 $(echo "$line" | sed -n 's/.*task_create=\([0-9]*\).*thought_record=\([0-9]*\).*/\1 \2/p')" >>"$RESULTS"
	label=$1
	[ "$1" = bbolt ] && label="1, bbolt"
	echo "$line" | sed -n "s/^profile /| $label /p" >>"$PROFILES"
}

RESULTS="$WORK/results"
PROFILES="$WORK/profiles"
: >"$RESULTS"
: >"$PROFILES"
for n in $SERVERS; do
	db="cairn_$n"
	"$HERE/loadgen" createdb -dsn "$(dsn postgres)" -name "$db"
	keys "$(dsn "$db")" "$WORK/keys.$n" "$WORK/ws/keys-$n" together
	measure "$n" "$n" "$(dsn "$db")" "$WORK/ws/$n" "$WORK/keys.$n"
done
if [ "$BBOLT" = 1 ]; then
	# One server on its own bbolt files, the same writers: what one
	# machine does without the database.
	keys "" "$WORK/keys.bbolt" "$WORK/ws/bbolt-1" one-by-one
	measure bbolt 1 "" "$WORK/ws/bbolt" "$WORK/keys.bbolt"
fi

FLOOR_AFTER=$(floor)
echo "TPC-B-like floor again: $FLOOR_AFTER tps" >&2
FLOOR=$(( (FLOOR_BEFORE + FLOOR_AFTER) / 2 ))
echo
echo "Cluster bench, $(date -u +%Y-%m-%d), $CORES cores, $WRITERS writers, $DURATION a phase, PostgreSQL $("$PG/bin/postgres" --version | sed 's/.* //')."
echo "Floor: TPC-B-like transactions, $TPCB_CONNS connections, scale $TPCB_SCALE: $FLOOR_BEFORE before, $FLOOR_AFTER after, $FLOOR tps (mean)."
echo
echo "| Servers | task_create /s | ÷ floor | thought_record /s | ÷ floor |"
echo "|---|---|---|---|---|"
while read -r n creates thoughts; do
	label=$n
	[ "$n" = bbolt ] && label="1, on bbolt, no PostgreSQL"
	awk -v n="$label" -v c="$creates" -v t="$thoughts" -v f="$FLOOR" \
		'BEGIN { printf "| %s | %d | %.2f | %d | %.2f |\n", n, c, c / f, t, t / f }'
done <"$RESULTS"
echo
echo "Where each phase's time went: the share of all cores' time that was busy; CPU per write, in µs, of the cairn servers, the core plugins they run (cairn-areas), PostgreSQL, loadgen and everything else; PostgreSQL's client backends busy at once (mean of samples every 20 ms), and what they were doing (a wait event; on CPU; or idle in transaction: a transaction open, with any lock it took, while its server works between statements)."
echo
echo "| Servers | Phase | Cores busy | CPU µs per write: cairn / cairn-areas / postgres / loadgen / other | Backends busy | Doing |"
echo "|---|---|---|---|---|---|"
cat "$PROFILES"
