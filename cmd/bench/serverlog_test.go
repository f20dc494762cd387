package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRefusedLines_AccessLinesNot2xxAndErrorsAfterTheOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	earlier := `{"level":"INFO","msg":"request","status":503}` + "\n"
	lines := []string{
		`{"level":"INFO","msg":"request","status":201}`,
		`{"level":"INFO","msg":"request","status":499}`,
		`{"level":"INFO","msg":"request","status":503,"operation":"create-ai-model"}`,
		`not json`,
		`{"level":"ERROR","msg":"internal error","request_id":"req_X"}`,
		`{"level":"INFO","msg":"request","status":409}`,
	}
	if err := os.WriteFile(path, []byte(earlier+strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := []string{lines[2], lines[4], lines[5]}
	if d := cmp.Diff(want, refusedLines(path, int64(len(earlier)))); d != "" {
		t.Errorf("refusedLines (-want +got):\n%s", d)
	}
}
