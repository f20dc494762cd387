package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestServeDemo_EmbeddedClusterAdminTokenAndCleanStop runs `serve --demo`
// with no DATABASE_URL: the private cluster is created from the system's
// PostgreSQL binaries, the printed admin token works, and a cancelled
// context stops the server and the cluster.
func TestServeDemo_EmbeddedClusterAdminTokenAndCleanStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	t.Setenv("DATABASE_URL", "")
	t.Setenv("PLATFORMAPI_TOKEN_PEPPER", "")
	dir := t.TempDir()
	addr := freeAddr(t)
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		root := newRootCommand(pw, io.Discard)
		root.SetArgs([]string{"serve", "--demo", "--addr", addr, "--data-dir", dir})
		done <- root.ExecuteContext(ctx)
		_ = pw.Close()
	}()
	var demo struct {
		Token string `json:"token"`
	}
	line, err := bufio.NewReader(pr).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &demo) != nil || demo.Token == "" {
		t.Fatalf("no demo line with a token: %v %q", err, line)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	who := waitWhoami(t, addr, demo.Token)
	if who["principal"].(map[string]any)["email"] != "admin@demo.example" {
		t.Fatalf("whoami: %v", who)
	}
	nodes := getJSON(t, addr, demo.Token, "/api/v1/ai/nodes")
	if items := nodes["items"].([]any); len(items) != 4 || nodes["monitoring_reachable"] != true {
		t.Fatalf("demo world nodes: %v", nodes)
	}
	if models := getJSON(t, addr, demo.Token, "/api/v1/ai/models")["items"].([]any); len(models) != 2 {
		t.Fatalf("demo world models: %v", models)
	}
	if _, err := os.Stat(filepath.Join(dir, "token-pepper")); err != nil {
		t.Fatalf("pepper not generated into the data dir: %v", err)
	}
	// A portal command beside the running server uses its cluster and pepper.
	var out bytes.Buffer
	portal := newRootCommand(&out, io.Discard)
	portal.SetArgs([]string{"--data-dir", dir, "portal", "token", "create", "--as", "admin@demo.example",
		"--name", "second", "--scopes", "audit-read-global"})
	if err := portal.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("portal beside serve: %v", err)
	}
	var minted struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal(out.Bytes(), &minted)
	if waitWhoami(t, addr, minted.Token)["scopes"].([]any)[0] != "audit-read-global" {
		t.Fatal("token minted beside the server does not work")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop")
	}
	if _, err := os.Stat(filepath.Join(dir, "pgdata", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("cluster still running: %v", err)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitWhoami(t *testing.T, addr, token string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			defer res.Body.Close()
			var m map[string]any
			if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&m) != nil {
				t.Fatalf("whoami status %d", res.StatusCode)
			}
			return m
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("server never answered")
	return nil
}

func getJSON(t *testing.T, addr, token, path string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&m) != nil {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	return m
}
