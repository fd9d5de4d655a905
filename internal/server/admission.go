package server

import (
	"net/http"
	"sync"
)

// admission bounds each actor's concurrent admission-gated requests (writes
// and branch operations) by count and by declared request bytes. It is
// in-process: replicas each keep their own budget.
type admission struct {
	maxInflight int
	maxBytes    int64

	mu sync.Mutex
	// INVARIANT: an actor is present iff it holds at least one slot, so
	// the map does not grow with the number of actors ever seen
	// (TestAdmissionReleases).
	actors map[string]*actorLoad
}

type actorLoad struct {
	inflight int
	bytes    int64
}

func newAdmission(maxInflight int, maxBytes int64) *admission {
	return &admission{maxInflight: maxInflight, maxBytes: maxBytes, actors: map[string]*actorLoad{}}
}

// retryAfterSeconds is the Retry-After hint of a 429.
const retryAfterSeconds = "1"

// acquire takes a slot of n bytes for actor, or returns the 429 to send.
// The returned release must be called exactly once.
func (a *admission) acquire(actor string, n int64) (func(), *apiError) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.actors[actor]
	if l == nil {
		l = &actorLoad{}
	}
	var refuse *apiError
	switch {
	case l.inflight+1 > a.maxInflight:
		refuse = newAPIError(http.StatusTooManyRequests, codeTooManyRequests,
			"too many requests in flight for actor '%s' (limit %d): retry later", actor, a.maxInflight)
	case l.bytes+n > a.maxBytes:
		refuse = newAPIError(http.StatusTooManyRequests, codeTooManyRequests,
			"request bytes in flight for actor '%s' would exceed %d: retry later", actor, a.maxBytes)
	}
	if refuse != nil {
		refuse.header = http.Header{"Retry-After": []string{retryAfterSeconds}}
		return nil, refuse
	}
	l.inflight++
	l.bytes += n
	a.actors[actor] = l
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			l.inflight--
			l.bytes -= n
			if l.inflight == 0 {
				delete(a.actors, actor)
			}
		})
	}, nil
}

// held reports how many actors hold slots (tests).
func (a *admission) held() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.actors)
}
