package api

import (
	"encoding/json"
	"io"

	"github.com/danielgtaylor/huma/v2"
	gojson "github.com/goccy/go-json"
)

// JSONFormat is how the API writes and reads JSON: answers are encoded by
// github.com/goccy/go-json, a drop-in encoding/json that writes the same
// bytes (omitzero and Marshaler compaction included; segmentio/encoding
// lacks omitzero) three to four times faster and without allocating (on
// a catalogue row, docs/benchmarks.md and docs/decisions.md). HTML characters are not escaped,
// as Huma's default. Request bodies are read by encoding/json, whose error
// messages the problem documents are built from.
var JSONFormat = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		enc := gojson.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	},
	Unmarshal: json.Unmarshal,
}
