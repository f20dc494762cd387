package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"platformapi/bunstore/pgtest"
)

// tourCreate is the body the README's first tour POSTs to /customers.
var tourCreate = regexp.MustCompile(`(?s)## First tour.*?-d '(\{[^']*\})'\s*\\\s*\n\s*\$api/customers`)

// TestREADME_FirstTourCreate_201OnTheDemoWorld: the tour a new user follows
// against `serve --demo` creates a customer (issue 18: it answered 409, the
// demo world holds ACME).
func TestREADME_FirstTourCreate_201OnTheDemoWorld(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := tourCreate.FindSubmatch(readme)
	if m == nil {
		t.Fatal("the README's first tour has no customer create")
	}
	srv, err := StartEvalServer(context.Background(), Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))},
		pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/customers", strings.NewReader(string(m[1])))
	req.Header.Set("Authorization", "Bearer "+srv.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "tour-1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("the tour's create: %d %s", res.StatusCode, body)
	}
}
