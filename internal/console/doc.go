// Package console is the web console: a static, hand-written ES-module
// application embedded in the binary and served by omnigraph-server at
// /ui/ (docs/console.md).
//
// Guarantees: the console is only a client of the public HTTP API; this
// package serves files and nothing else, so it holds no graph data and
// needs no token (the API calls the page makes carry the bearer token and
// are authorized like any other client's). Every response carries a
// Content-Security-Policy that allows scripts, styles, images and fetches
// from the serving origin only, so the page can load nothing from the
// network and runs no inline script. The assets are read from the binary
// (embed), never from disk, so a fresh `go build` serves them.
package console
