package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/omnigraph-go/omnigraph/internal/storage"
)

// writersStore is the store stack of the write benchmarks: a local
// directory (durable: every put fsyncs) behind the batching layer (a
// write's objects go out concurrently); with rtt, the stack of an s3://
// graph instead — Batching(Cached(store with rtt per request)), the cache
// holding immutable objects, write-through.
func writersStore(tb testing.TB, dir string, rtt time.Duration) storage.Store {
	tb.Helper()
	return storage.NewBatching(writersInner(tb, dir, rtt))
}

// writersInner is writersStore without its batching layer, counted: what
// the batching layer sends to the store (puts per write in
// BenchmarkWriters).
func writersInner(tb testing.TB, dir string, rtt time.Duration) *storage.Counting {
	tb.Helper()
	st, err := storage.NewLocal(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var s storage.Store = st
	if rtt > 0 {
		// An object store keeps one object per name: no chain objects.
		s = storage.NewCached(storage.NewDelayed(unshared{st}, rtt), storage.CacheOptions{Immutable: func(key string) bool {
			return strings.HasPrefix(key, "commits/") || strings.HasPrefix(key, "schemas/") || strings.HasPrefix(key, "tables/")
		}})
	}
	return storage.NewCounting(s)
}

// unshared is a local directory without the SharedPutter capability, as
// the stand-in for an object store (which has no hard links).
type unshared struct{ *storage.Local }

func (unshared) PutsShared() bool { return false }

// writersDir is a fresh directory for one benchmark graph: under
// $OMNIGRAPH_WRITERS_BENCH_DIR if set (e.g. /dev/shm, to see the engine's
// own cost without the file system's), else the test's temp directory.
func writersDir(b *testing.B) string {
	parent := os.Getenv("OMNIGRAPH_WRITERS_BENCH_DIR")
	if parent == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "writers")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writersGraph makes a graph of one Acct row per writer.
func writersGraph(tb testing.TB, st storage.Store, writers int) *Graph {
	tb.Helper()
	ctx := context.Background()
	g, err := Init(ctx, st, "lin.pg", linSchema, "bench", Options{})
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	for w := range writers {
		fmt.Fprintf(&b, `{"type":"Acct","data":{"name":"w%d","v":0}}`+"\n", w)
	}
	if _, err := g.Load(ctx, strings.NewReader(b.String()), LoadRequest{Mode: LoadAppend}); err != nil {
		tb.Fatal(err)
	}
	return g
}

// writersRun runs n keyed updates split over writers goroutines on g (each
// updates its own row, so no write conflicts with another) and returns the
// latencies.
func writersRun(tb testing.TB, g *Graph, writers, n int) []time.Duration {
	ctx := context.Background()
	plan := linPlans(tb, g)["upd"]
	lat := make([][]time.Duration, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				t0 := time.Now()
				res, err := g.Mutate(ctx, "main", plan, map[string]any{"k": fmt.Sprintf("w%d", w), "v": int64(i + 1)}, MutateOptions{})
				if err != nil || res.Commit == nil {
					tb.Errorf("writer %d: %+v %v", w, res, err)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	return slices.Concat(lat...)
}

func quantile(lat []time.Duration, q float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// BenchmarkWriters measures group commit: 1, 4, 16 and 64 concurrent
// writers updating rows of one table on one branch through one handle, on
// local disk and with 30 ms per request. b.N is the total number of
// writes. It reports writes/s, p50 and p99 latency, and x_vs_1: the
// throughput over the 1-writer case of the same store measured in the same
// run (docs/performance.md, "Many writers", has the figures); puts/write,
// the objects the store received per write (commits, states, fragments,
// indexes, deletion vectors, inline compaction's), and cpu_ms/write, the
// process's CPU time per write: on a shared machine the process gets a
// share of a core, and once writes are batched that share over
// cpu_ms/write bounds the throughput.
//
//	go test -run '^$' -bench 'BenchmarkWriters$' -benchtime 400x ./internal/exec
//	OMNIGRAPH_WRITERS_BENCH_DIR=/dev/shm go test -run '^$' -bench 'BenchmarkWriters$/local' ./internal/exec
func BenchmarkWriters(b *testing.B) {
	for _, s := range []struct {
		name string
		rtt  time.Duration
	}{{"local", 0}, {"rtt30ms", 30 * time.Millisecond}} {
		var base float64
		for _, writers := range []int{1, 4, 16, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", s.name, writers), func(b *testing.B) {
				inner := writersInner(b, writersDir(b), s.rtt)
				g := writersGraph(b, storage.NewBatching(inner), writers)
				n := b.N
				if s.rtt > 0 && writers == 1 {
					n = max(1, b.N/8) // 1 writer at 30 ms: ~10 writes/s
				}
				b.ResetTimer()
				puts0, cpu0, t0 := inner.Snapshot(), cpuTime(), time.Now()
				lat := writersRun(b, g, writers, n)
				el, cpu := time.Since(t0), cpuTime()-cpu0
				puts := inner.Snapshot().Sub(puts0)
				b.StopTimer()
				rate := float64(len(lat)) / el.Seconds()
				b.ReportMetric(rate, "writes/s")
				b.ReportMetric(float64(puts[storage.OpPut].Requests+puts[storage.OpPutIfAbsent].Requests+puts[storage.OpPutShared].Requests)/float64(len(lat)), "puts/write")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(lat)), "cpu_ms/write")
				b.ReportMetric(float64(quantile(lat, 0.5).Microseconds())/1000, "p50_ms")
				b.ReportMetric(float64(quantile(lat, 0.99).Microseconds())/1000, "p99_ms")
				if writers == 1 {
					base = rate
				} else if base > 0 {
					b.ReportMetric(rate/base, "x_vs_1")
				}
			})
		}
	}
}

// TestWriterProcHelper is one process of BenchmarkWriterProcesses; it does
// nothing unless run by it.
func TestWriterProcHelper(t *testing.T) {
	spec := os.Getenv("OMNIGRAPH_WRITER_PROC")
	if spec == "" {
		t.Skip("run by BenchmarkWriterProcesses")
	}
	parts := strings.Split(spec, ",") // dir,writer,n,procs,noForward
	w, _ := strconv.Atoi(parts[1])
	n, _ := strconv.Atoi(parts[2])
	procs, _ := strconv.Atoi(parts[3])
	ctx := context.Background()
	g, err := Open(ctx, writersStore(t, parts[0], 0), Options{NoForwardWrites: parts[4] == "true"})
	if err != nil {
		t.Fatal(err)
	}
	plan := linPlans(t, g)["upd"]
	gaveUp := 0
	t0 := time.Now()
	for i := 0; i < n; {
		// The writers' rows are split between the processes: one process
		// updates all of them in turn, each of 8 processes its own.
		key := fmt.Sprintf("w%d", w+procs*(i%(writerProcRows/procs)))
		_, err := g.Mutate(ctx, "main", plan, map[string]any{"k": key, "v": int64(i + 1)}, MutateOptions{Source: linQueries})
		switch {
		case errors.Is(err, ErrContention):
			gaveUp++ // a documented outcome: the client retries
		case err != nil:
			t.Fatalf("write %d: %v", i, err)
		default:
			i++
		}
	}
	if gaveUp > 0 {
		fmt.Printf("process %d: %d writes ran out of retry budget and were retried\n", w, gaveUp)
	}
	// The span of this process's writes, for the parent's throughput.
	fmt.Printf("%s %d %d\n", writerSpanTag, t0.UnixNano(), time.Now().UnixNano())
}

// writerProcRows is the rows BenchmarkWriterProcesses updates, in either
// configuration: the same table and the same writes, split over 1 or 8
// processes.
const writerProcRows = 8

// writerSpanTag starts the line a TestWriterProcHelper prints with the
// unix-ns start and end of its writes.
const writerSpanTag = "omnigraph-writer-span"

// BenchmarkWriterProcesses measures cross-process contention: the same
// keyed updates of 8 rows of one table on local disk, issued by one OS
// process (round robin over the rows) or by 8 (each its own row), with
// writes handed to the turn's holder (forward.go: one group commit for the
// writes of several processes) and without (the processes take turns, one
// batch each). The graphs hold the 8 rows, so every table takes the same
// shape (one small fragment per row, inline compactions as they come).
// x_vs_1 is the throughput of 8 processes over that of one in the same
// run, x_vs_1_noforward the same without forwarding; ≥ 1 means more
// processes never collapse throughput. A run's time is from the first
// write's start in any process to the last write's end (each process
// reports its span), so process start-up is outside it.
//
// The graphs are made first and kept until the end, and the rounds run
// in the order 1, 8, 8 without forwarding, and back (b.N/2 writes a
// round): on a file system where creating a file costs more while many
// files were deleted recently (ext4 without a journal skips every inode
// freed in the last few minutes, one lookup each), the configuration
// measured right after another one's clean-up, or after the other's
// writes, would pay for them. In this order each configuration follows
// the same amount of the others' work.
//
//	go test -run '^$' -bench 'BenchmarkWriterProcesses' -benchtime 400x ./internal/exec
func BenchmarkWriterProcesses(b *testing.B) {
	bin, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	type config struct {
		procs     int
		noForward bool
	}
	one, eight, eightNF := config{1, false}, config{8, false}, config{8, true}
	root := b.TempDir()
	dirs := map[config]string{}
	for i, c := range []config{one, eight, eightNF} {
		dir := filepath.Join(root, fmt.Sprintf("g%d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		writersGraph(b, writersStore(b, dir, 0), writerProcRows)
		dirs[c] = dir
	}
	half := max(1, b.N/2)
	spans := map[config]time.Duration{}
	writes := map[config]int{}
	b.ResetTimer()
	for _, c := range []config{one, eight, eightNF, eightNF, eight, one} {
		each := max(1, half/c.procs)
		spans[c] += writerProcsRound(b, bin, dirs[c], c.procs, each, c.noForward)
		writes[c] += each * c.procs
	}
	b.StopTimer()
	rate := func(c config) float64 { return float64(writes[c]) / spans[c].Seconds() }
	b.ReportMetric(rate(one), "writes/s_1proc")
	b.ReportMetric(rate(eight), "writes/s_8procs")
	b.ReportMetric(rate(eightNF), "writes/s_8procs_noforward")
	b.ReportMetric(rate(eight)/rate(one), "x_vs_1")
	b.ReportMetric(rate(eightNF)/rate(one), "x_vs_1_noforward")
}

// writerProcsRound runs procs TestWriterProcHelper processes on the graph
// in dir, each writing each times, and returns the span from the first
// write's start to the last write's end.
func writerProcsRound(b *testing.B, bin, dir string, procs, each int, noForward bool) time.Duration {
	var mu sync.Mutex
	var first, last int64
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := osexec.Command(bin, "-test.run=^TestWriterProcHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("OMNIGRAPH_WRITER_PROC=%s,%d,%d,%d,%t", dir, p, each, procs, noForward))
			out, err := cmd.CombinedOutput()
			if err != nil {
				b.Errorf("process %d: %v\n%s", p, err, out)
				return
			}
			for _, line := range strings.Split(string(out), "\n") {
				var s, e int64
				if _, err := fmt.Sscanf(line, writerSpanTag+" %d %d", &s, &e); err == nil {
					mu.Lock()
					if first == 0 || s < first {
						first = s
					}
					last = max(last, e)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if first == 0 {
		b.Fatal("no process reported its span")
	}
	return time.Duration(last - first)
}
