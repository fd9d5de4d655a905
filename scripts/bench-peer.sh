#!/usr/bin/env bash
# Warm peer comparison in one window: SQLite (bench/sqlitepeer) and our
# engine (internal/exec BenchmarkPeer) on the same dataset, interleaved
# round by round, each BenchmarkPeer round reading the SQLite p50s of the
# round just before it, so every x-sqlite ratio compares figures taken
# minutes apart on the same machine.
#
# Usage: ./scripts/bench-peer.sh [rounds] [benchtime]
#   rounds     SQLite/ours pairs (default 2: an A/A pair shows the noise)
#   benchtime  go test -benchtime for BenchmarkPeer (default 2000x)
# Output: per round, the load average, SQLite's JSON lines and the
# benchmark lines (ns/op, allocs, x-sqlite = our mean ÷ SQLite's p50).
# Needs cgo (a C compiler) for the SQLite driver.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
benchtime=${2:-2000x}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd bench/sqlitepeer && go build -o "$work/sqlitepeer" .)
go test -c -o "$work/exec.test" ./internal/exec
for r in $(seq 1 "$rounds"); do
	echo "## round $r, $(date -u +%T), load average $(cut -d' ' -f1-3 /proc/loadavg)"
	"$work/sqlitepeer" -dir "$work" | tee "$work/sqlite.jsonl"
	rm -f "$work"/peer.db*
	OMNIGRAPH_PEER_SQLITE="$work/sqlite.jsonl" "$work/exec.test" \
		-test.run '^$' -test.bench '^BenchmarkPeer$' -test.benchtime "$benchtime" -test.benchmem |
		grep -E '^(Benchmark|ok|FAIL|---)' || true
done
