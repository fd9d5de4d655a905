#!/usr/bin/env bash
# The whole test suite: formatting, vet, and every test.
# Usage: ./scripts/test.sh   (the README's single test command; .ci/run runs it)
#
# The S3 tests run against a real S3-compatible server: this script builds
# (once, cached) and starts VersityGW on a free loopback port and stops it
# on exit (scripts/versitygw.sh). If OMNIGRAPH_TEST_S3 is already set, that
# server is used instead; OMNIGRAPH_SKIP_S3=1 runs without one (the S3
# server tests then skip).
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(find . -name '*.go' -not -path './.git/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
	echo "gofmt needed on:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...

if [ -z "${OMNIGRAPH_TEST_S3:-}" ] && [ "${OMNIGRAPH_SKIP_S3:-}" != 1 ]; then
	# shellcheck source=scripts/versitygw.sh
	source scripts/versitygw.sh
	trap vgw_stop EXIT
	vgw_start
fi
go test -count=1 -timeout 20m ./...
./scripts/fuzz.sh
