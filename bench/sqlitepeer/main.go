// Command sqlitepeer measures SQLite (mattn/go-sqlite3, WAL, synchronous=FULL,
// prepared statements) on the peer dataset of internal/fixture, operation by
// operation as internal/exec's BenchmarkPeer runs them on our engine, and
// prints one JSON line per operation: {"op", "n", "p50_ns", "mean_ns"}.
// scripts/bench-peer.sh runs it beside BenchmarkPeer so the x-sqlite ratios
// compare two engines measured in the same window.
//
// It is its own module (cgo, a SQLite driver) so that the database itself
// depends on neither.
package main

import (
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/omnigraph-go/omnigraph/internal/fixture"
)

func main() {
	dir := flag.String("dir", "", "directory for the database file (default: a temporary one)")
	reps := flag.Int("reps", 2000, "timed repetitions per operation")
	flag.Parse()
	if err := run(*dir, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "sqlitepeer:", err)
		os.Exit(1)
	}
}

func run(dir string, reps int) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "sqlitepeer-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "peer.db")+"?_journal_mode=WAL&_synchronous=FULL&_cache_size=-1000000")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var version string
	if err := db.QueryRow("select sqlite_version()").Scan(&version); err != nil {
		return err
	}
	emit(map[string]any{"op": "version", "version": version})
	t0 := time.Now()
	if err := load(db); err != nil {
		return err
	}
	emit(map[string]any{"op": "load", "ms": time.Since(t0).Milliseconds()})

	// The same start nodes as BenchmarkPeer (seed 9, 9).
	r := rand.New(rand.NewPCG(9, 9))
	starts := make([]int, 2000)
	for i := range starts {
		starts[i] = r.IntN(fixture.PeerNodes)
	}
	byID := func(i int) []any { return []any{starts[i%len(starts)]} }
	byName := func(i int) []any { return []any{fmt.Sprintf("p%d", starts[i%len(starts)])} }
	none := func(int) []any { return nil }
	ops := []struct {
		op, sql string
		args    func(int) []any
	}{
		{"pk", "SELECT age FROM person WHERE name = ?", byName},
		{"hop2", `SELECT count(DISTINCT d) FROM (
			SELECT dst AS d FROM knows WHERE src = ?1
			UNION ALL SELECT k2.dst FROM knows k1 JOIN knows k2 ON k2.src = k1.dst WHERE k1.src = ?1)`, byID},
		{"hop3", `SELECT count(DISTINCT d) FROM (
			SELECT dst AS d FROM knows WHERE src = ?1
			UNION ALL SELECT k2.dst FROM knows k1 JOIN knows k2 ON k2.src = k1.dst WHERE k1.src = ?1
			UNION ALL SELECT k3.dst FROM knows k1 JOIN knows k2 ON k2.src = k1.dst
				JOIN knows k3 ON k3.src = k2.dst WHERE k1.src = ?1)`, byID},
		{"chain2", `SELECT p.name FROM knows k1 JOIN knows k2 ON k2.src = k1.dst
			JOIN person p ON p.id = k2.dst WHERE k1.src = ?`, byID},
		{"point", "SELECT count(*) FROM person WHERE age = 31 AND city = 'c3'", none},
		{"range", "SELECT count(*) FROM person WHERE age BETWEEN 30 AND 39", none},
	}
	for _, o := range ops {
		if err := bench(db, o.op, o.sql, reps, o.args); err != nil {
			return fmt.Errorf("%s: %w", o.op, err)
		}
	}
	// Durable single-row writes, one transaction each.
	writes := min(reps, 300)
	if err := bench(db, "upsert", "INSERT INTO person(name, age, city, bio) VALUES (?, 40, 'c1', 'w1 w2 w3')", writes,
		func(i int) []any { return []any{fmt.Sprintf("w%d", i)} }); err != nil {
		return fmt.Errorf("upsert: %w", err)
	}
	return bench(db, "set_age", "UPDATE person SET age = ? WHERE name = ?", writes,
		func(i int) []any { return []any{20 + i%50, fmt.Sprintf("p%d", starts[i%len(starts)])} })
}

// load creates the tables and the indexes the peer comparisons have always
// given SQLite: the key (a unique index on name), edges by (src, dst) and
// the filtered properties by (age, city).
func load(db *sql.DB) error {
	for _, s := range []string{
		"CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, age INTEGER, city TEXT, bio TEXT)",
		"CREATE TABLE knows(src INTEGER, dst INTEGER, since INTEGER)",
	} {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	node, err := tx.Prepare("INSERT INTO person VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		return err
	}
	edge, err := tx.Prepare("INSERT INTO knows VALUES (?, ?, ?)")
	if err != nil {
		return err
	}
	var ferr error
	fixture.PeerEach(func(p fixture.PeerPerson) {
		if ferr == nil {
			_, ferr = node.Exec(p.I, fmt.Sprintf("p%d", p.I), p.Age, p.City, p.Bio)
		}
	}, func(k fixture.PeerKnows) {
		if ferr == nil {
			_, ferr = edge.Exec(k.Src, k.Dst, k.Since)
		}
	})
	if ferr != nil {
		tx.Rollback()
		return ferr
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, s := range []string{
		"CREATE INDEX knows_src ON knows(src, dst)",
		"CREATE INDEX person_age_city ON person(age, city)",
		"ANALYZE",
	} {
		if _, err := db.Exec(s); err != nil {
			return err
		}
	}
	return nil
}

// bench runs a prepared statement reps times after a warm-up, reading every
// row it returns, and emits its p50 and mean.
func bench(db *sql.DB, op, query string, reps int, args func(int) []any) error {
	st, err := db.Prepare(query)
	if err != nil {
		return err
	}
	defer st.Close()
	once := func(i int) error {
		rows, err := st.Query(args(i)...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var v any
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		return rows.Err()
	}
	for i := range min(reps, 100) {
		if err := once(reps + i); err != nil {
			return err
		}
	}
	ds := make([]time.Duration, reps)
	var total time.Duration
	for i := range reps {
		t := time.Now()
		if err := once(i); err != nil {
			return err
		}
		ds[i] = time.Since(t)
		total += ds[i]
	}
	slices.Sort(ds)
	emit(map[string]any{"op": op, "n": reps, "p50_ns": ds[reps/2].Nanoseconds(), "mean_ns": total.Nanoseconds() / int64(reps)})
	return nil
}

func emit(m map[string]any) {
	b, _ := json.Marshal(m)
	fmt.Println(string(b))
}
