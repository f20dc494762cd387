package api_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// beginCounter counts the keys claimed (Begin calls).
type beginCounter struct {
	resources.Idempotency
	begun atomic.Int64
}

func (b *beginCounter) Begin(ctx context.Context, r resources.IdempotencyRequest) (resources.Begun, error) {
	b.begun.Add(1)
	return b.Idempotency.Begin(ctx, r)
}

// TestIdempotency_FirstRunWritesTheKeyInTheChange_ClaimOnlyWhenTaken: the
// one protocol (resources.Idempotency): a keyed change's first run writes
// its key in its own transaction, with no claim; a retry finds the key
// written, claims it and replays; a key older than the window is taken over
// by the change's own write. Customers, AI models, tenants and gateway-key
// rotations alike.
func TestIdempotency_FirstRunWritesTheKeyInTheChange_ClaimOnlyWhenTaken(t *testing.T) {
	b := &beginCounter{}
	e := apitest.New(t, apitest.Options{Idempotency: func(st resources.Idempotency) resources.Idempotency {
		b.Idempotency = st
		return b
	}})
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "t", Scopes: []string{
		resources.PermTenancyWrite, resources.PermAIWrite, resources.PermAIRead, resources.PermAIGatewayKeys}})
	cust := createCustomer(t, e, tok, acme())["id"]
	key := createKey(t, e, tok, map[string]any{"name": "k"})["id"].(string)
	for _, c := range []struct {
		name, path string
		body       map[string]any
	}{
		{"customer", "/api/v1/customers", acme("short_name", "FRST", "vcs_group", "frst")},
		{"ai model", "/api/v1/ai/models", map[string]any{"repo": "org/first-run"}},
		{"tenant", "/api/v1/tenants", map[string]any{"customer_id": cust, "slug": "first-run", "name": "First"}},
		{"gateway key rotation", "/api/v1/ai/gateway/keys/" + key + "/rotate", map[string]any{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := c.body
			before := b.begun.Load()
			first := e.Do("POST", c.path, tok, body, "Idempotency-Key", "first-"+strings.ReplaceAll(c.name, " ", "-"))
			if first.Status >= 300 || b.begun.Load() != before {
				t.Fatalf("first run: %d %s, %d claims (want none)", first.Status, first.Body, b.begun.Load()-before)
			}
			again := e.Do("POST", c.path, tok, body, "Idempotency-Key", "first-"+strings.ReplaceAll(c.name, " ", "-"))
			if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
				t.Fatalf("retry: %d %s (replayed %q)", again.Status, again.Body, again.Header.Get("Idempotent-Replayed"))
			}
			if b.begun.Load() != before+1 {
				t.Fatalf("claims for the retry: %d, want 1", b.begun.Load()-before)
			}
		})
	}
}
