package omnigraph

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestDecodeJSONValueFastPath: the scalar shortcut of decodeJSONValue gives
// exactly what the json.Number-preserving decoder gives.
func TestDecodeJSONValueFastPath(t *testing.T) {
	for _, raw := range []string{
		`"plain"`, `"esc\"aped\n\u00e9\u2028<&>"`, `""`, `0`, `-12`, `9007199254740993`, `1.5e-7`, `-0.0`,
		`null`, `true`, `false`, ` 7 `, `[1,"a",null]`, `{"k":[true]}`, `[]`,
	} {
		dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeJSONValue([]byte(raw))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v (%v), want %#v", raw, got, err, want)
		}
	}
	for _, bad := range []string{`"open`, `-`} {
		if _, err := decodeJSONValue([]byte(bad)); err == nil {
			t.Errorf("%s decoded without error", bad)
		}
	}
}
