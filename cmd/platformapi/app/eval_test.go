package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"platformapi/bunstore/pgtest"
	"platformapi/resources/testkit"
)

// evalCLI runs `platformapi ARGS…` in-process and returns what it printed.
func evalCLI(args ...string) (string, error) {
	var out bytes.Buffer
	root := NewRootCommand(&out, io.Discard)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

const fleetSuite = "../../../evals/suites/fleet-gpu-status.yaml"

func TestEval_AgainstTarget_JSONResultsAndFailingSuiteExits1(t *testing.T) {
	srv, err := StartEvalServer(context.Background(), Options{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out, err := evalCLI("eval", "--target", srv.URL, "--token", srv.Token, "--json", "--no-timing", fleetSuite)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var rep struct {
		Passed int `json:"passed"`
		Suites []struct {
			Runs []struct {
				Calls      int `json:"calls"`
				TokensRead int `json:"tokens_read"`
			} `json:"runs"`
		} `json:"suites"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Passed != 1 || rep.Suites[0].Runs[0].Calls != 1 {
		t.Fatalf("report %s (%v)", out, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src, _ := os.ReadFile(fleetSuite)
	_ = os.WriteFile(bad, bytes.Replace(src, []byte("len: 4"), []byte("len: 5"), 1), 0o644)
	out, err = evalCLI("eval", "--target", srv.URL, "--token", srv.Token, bad)
	if !errors.Is(err, ErrSuitesFailed) || !strings.Contains(out, "length is 4, want 5") || !strings.Contains(out, "0 passed, 1 failed") {
		t.Fatalf("failing suite: %v\n%s", err, out)
	}
	line := bytes.Count(src[:bytes.Index(src, []byte("len: 4"))], []byte("\n")) + 1
	if at := fmt.Sprintf("%s:%d: ", bad, line); !strings.Contains(out, at) { // the failing check's line
		t.Fatalf("the reason does not start with %q:\n%s", at, out)
	}
}

func TestEval_BadSuiteFile_ErrorNamesFileLineMember(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(bad, []byte("name: x\ndescription: d\nturns:\n  - user: u\n    calls:\n      - tool: get-meta\n        colour: red\n"), 0o644)
	_, err := evalCLI("eval", "--target", "http://127.0.0.1:1", "--token", "t", bad)
	if err == nil || err.Error() != bad+":7: turns[0].calls[0].colour: unknown member" {
		t.Fatalf("error %v", err)
	}
}

// TestEval_Embedded_FreshDatabaseDroppedAfterwards runs the suites the way
// the README shows, on a fresh database of the test server.
func TestEval_Embedded_FreshDatabaseDroppedAfterwards(t *testing.T) {
	admin := pgtest.AdminDSN(t)
	out, err := evalCLI("--database-url", admin, "eval", "--json", "--no-timing", fleetSuite,
		"../../../evals/suites/refusal-missing-scope.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, `"passed": 2`) {
		t.Fatalf("report %s", out)
	}
	c := &cli{t: t, dsn: admin}
	left := c.count("SELECT count(*) FROM pg_database WHERE datname LIKE 'platformapi_eval_%'")
	if left != 0 {
		t.Fatalf("%d eval databases left behind", left)
	}
}

func TestEval_OpenAIAgentNeedsBaseURLAndModel(t *testing.T) {
	_, err := evalCLI("eval", "--target", "http://127.0.0.1:1", "--token", "t", "--agent", "openai", fleetSuite)
	if err == nil || !strings.Contains(err.Error(), "--base-url and --model") {
		t.Fatalf("error %v", err)
	}
}

// TestEval_Addr_PinsTheEmbeddedServersAddress: with --addr the embedded
// server answers at that address while the suites run.
func TestEval_Addr_PinsTheEmbeddedServersAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // free again for the eval
	type result struct {
		out string
		err error
	}
	done, admin := make(chan result, 1), pgtest.AdminDSN(t)
	go func() {
		out, err := evalCLI("--database-url", admin, "eval", "--addr", addr, "--json", "--no-timing", fleetSuite)
		done <- result{out, err}
	}()
	testkit.Eventually(t, time.Minute, "the embedded server answers /healthz at "+addr, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	res := <-done
	if res.err != nil || !strings.Contains(res.out, `"passed": 1`) {
		t.Fatalf("%v\n%s", res.err, res.out)
	}
}

func TestEval_Addr_TakenAddressIsAClearError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	_, err = evalCLI("--database-url", pgtest.AdminDSN(t), "eval", "--addr", addr, fleetSuite)
	if err == nil || !strings.HasPrefix(err.Error(), "listen on "+addr+": ") ||
		!strings.Contains(err.Error(), "address already in use") ||
		!strings.HasSuffix(err.Error(), "choose another address with --addr)") {
		t.Fatalf("error %v", err)
	}
	_, err = evalCLI("eval", "--target", "http://127.0.0.1:1", "--token", "t", "--addr", addr, fleetSuite)
	if err == nil || !strings.Contains(err.Error(), "with --target no server is started") {
		t.Fatalf("--addr with --target: %v", err)
	}
}
