package rowjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// row is the held form the streamed document must match byte for byte.
type row struct {
	cols []string
	vals []any
}

func (r row) MarshalJSON() ([]byte, error) { return Row(r.cols, r.vals) }

type head struct {
	Name     string   `json:"query_name"`
	RowCount int      `json:"row_count"`
	Columns  []string `json:"columns,omitempty"`
}

type tail struct {
	Commit string `json:"graph_commit_id,omitempty"`
}

type whole struct {
	Name     string   `json:"query_name"`
	RowCount int      `json:"row_count"`
	Columns  []string `json:"columns,omitempty"`
	Rows     []row    `json:"rows"`
	Commit   string   `json:"graph_commit_id,omitempty"`
}

func TestDocMatchesMarshal(t *testing.T) {
	cols := []string{"a", "b<&>", "c\u2028"}
	vals := [][]any{
		{json.Number("1"), "x<y>&\"z\"\n", nil},
		{json.Number("-9007199254740993"), []any{json.Number("1"), "two", nil}, map[string]any{"k": []any{}}},
		{json.Number("2.5"), "", []any{}},
	}
	for _, n := range []int{0, 1, 3} {
		for _, commit := range []string{"", "01ABC"} {
			for _, cs := range [][]string{cols, nil} {
				rows := []row{}
				h := head{Name: "q", RowCount: n, Columns: cs}
				for _, v := range vals[:n] {
					if cs == nil {
						v = nil
					}
					rows = append(rows, row{cs, v})
				}
				for _, indent := range []bool{false, true} {
					w := whole{h.Name, h.RowCount, h.Columns, rows, commit}
					var want []byte
					var err error
					if indent {
						want, err = json.MarshalIndent(w, "", "  ")
					} else {
						want, err = json.Marshal(w)
					}
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, '\n')
					var got bytes.Buffer
					d, err := Begin(&got, indent, h, tail{commit}, cs)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range rows {
						if err := d.Row(r.vals); err != nil {
							t.Fatal(err)
						}
					}
					if err := d.End(); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Bytes(), want) {
						t.Errorf("n=%d commit=%q cols=%v indent=%v:\ngot  %q\nwant %q", n, commit, cs, indent, got.Bytes(), want)
					}
				}
			}
		}
	}
}

func TestDocEmptyHead(t *testing.T) {
	for _, indent := range []bool{false, true} {
		var got bytes.Buffer
		d, err := Begin(&got, indent, struct{}{}, struct{}{}, []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Row([]any{json.Number("1")}); err != nil {
			t.Fatal(err)
		}
		if err := d.End(); err != nil {
			t.Fatal(err)
		}
		w := struct {
			Rows []row `json:"rows"`
		}{[]row{{[]string{"a"}, []any{json.Number("1")}}}}
		want, _ := json.Marshal(w)
		if indent {
			want, _ = json.MarshalIndent(w, "", "  ")
		}
		if got.String() != string(want)+"\n" {
			t.Errorf("indent=%v: got %q, want %q", indent, got.String(), want)
		}
	}
}

func TestRowError(t *testing.T) {
	var got bytes.Buffer
	d, err := Begin(&got, false, head{Name: "q"}, tail{}, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Row([]any{make(chan int)}); err == nil {
		t.Fatal("unencodable value accepted")
	}
}
