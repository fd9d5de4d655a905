// Package storeuri opens the object store a graph URI names, for the
// packages of this module that work on a raw store rather than a graph
// handle (verify and repair of a damaged graph, cluster roots).
//
// The opener lives in the module root, next to the options and environment
// it reads (local directories, s3:// with its object cache); the root
// installs it here when it is linked (Register, from its init). This keeps
// the public API from exporting a function that returns the internal
// storage.Store type, which code outside the module could not name.
package storeuri

import (
	"errors"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

var open func(uri string, create bool) (storage.Store, error)

// Register installs the opener; the module root calls it once, at init.
func Register(f func(uri string, create bool) (storage.Store, error)) { open = f }

// ErrNoOpener: the module root, which installs the opener, is not linked
// into the program.
var ErrNoOpener = errors.New("storeuri: no store opener registered (import the omnigraph package)")

// Open returns the store at uri: a local path, a file:// URL or
// s3://bucket/prefix. With create, a missing local directory is made.
func Open(uri string, create bool) (storage.Store, error) {
	if open == nil {
		return nil, ErrNoOpener
	}
	return open(uri, create)
}
