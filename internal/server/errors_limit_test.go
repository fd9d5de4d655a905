package server

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/omnigraph-go/omnigraph/internal/limits"
)

// TestResourceLimitIs413: a query stopped at its memory or time bound maps
// to 413 with the spec's resource_limit body, wrapped or not.
func TestResourceLimitIs413(t *testing.T) {
	for _, err := range []error{
		&limits.Error{Resource: "query_memory_bytes", Limit: 1024, Actual: 4096},
		fmt.Errorf("graph g: %w", &limits.Error{Resource: "query_time_ms", Limit: 5, Actual: 5}),
	} {
		status, out := errorResponse(err)
		if status != http.StatusRequestEntityTooLarge || out.ResourceLimit == nil || out.Code != "" {
			t.Fatalf("%v: status %d, body %+v", err, status, out)
		}
		if out.ResourceLimit.Resource == "" || out.ResourceLimit.Limit <= 0 || out.ResourceLimit.Actual < out.ResourceLimit.Limit {
			t.Fatalf("%v: resource_limit %+v", err, out.ResourceLimit)
		}
	}
}
