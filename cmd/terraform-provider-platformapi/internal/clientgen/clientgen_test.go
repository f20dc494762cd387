package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/bunstore/pgtest"
)

const (
	committed  = "../../platformclient/client.gen.go"
	regenerate = "go generate ./cmd/terraform-provider-platformapi/..."
)

// served is the OpenAPI 3.0 document a real server (real store, real
// database) serves.
func served(t *testing.T) []byte {
	t.Helper()
	e := apitest.New(t, apitest.Options{})
	r := e.Do("GET", "/api/v1/openapi-3.0.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("GET openapi-3.0.json: %d %s", r.Status, r.Body)
	}
	return r.Body
}

// TestDocument_EqualsServedDocument: the generator's in-process document
// (no database) is byte for byte the one the running server serves, so
// go generate sees exactly the served contract.
func TestDocument_EqualsServedDocument(t *testing.T) {
	doc, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	if got := served(t); !bytes.Equal(doc, got) {
		t.Fatalf("clientgen's document differs from the served one (wiring drift in document.go):\n%s",
			lineDiff(string(got), string(doc)))
	}
}

// TestClient_NotStaleAgainstServedDocument: the committed client is what
// oapi-codegen generates from the served document; any change of the
// contract that changes the client fails here with the lines that differ.
func TestClient_NotStaleAgainstServedDocument(t *testing.T) {
	want, err := Generate(served(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("platformclient/client.gen.go is stale against the served OpenAPI document; run\n\t%s\n"+
			"differences (-committed +generated):\n%s", regenerate, lineDiff(string(got), string(want)))
	}
}

// lineDiff is a line diff of a and b, cut to its first 120 lines.
func lineDiff(a, b string) string {
	d := cmp.Diff(strings.Split(a, "\n"), strings.Split(b, "\n"))
	lines := strings.Split(d, "\n")
	if len(lines) > 120 {
		lines = append(lines[:120], "…")
	}
	return strings.Join(lines, "\n")
}

func TestMain(m *testing.M) { pgtest.Main(m) }
