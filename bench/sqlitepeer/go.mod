module github.com/omnigraph-go/omnigraph/bench/sqlitepeer

go 1.26.0

require (
	github.com/mattn/go-sqlite3 v1.14.53
	github.com/omnigraph-go/omnigraph v0.0.0
)

replace github.com/omnigraph-go/omnigraph => ../..
