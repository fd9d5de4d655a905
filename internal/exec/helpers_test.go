package exec

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func jsonDecoder(b []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec
}
