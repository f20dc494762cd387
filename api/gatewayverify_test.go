package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

const verifyPath = resources.GatewayVerifyPath

// verifyHeaders are the answer headers of a verify that matter to a
// gateway, absent ones as "".
func verifyHeaders(r *apitest.Response) map[string]string {
	out := map[string]string{}
	for _, h := range []string{resources.GatewayKeyIDHeader, resources.GatewayKeyNameHeader,
		resources.GatewayTierHeader, "RateLimit-Limit"} {
		out[h] = r.Header.Get(h)
	}
	return out
}

func TestGatewayVerify_LiveKey_200EmptyBodyWithKeyHeadersForAnyMethod(t *testing.T) {
	e, tok := aiEnv(t)
	tiered := createKey(t, e, tok, map[string]any{"name": "ci runner", "tier": "pro", "return_value": true})
	plain := createKey(t, e, tok, map[string]any{"name": "no-tier", "return_value": true})
	for _, c := range []struct {
		name, method string
		key          map[string]any
		want         map[string]string
		below        string // a path below verify's
	}{
		{"with tier, GET", "GET", tiered, map[string]string{resources.GatewayKeyIDHeader: tiered["id"].(string),
			resources.GatewayKeyNameHeader: "ci runner", resources.GatewayTierHeader: "pro",
			"RateLimit-Limit": ""}, ""},
		{"with tier, POST (the gateway forwards the client's method)", "POST", tiered, map[string]string{
			resources.GatewayKeyIDHeader: tiered["id"].(string), resources.GatewayKeyNameHeader: "ci runner",
			resources.GatewayTierHeader: "pro", "RateLimit-Limit": ""}, ""},
		{"below the path (Envoy's path_prefix)", "POST", tiered, map[string]string{
			resources.GatewayKeyIDHeader: tiered["id"].(string), resources.GatewayKeyNameHeader: "ci runner",
			resources.GatewayTierHeader: "pro", "RateLimit-Limit": ""},
			"/v1/chat/completions"},
		{"without tier: no tier header", "PUT", plain, map[string]string{
			resources.GatewayKeyIDHeader: plain["id"].(string), resources.GatewayKeyNameHeader: "no-tier",
			resources.GatewayTierHeader: "", "RateLimit-Limit": ""}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do(c.method, verifyPath+c.below, c.key["value"].(string), nil)
			if r.Status != 200 || len(r.Body) != 0 {
				t.Fatalf("status %d, body %q", r.Status, r.Body)
			}
			if diff := cmp.Diff(c.want, verifyHeaders(r)); diff != "" {
				t.Fatalf("headers (-want +got):\n%s", diff)
			}
			if _, has := r.Header[resources.GatewayTierHeader]; has != (c.want[resources.GatewayTierHeader] != "") {
				t.Fatalf("tier header present: %v", has)
			}
		})
	}
}

// refusal is the problem document verify answers, without its request id.
func refusal(code, detail string) map[string]any {
	return map[string]any{"type": "urn:svc:api:problem:" + code, "title": "Unauthorized", "status": float64(401),
		"code": code, "detail": detail, "instance": verifyPath}
}

func TestGatewayVerify_NoLiveKey_401ProblemWithWWWAuthenticate(t *testing.T) {
	e, tok := aiEnv(t)
	revoked := createKey(t, e, tok, map[string]any{"name": "revoked", "return_value": true})
	rotated := createKey(t, e, tok, map[string]any{"name": "rotated", "return_value": true})
	for _, k := range []map[string]any{revoked, rotated} { // live first: the view held them
		if _, ok := verifyKey(t, e, k["value"].(string)); !ok {
			t.Fatalf("key %s does not open before its change", k["name"])
		}
	}
	if r := e.Do("DELETE", "/api/v1/ai/gateway/keys/"+revoked["id"].(string), tok, nil); r.Status != 204 {
		t.Fatalf("revoke: %d", r.Status)
	}
	if r := e.Do("POST", "/api/v1/ai/gateway/keys/"+rotated["id"].(string)+"/rotate", tok, nil); r.Status != 200 {
		t.Fatalf("rotate: %d", r.Status)
	}
	expiring := createKey(t, e, tok, map[string]any{"name": "expiring", "return_value": true,
		"expires_at": e.Clock.Now().Add(time.Hour).Format(time.RFC3339)})
	e.Clock.Advance(time.Hour)
	required := refusal(resources.CodeGatewayKeyRequired, "send the gateway key as Authorization: Bearer <gateway key>")
	invalid := refusal(resources.CodeGatewayKeyInvalid, "the gateway key is malformed, unknown, revoked or was rotated away")
	for _, c := range []struct {
		name, authorization string
		want                map[string]any
	}{
		{"missing", "", required},
		{"another scheme", "Basic " + revoked["value"].(string), required},
		{"bearer without a value", "Bearer  ", required},
		{"malformed", "Bearer sk-gw-short", invalid},
		{"an API token", "Bearer " + tok, invalid},
		{"unknown", "Bearer " + resources.NewGatewayKeyValue(), invalid},
		{"revoked", "Bearer " + revoked["value"].(string), invalid},
		{"rotated away", "Bearer " + rotated["value"].(string), invalid},
		{"expired (at its expires_at)", "Bearer " + expiring["value"].(string),
			refusal(resources.CodeGatewayKeyExpired, "the gateway key has expired")},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.Do("GET", verifyPath, "", nil, "Authorization", c.authorization)
			m := assertProblem(t, r, 401, c.want["code"].(string))
			delete(m, "request_id")
			if diff := cmp.Diff(c.want, m); diff != "" {
				t.Fatalf("problem (-want +got):\n%s", diff)
			}
			challenge := `Bearer realm="platformapi", error="invalid_token"`
			if c.want["code"] == resources.CodeGatewayKeyRequired {
				challenge = `Bearer realm="platformapi"` // no credential, no error (RFC 6750, 3.1)
			}
			if got := r.Header.Get("WWW-Authenticate"); got != challenge {
				t.Fatalf("WWW-Authenticate %q, want %q", got, challenge)
			}
			if h := verifyHeaders(r); h[resources.GatewayKeyIDHeader] != "" || h[resources.GatewayKeyNameHeader] != "" {
				t.Fatalf("a refusal names a key: %v", h)
			}
		})
	}
}

// countingLimiter counts the rate-limit decisions asked for.
type countingLimiter struct {
	api.RateLimiter
	n atomic.Int64
}

func (c *countingLimiter) Take(ctx context.Context, key string, cost int) (api.RateDecision, error) {
	c.n.Add(1)
	return c.RateLimiter.Take(ctx, key, cost)
}

func TestGatewayVerify_APIOffAndFailures_NoRateUnitsNoFailedAuthLimitNoSwitch(t *testing.T) {
	lim := &countingLimiter{RateLimiter: api.NewLocalLimiter(api.RatePerMinute, time.Now)}
	e := apitest.New(t, apitest.Options{Limiter: lim})
	tok := e.Token(resources.PermAIGatewayKeys)
	value := createKey(t, e, tok, map[string]any{"name": "k", "return_value": true})["value"].(string)
	before := lim.n.Load()
	// More refusals than the failed-authentication limit of one address (60 a minute).
	for range api.AuthFailuresPerMinute + 10 {
		assertProblem(t, e.Do("POST", verifyPath, resources.NewGatewayKeyValue(), nil), 401,
			resources.CodeGatewayKeyInvalid)
	}
	if r := e.Do("GET", verifyPath, value, nil); r.Status != 200 {
		t.Fatalf("live key after many refusals: %d %s", r.Status, r.Body)
	}
	if n := lim.n.Load(); n != before {
		t.Fatalf("verify asked the rate limiter %d times", n-before)
	}
	if r := e.Do("GET", "/api/v1/meta", tok, nil); r.Status != 200 {
		t.Fatalf("the address's API requests after verify refusals: %d", r.Status)
	}
	var doc struct{ Paths map[string]any }
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil || len(doc.Paths) == 0 {
		t.Fatalf("openapi.json: %v", err)
	}
	for path := range doc.Paths {
		if strings.Contains(path, "ai-gateway") {
			t.Fatalf("verify is in the OpenAPI document of /api/v1: %s", path)
		}
	}
	if _, err := e.Portal.SetAPIEnabled(context.Background(), resources.Actor{Label: apitest.AdminEmail}, false); err != nil {
		t.Fatal(err)
	}
	assertProblem(t, e.Do("GET", "/api/v1/meta", tok, nil), 404, resources.CodeNotFound)
	if r := e.Do("GET", verifyPath, value, nil); r.Status != 200 {
		t.Fatalf("verify while the API is off: %d %s", r.Status, r.Body)
	}
}

func TestGatewayVerify_ClientOutsideAllowedNetworks_404LikeEveryPath(t *testing.T) {
	e := apitest.New(t, apitest.Options{Networks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	k, err := e.Store.CreateGatewayKey(context.Background(), resources.Actor{Label: "ops:test"},
		resources.NewGatewayKey{Name: "k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := assertProblem(t, e.Do("GET", "/healthz", "", nil), 404, resources.CodeNotFound)
	got := assertProblem(t, e.Do("GET", verifyPath, k.Value, nil), 404, resources.CodeNotFound)
	for _, m := range []map[string]any{elsewhere, got} {
		delete(m, "request_id")
		delete(m, "instance")
		delete(m, "detail") // names the path
	}
	if diff := cmp.Diff(elsewhere, got); diff != "" {
		t.Fatalf("verify's 404 differs from another path's (-other +verify):\n%s", diff)
	}
}

func TestGatewayVerify_AccessLog_DebugLineWithoutTheKeyValue(t *testing.T) {
	e := apitest.New(t, apitest.Options{LogLevel: slog.LevelDebug})
	tok := e.Token(resources.PermAIGatewayKeys)
	value := createKey(t, e, tok, map[string]any{"name": "k", "return_value": true})["value"].(string)
	unknown := resources.NewGatewayKeyValue()
	e.Do("GET", verifyPath, value, nil)
	e.Do("GET", verifyPath, unknown, nil)
	e.Do("GET", verifyPath, "", nil, "Authorization", "Bearer sk-gw-not-a-key")
	logs := e.LogText()
	for _, secret := range []string{value, unknown, "sk-gw-not-a-key", value[6:20]} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a presented key value is in the server log")
		}
	}
	var lines int
	for line := range strings.Lines(logs) {
		if strings.Contains(line, `"operation":"ai-gateway-verify"`) {
			lines++
			if !strings.Contains(line, `"level":"DEBUG"`) {
				t.Fatalf("verify logged above debug: %s", line)
			}
		}
	}
	if lines != 3 {
		t.Fatalf("%d access lines for 3 verifies", lines)
	}
}

func TestGatewayVerify_LastUsedAt_WrittenByTheFlushWithoutAuditOrUpdate(t *testing.T) {
	e, tok := aiEnv(t)
	k := createKey(t, e, tok, map[string]any{"name": "k", "return_value": true})
	path := "/api/v1/ai/gateway/keys/" + k["id"].(string)
	if m := e.Do("GET", path, tok, nil).JSON(t); m["last_used_at"] != nil {
		t.Fatalf("a new key was used: %v", m)
	}
	events := count(t, e, "SELECT count(*) FROM audit_events")
	e.Clock.Advance(time.Minute)
	usedAt := e.Clock.Now().UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)
	if r := e.Do("GET", verifyPath, k["value"].(string), nil); r.Status != 200 {
		t.Fatalf("verify: %d", r.Status)
	}
	var read map[string]any
	testkit.Eventually(t, 0, "last_used_at written", func() bool {
		read = e.Do("GET", path, tok, nil).JSON(t)
		return read["last_used_at"] != nil
	})
	if read["last_used_at"] != usedAt {
		t.Fatalf("last_used_at %v, want %s", read["last_used_at"], usedAt)
	}
	want := map[string]any{}
	for name, v := range k {
		if name != "value" {
			want[name] = v
		}
	}
	want["last_used_at"] = usedAt
	if diff := cmp.Diff(want, read); diff != "" {
		t.Fatalf("the key changed beyond last_used_at (-want +got):\n%s", diff)
	}
	if n := count(t, e, "SELECT count(*) FROM audit_events"); n != events {
		t.Fatalf("a use wrote %d audit events", n-events)
	}
}

func TestGatewayKeys_ExpiresAt_FutureOnlyShownFilteredAndExpiredStatus(t *testing.T) {
	e, tok := aiEnv(t)
	for _, at := range []string{e.Clock.Now().Add(-time.Second).Format(time.RFC3339), "tomorrow"} {
		m := assertProblem(t, e.Do("POST", "/api/v1/ai/gateway/keys", tok, map[string]any{"name": "k",
			"expires_at": at}), 422, resources.CodeValidationFailed)
		if m["field"] != "expires_at" {
			t.Fatalf("%s: field %v", at, m["field"])
		}
	}
	expiresAt := e.Clock.Now().Add(time.Hour).UTC().Truncate(time.Second)
	soon := createKey(t, e, tok, map[string]any{"name": "soon", "expires_at": expiresAt.Format(time.RFC3339)})
	never := createKey(t, e, tok, map[string]any{"name": "never", "expires_at": nil})
	if soon["expires_at"] != expiresAt.Format(time.RFC3339) || soon["status"] != "active" || never["expires_at"] != nil {
		t.Fatalf("created: %v / %v", soon, never)
	}
	listed := func(query string) string {
		var ids []string
		for _, it := range e.Do("GET", "/api/v1/ai/gateway/keys"+query, tok, nil).JSON(t)["items"].([]any) {
			ids = append(ids, it.(map[string]any)["id"].(string)+":"+it.(map[string]any)["status"].(string))
		}
		return strings.Join(ids, ",")
	}
	if got := listed("?status=active"); got != soon["id"].(string)+":active,"+never["id"].(string)+":active" {
		t.Fatalf("active before expiry: %s", got)
	}
	e.Clock.Advance(time.Hour)
	for query, want := range map[string]string{"?status=active": never["id"].(string) + ":active",
		"?status=expired": soon["id"].(string) + ":expired", "?status=revoked": ""} {
		if got := listed(query); got != want {
			t.Errorf("%s after expiry: %s, want %s", query, got, want)
		}
	}
	audit, _ := auditItems(t, e, tok, "?entity_type=ai_gateway_key&limit=1")
	if after := audit[0]["after_state"].(map[string]any); after["expires_at"] != nil || after["name"] != "never" {
		t.Fatalf("audit state of the last create: %v", after)
	}
}

func TestGatewayVerify_WithoutChangeFeed_ReloadEveryRecheckAndOnResync(t *testing.T) {
	for _, c := range []struct {
		name    string
		recheck time.Duration
		resync  bool
	}{{"periodic reload", 200 * time.Millisecond, false}, {"resync", time.Hour, true}} {
		t.Run(c.name, func(t *testing.T) {
			e := apitest.New(t, apitest.Options{NoChangeFeed: true, ViewRecheck: c.recheck})
			tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "k", AllowDestroy: true,
				Scopes: []string{resources.PermAIGatewayKeys}})
			k := createKey(t, e, tok, map[string]any{"name": "k", "return_value": true})
			status := func() int { return e.Do("GET", verifyPath, k["value"].(string), nil).Status }
			if c.resync {
				if got := status(); got != 401 {
					t.Fatalf("without a feed nor a resync the new key answered %d", got)
				}
				e.Server.Resync()
			}
			testkit.Eventually(t, 0, "the created key opens", func() bool { return status() == http.StatusOK })
			if r := e.Do("DELETE", "/api/v1/ai/gateway/keys/"+k["id"].(string), tok, nil); r.Status != 204 {
				t.Fatalf("revoke: %d", r.Status)
			}
			if c.resync {
				e.Server.Resync()
			}
			testkit.Eventually(t, 0, "the revoked key is refused", func() bool { return status() == http.StatusUnauthorized })
		})
	}
}

// TestGatewayVerify_AuthorizationSentTwice_401GatewayKeyInvalid: a request
// carries one credential (RFC 9110), as the API and the node agent hold it;
// sent twice, verify refuses whichever comes first instead of opening the
// gateway on the first while the upstream may read the other.
func TestGatewayVerify_AuthorizationSentTwice_401GatewayKeyInvalid(t *testing.T) {
	e, tok := aiEnv(t)
	key := createKey(t, e, tok, map[string]any{"name": "live", "return_value": true})
	live := key["value"].(string)
	other := resources.NewGatewayKeyValue()
	for _, pair := range [][2]string{{live, other}, {other, live}, {live, live}} {
		res, body := getWithTwoCredentials(t, e, verifyPath, pair)
		if res.StatusCode != 401 || !strings.Contains(body, `"code":"gateway_key_invalid"`) ||
			!strings.Contains(body, "one Authorization header") ||
			res.Header.Get(resources.GatewayKeyIDHeader) != "" {
			t.Fatalf("%d %v %s", res.StatusCode, res.Header, body)
		}
	}
}
