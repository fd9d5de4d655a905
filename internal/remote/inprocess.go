package remote

import (
	"net/http"
	"net/http/httptest"
)

// InProcess returns an HTTP client whose requests are served by h in the
// calling goroutine, never over a socket: a Client built with it talks to
// an in-process omnigraph-server handler through the very routes, auth,
// policy and error mapping a network client gets. header is added to every
// request (a request id to correlate logs); it may be nil.
//
// The response is buffered whole before it is returned, so it suits the
// JSON routes, not long streams.
func InProcess(h http.Handler, header http.Header) *http.Client {
	return &http.Client{Transport: inProcess{h: h, header: header}}
}

type inProcess struct {
	h      http.Handler
	header http.Header
}

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, vs := range t.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if req.Body == nil {
		req.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
