package evals

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/invopop/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaFile is where the JSON Schema of the suite format is committed,
// relative to the module root.
const SchemaFile = "evals/suite.schema.json"

// Schema returns the JSON Schema (2020-12) of a suite file, generated from
// the Go types. Unknown members are refused everywhere.
func Schema() ([]byte, error) {
	r := &jsonschema.Reflector{ExpandedStruct: true, Anonymous: true}
	s := r.Reflect(&Suite{})
	s.ID = "https://platformapi.local/evals/suite.schema.json"
	s.Title = "platformapi evaluation suite"
	s.Description = "A scripted agent conversation played by `platformapi eval` (YAML or JSON)."
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

var compiled struct {
	once   sync.Once
	schema *sjs.Schema
	err    error
}

// compiledSchema compiles Schema once.
func compiledSchema() (*sjs.Schema, error) {
	compiled.once.Do(func() {
		raw, err := Schema()
		if err != nil {
			compiled.err = err
			return
		}
		doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			compiled.err = err
			return
		}
		c := sjs.NewCompiler()
		if compiled.err = c.AddResource("suite.schema.json", doc); compiled.err == nil {
			compiled.schema, compiled.err = c.Compile("suite.schema.json")
		}
	})
	return compiled.schema, compiled.err
}
