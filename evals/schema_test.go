package evals

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var updateSchema = flag.Bool("update-suite-schema", false, "rewrite evals/suite.schema.json")

func TestSchema_CommittedFileIsUpToDate(t *testing.T) {
	want, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	const file = "suite.schema.json"
	if *updateSchema {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is stale (%v); regenerate: go test ./evals -run TestSchema -update-suite-schema", SchemaFile, err)
	}
}
