package apitest

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"

	"platformapi/resources"
	"platformapi/resources/nodeagent"
)

// Agent is a real node agent of the Env, served on loopback over a cache
// directory of its own and the Env's StoreRoot.
type Agent struct {
	*nodeagent.Agent
	HTTP      *httptest.Server
	CacheRoot string
	Key       string
	// KeyFile is the agent's --key-file, holding Key; the agent reads it
	// again within a second of a change, as a real agent does.
	KeyFile string
	env     *Env
}

// StartAgent enrols the roster node host (it must be on the roster) and
// starts its agent: a node key minted by the administrator and written to
// the agent's key file, the agent serving on loopback, the node's
// agent_url pointing at it. cfg may set the agent's limits (its roots, key
// file and logger are the Env's).
func (e *Env) StartAgent(host string, cfg nodeagent.Config) *Agent {
	e.T.Helper()
	k, err := e.Portal.MintNodeKey(context.Background(), resources.Actor{Label: AdminEmail}, host)
	if err != nil {
		e.T.Fatal(err)
	}
	keyFile := filepath.Join(e.T.TempDir(), "node.key")
	if err := os.WriteFile(keyFile, []byte(k.Key+"\n"), 0o600); err != nil {
		e.T.Fatal(err)
	}
	cfg.StoreRoot, cfg.CacheRoot, cfg.Key, cfg.KeyFile = e.StoreRoot, e.T.TempDir(), "", keyFile
	a, err := nodeagent.New(cfg)
	if err != nil {
		e.T.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	e.T.Cleanup(func() { srv.Close(); _ = a.Close() })
	e.SetAgentURL(host, srv.URL)
	return &Agent{Agent: a, HTTP: srv, CacheRoot: cfg.CacheRoot, Key: k.Key, KeyFile: keyFile, env: e}
}

// Resume serves the agent again at the address it had before its HTTP
// server was closed (an agent back after a network cut or a restart).
func (a *Agent) Resume() {
	t := a.env.T
	t.Helper()
	l, err := net.Listen("tcp", a.HTTP.Listener.Addr().String())
	if err != nil {
		t.Fatalf("listen again at the agent's address: %v", err)
	}
	srv := httptest.NewUnstartedServer(a.Handler())
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	a.HTTP = srv
}

// SetKey writes key into the agent's key file, as an operator does after
// `portal node-key` printed it.
func (a *Agent) SetKey(key string) {
	a.env.T.Helper()
	if err := os.WriteFile(a.KeyFile, []byte(key+"\n"), 0o600); err != nil {
		a.env.T.Fatal(err)
	}
	a.Key = key
}

// SetAgentURL points the roster node's agent_url at url ("": none).
func (e *Env) SetAgentURL(host, url string) {
	e.T.Helper()
	var v any = url
	if url == "" {
		v = nil
	}
	if _, err := e.Store.DB().NewRaw("UPDATE ai_nodes SET agent_url = ? WHERE hostname = ?", v, host).
		Exec(context.Background()); err != nil {
		e.T.Fatal(err)
	}
}

// CentralCopy writes a model's central copy into the Env's store at
// models/<repo> (the nas_path /models/<repo>).
func (e *Env) CentralCopy(repo string, files map[string][]byte) {
	e.T.Helper()
	if err := nodeagent.WriteCentralCopy(e.StoreRoot, "models/"+repo, files); err != nil {
		e.T.Fatal(err)
	}
}
