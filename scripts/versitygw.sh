# shellcheck shell=bash
# VersityGW (an S3-compatible server, posix backend) for the S3 tests.
# Sourced by scripts/test.sh; by hand:
#
#   source scripts/versitygw.sh && vgw_start && env | grep -E 'AWS_|OMNIGRAPH_TEST'
#   ... go test ./internal/storage/s3/ ...
#   vgw_stop
#
# vgw_start builds VersityGW once into a cache directory that survives runs
# (about 5 minutes cold), starts it on a free 127.0.0.1 port over a temp
# directory, and exports the endpoint and credentials the tests read:
# OMNIGRAPH_TEST_S3, AWS_*, and OMNIGRAPH_TEST_VERSITYGW (the binary, for
# tests that start and restart their own server).

VGW_VERSION=v1.8.0
VGW_CACHE="${OMNIGRAPH_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omnigraph}/versitygw-$VGW_VERSION"
VGW_BIN="$VGW_CACHE/versitygw"

vgw_build() {
	if [ -x "$VGW_BIN" ]; then
		return 0
	fi
	echo "building versitygw $VGW_VERSION into $VGW_CACHE (first run only)..." >&2
	mkdir -p "$VGW_CACHE"
	(cd "$(mktemp -d)" && GOBIN="$VGW_CACHE" GOFLAGS= go install "github.com/versity/versitygw/cmd/versitygw@$VGW_VERSION")
}

vgw_start() {
	vgw_build || return 1
	VGW_DIR=$(mktemp -d "${TMPDIR:-/tmp}/omnigraph-vgw.XXXXXX")
	mkdir -p "$VGW_DIR/data/omnigraph-test"
	local port tries
	for tries in 1 2 3 4 5 6 7 8; do
		port=$((20000 + RANDOM % 40000))
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			continue # taken
		fi
		"$VGW_BIN" --access omnigraph --secret omnigraph-secret --port "127.0.0.1:$port" --quiet \
			posix "$VGW_DIR/data" >"$VGW_DIR/log" 2>&1 &
		VGW_PID=$!
		local i
		for i in $(seq 1 100); do
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
				export OMNIGRAPH_TEST_S3="s3://omnigraph-test/run-$$"
				export OMNIGRAPH_TEST_VERSITYGW="$VGW_BIN"
				export AWS_ACCESS_KEY_ID=omnigraph AWS_SECRET_ACCESS_KEY=omnigraph-secret AWS_REGION=us-east-1
				export AWS_ENDPOINT_URL_S3="http://127.0.0.1:$port" AWS_ALLOW_HTTP=true AWS_S3_FORCE_PATH_STYLE=true
				echo "versitygw $VGW_VERSION on 127.0.0.1:$port (pid $VGW_PID, data $VGW_DIR/data)" >&2
				return 0
			fi
			if ! kill -0 "$VGW_PID" 2>/dev/null; then
				break # exited (port race): try another port
			fi
			sleep 0.05
		done
		kill "$VGW_PID" 2>/dev/null || true
		wait "$VGW_PID" 2>/dev/null || true
		unset VGW_PID
	done
	echo "versitygw did not start:" >&2
	cat "$VGW_DIR/log" >&2
	return 1
}

vgw_stop() {
	if [ -n "${VGW_PID:-}" ]; then
		kill "$VGW_PID" 2>/dev/null || true
		wait "$VGW_PID" 2>/dev/null || true
		unset VGW_PID
	fi
	if [ -n "${VGW_DIR:-}" ]; then
		rm -rf "$VGW_DIR"
		unset VGW_DIR
	fi
}
