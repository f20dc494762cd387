package nodeagent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"platformapi/resources"
)

// Servers and node agents are upgraded out of step (a rolling update of the
// servers, a DaemonSet or a package per node): the server ignores the JSON
// members a newer agent adds to its answers, while the agent refuses request
// members it does not know (docs/decisions.md, "Version skew").

// TestClient_AnswersOfANewerAgent_ReadAsBefore: members a newer agent adds
// to any object of its answers (report, file system, cache, file, error,
// problem) change nothing the client reads.
func TestClient_AnswersOfANewerAgent_ReadAsBefore(t *testing.T) {
	cfg := newConfig(t)
	cfg.MaxCacheBytes = 1 << 20
	writeModel(t, cfg.StoreRoot, "models/acme/llama", model())
	writeModel(t, cfg.StoreRoot, "models/acme/big", map[string][]byte{"w.bin": randomBytes(2 << 20)})
	ta := startAgent(t, cfg)
	ta.put("acme/llama", "models/acme/llama", http.StatusAccepted)
	ta.waitState("acme/llama", resources.AgentCacheReady)
	newer := httptest.NewServer(withAddedMembers(ta.a.Handler()))
	t.Cleanup(newer.Close)
	ctx, ep := context.Background(), ta.ep
	read := func(ep resources.AgentEndpoint) (any, error) {
		rep, err := ta.client.Report(ctx, ep)
		if err != nil {
			return nil, err
		}
		c, err := ta.client.Cache(ctx, ep, "acme/llama")
		if err != nil {
			return nil, err
		}
		_, refused := ta.client.Copy(ctx, ep, "acme/big", "models/acme/big")
		return []any{rep, c, refused.Error()}, nil
	}
	want, err := read(ep)
	if err != nil {
		t.Fatalf("this agent: %v", err)
	}
	ep.URL = newer.URL
	got, err := read(ep)
	if err != nil {
		t.Fatalf("a newer agent: %v", err)
	}
	// The file system's free bytes move with every other writer on the disk.
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(resources.AgentFS{}, "FreeBytes")); diff != "" {
		t.Fatalf("read from a newer agent (-this +newer):\n%s", diff)
	}
}

// withAddedMembers answers what h answers with a member added to every
// JSON object in it, as a newer agent might.
func withAddedMembers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var v any
		body := rec.Body.Bytes()
		if json.Unmarshal(body, &v) == nil {
			body, _ = json.Marshal(addMembers(v))
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// addMembers adds a member of a newer protocol to every object in v.
func addMembers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			v[k] = addMembers(m)
		}
		v["added_by_a_newer_agent"] = map[string]any{"state": "unknown", "n": 1}
	case []any:
		for i, m := range v {
			v[i] = addMembers(m)
		}
	}
	return v
}
