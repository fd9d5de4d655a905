package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLRU(t *testing.T) {
	type op struct {
		add  string // key to add (size from sizes)
		size int64
		get  string // key to look up
		want bool
	}
	tests := []struct {
		name   string
		budget int64
		ops    []op
		bytes  int64
	}{
		{"fits", 10, []op{{add: "a", size: 4}, {add: "b", size: 6}, {get: "a", want: true}, {get: "b", want: true}}, 10},
		{"evicts-oldest", 10, []op{{add: "a", size: 4}, {add: "b", size: 4}, {add: "c", size: 4}, {get: "a"}, {get: "b", want: true}, {get: "c", want: true}}, 8},
		{"get-refreshes", 10, []op{{add: "a", size: 4}, {add: "b", size: 4}, {get: "a", want: true}, {add: "c", size: 4}, {get: "a", want: true}, {get: "b"}}, 8},
		{"oversized-not-kept", 10, []op{{add: "a", size: 4}, {add: "big", size: 11}, {get: "big"}, {get: "a", want: true}}, 4},
		{"replace-same-key", 10, []op{{add: "a", size: 4}, {add: "a", size: 6}, {get: "a", want: true}}, 6},
		{"zero-budget", 0, []op{{add: "a", size: 1}, {get: "a"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New[string](tt.budget)
			for i, o := range tt.ops {
				if o.add != "" {
					c.Add(o.add, "v"+o.add, o.size)
					continue
				}
				v, ok := c.Get(o.get)
				if ok != o.want {
					t.Fatalf("op %d: Get(%q) ok=%v, want %v", i, o.get, ok, o.want)
				}
				if ok && v != "v"+o.get {
					t.Fatalf("op %d: Get(%q)=%q", i, o.get, v)
				}
			}
			if got := c.Stats().Bytes; got != tt.bytes {
				t.Fatalf("bytes=%d, want %d", got, tt.bytes)
			}
		})
	}
}

func TestBudgetNeverExceeded(t *testing.T) {
	c := New[int](100)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				c.Add(fmt.Sprintf("k%d", (g*7+i)%97), i, int64(i%30))
				if s := c.Stats(); s.Bytes > 100 || s.Bytes < 0 {
					t.Errorf("bytes=%d outside [0,100]", s.Bytes)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	// Recount from the list to check the running total.
	c.mu.Lock()
	defer c.mu.Unlock()
	var sum int64
	for el := c.mu.ll.Front(); el != nil; el = el.Next() {
		sum += el.Value.(*entry[int]).size
	}
	if sum != c.mu.bytes || sum > 100 || len(c.mu.items) != c.mu.ll.Len() {
		t.Fatalf("sum=%d bytes=%d items=%d list=%d", sum, c.mu.bytes, len(c.mu.items), c.mu.ll.Len())
	}
}

func TestGetOrLoadDedupes(t *testing.T) {
	c := New[int](1 << 10)
	var calls atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	load := func(ctx context.Context) (int, int64, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return 42, 8, nil
	}
	var wg sync.WaitGroup
	results := make([]int, 8)
	wg.Add(1)
	go func() {
		defer wg.Done()
		v, err := c.GetOrLoad(context.Background(), "k", load)
		if err != nil {
			t.Error(err)
		}
		results[0] = v
	}()
	<-started
	for i := 1; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v, err := c.GetOrLoad(context.Background(), "k", load)
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		}(i)
	}
	// Waiters may still be between the inflight check and the channel wait;
	// either way they must not start a second load.
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("loader ran %d times, want 1", n)
	}
	for i, v := range results {
		if v != 42 {
			t.Fatalf("result %d = %d", i, v)
		}
	}
	if _, ok := c.Get("k"); !ok {
		t.Fatal("loaded value not cached")
	}
}

func TestGetOrLoadErrorsNotCached(t *testing.T) {
	c := New[int](1 << 10)
	boom := errors.New("boom")
	_, err := c.GetOrLoad(context.Background(), "k", func(context.Context) (int, int64, error) { return 0, 0, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err=%v", err)
	}
	v, err := c.GetOrLoad(context.Background(), "k", func(context.Context) (int, int64, error) { return 7, 1, nil })
	if err != nil || v != 7 {
		t.Fatalf("v=%d err=%v", v, err)
	}
}

func TestWaiterContextAndLeaderCancel(t *testing.T) {
	c := New[int](1 << 10)
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	started := make(chan struct{})
	leaderDone := make(chan error, 1)
	go func() {
		_, err := c.GetOrLoad(leaderCtx, "k", func(ctx context.Context) (int, int64, error) {
			close(started)
			<-ctx.Done()
			return 0, 0, ctx.Err()
		})
		leaderDone <- err
	}()
	<-started

	// A waiter whose own context is already done gives up.
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.GetOrLoad(dead, "k", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("dead waiter err=%v", err)
	}

	// A live waiter survives the leader's cancellation by loading itself.
	waiter := make(chan int, 1)
	go func() {
		v, err := c.GetOrLoad(context.Background(), "k", func(context.Context) (int, int64, error) { return 5, 1, nil })
		if err != nil {
			t.Error(err)
		}
		waiter <- v
	}()
	cancelLeader()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader err=%v", err)
	}
	if v := <-waiter; v != 5 {
		t.Fatalf("waiter got %d", v)
	}
}

func TestLoaderPanicReleasesWaiters(t *testing.T) {
	c := New[int](1 << 10)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic not propagated to the leader")
			}
		}()
		_, _ = c.GetOrLoad(context.Background(), "k", func(context.Context) (int, int64, error) { panic("x") })
	}()
	v, err := c.GetOrLoad(context.Background(), "k", func(context.Context) (int, int64, error) { return 1, 1, nil })
	if err != nil || v != 1 {
		t.Fatalf("v=%d err=%v", v, err)
	}
}
