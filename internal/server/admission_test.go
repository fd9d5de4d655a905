package server

import (
	"testing"
)

func TestAdmissionReleases(t *testing.T) {
	a := newAdmission(2, 100)
	r1, e1 := a.acquire("x", 10)
	r2, e2 := a.acquire("x", 10)
	if e1 != nil || e2 != nil {
		t.Fatal(e1, e2)
	}
	if _, e := a.acquire("x", 1); e == nil || e.status != 429 || e.header.Get("Retry-After") == "" {
		t.Fatalf("third slot: %+v", e)
	}
	// Budgets are per actor.
	ry, ey := a.acquire("y", 100)
	if ey != nil {
		t.Fatal(ey)
	}
	if _, e := a.acquire("y", 1); e == nil {
		t.Fatal("bytes budget not enforced")
	}
	r1()
	r1() // release is idempotent
	r3, e3 := a.acquire("x", 10)
	if e3 != nil {
		t.Fatal(e3)
	}
	r2()
	r3()
	ry()
	if n := a.held(); n != 0 {
		t.Errorf("%d actors still held", n)
	}
}

// TestAdmissionHTTP: a gated write over the actor's byte budget is a 429
// with Retry-After; reads are not gated.
func TestAdmissionHTTP(t *testing.T) {
	ts := open(t, func(c *Config) { c.Limits.PerActorBytes = 16 })
	r := ts.req("POST", "/graphs/g/mutate", map[string]any{"query": addPerson, "params": map[string]any{"name": "Eve", "age": 1}})
	if r.status != 429 || r.header.Get("Retry-After") != "1" || r.errOut(t).Code != codeTooManyRequests {
		t.Fatalf("%d %v %s", r.status, r.header, r.body)
	}
	if r := ts.req("POST", "/graphs/g/queries/add", map[string]any{"params": map[string]any{"name": "Eve", "age": 1}}); r.status != 429 {
		t.Errorf("stored mutation not gated: %d %s", r.status, r.body)
	}
	if r := ts.req("POST", "/graphs/g/query", map[string]any{"query": allPeople}); r.status != 200 {
		t.Errorf("read gated: %d %s", r.status, r.body)
	}
	if ts.s.adm.held() != 0 {
		t.Error("slots leaked")
	}
}
