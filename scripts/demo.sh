#!/usr/bin/env bash
# End-to-end demo on an embedded local graph: build the CLI, create a graph
# from examples/social, load its data, query it, change it, time-travel.
# Usage: ./scripts/demo.sh [GRAPH_DIR]   (default: a fresh temporary directory)
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
graph=${1:-$work/social.omni}
bin=$work/omnigraph

echo "==> building omnigraph"
go build -o "$bin" ./cmd/omnigraph

run() {
	echo
	echo "\$ omnigraph $*"
	"$bin" "$@"
}

run init --schema examples/social/schema.pg "$graph"
run load --data examples/social/data.jsonl --mode overwrite "$graph"
run query friends_of --query examples/social/queries.gq --params '{"name":"Alice"}' --store "$graph"
run query friend_counts --query examples/social/queries.gq --store "$graph"
before=$("$bin" query get_person --query examples/social/queries.gq --params '{"name":"Alice"}' --store "$graph" --json |
	sed -n 's/.*"graph_commit_id": "\([^"]*\)".*/\1/p')
run mutate set_age --query examples/social/mutations.gq --params '{"name":"Alice","age":31}' --store "$graph" --as demo
run query get_person --query examples/social/queries.gq --params '{"name":"Alice"}' --store "$graph"
echo
echo "# the same query at the commit before the change:"
run query get_person --query examples/social/queries.gq --params '{"name":"Alice"}' --store "$graph" --snapshot "$before"
run commit list "$graph"
run snapshot "$graph"
