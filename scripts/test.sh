#!/usr/bin/env bash
# The whole test suite: formatting, vet, and every test.
# Usage: ./scripts/test.sh   (the README's single test command; .ci/run runs it)
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(find . -name '*.go' -not -path './.git/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
	echo "gofmt needed on:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go test -count=1 -timeout 20m ./...
./scripts/fuzz.sh
