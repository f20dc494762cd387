package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// endlessJSON is a body that never ends by itself: a JSON string member
// growing until limit bytes were read; read counts what the server took.
type endlessJSON struct {
	read  atomic.Int64
	limit int64
}

func (b *endlessJSON) Read(p []byte) (int, error) {
	n := b.read.Load()
	if n >= b.limit {
		return 0, io.EOF
	}
	if n == 0 {
		return copy(p, `{"short_name":"ACME","notes":"`), nil
	}
	for i := range p {
		p[i] = 'x'
	}
	m := min(int64(len(p)), b.limit-n)
	b.read.Add(m)
	return int(m), nil
}

// doWithin sends req and fails the test when no answer comes within d (a
// hang, not a speed measurement).
func doWithin(t *testing.T, e *apitest.Env, req *http.Request, d time.Duration) *apitest.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), d)
	defer cancel()
	res, err := e.HTTP.Client().Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s %s: no answer within %s: %v", req.Method, req.URL.Path, d, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return &apitest.Response{Status: res.StatusCode, Header: res.Header, Body: raw}
}

func TestHarden_KeyedBodyOver1MiB_413AndNotReadOn(t *testing.T) {
	for _, path := range []string{"/api/v1/customers"} { // /mcp: tools.TestMCP_Body*
		t.Run(path, func(t *testing.T) {
			e, tok := customerEnv(t)
			body := &endlessJSON{limit: 100 << 20}                                   // 100 MB, sent chunked (no length)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // fail, never hang
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", e.HTTP.URL+path, io.NopCloser(body))
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "big")
			res, err := e.HTTP.Client().Do(req)
			if err == nil {
				defer res.Body.Close()
				if res.StatusCode != 413 {
					t.Fatalf("status %d", res.StatusCode)
				}
			}
			if n := body.read.Load(); n > 8<<20 {
				t.Fatalf("the server read %d MB of a 100 MB body", n>>20)
			}
		})
	}
}

func TestHarden_DeclaredLengthOver1MiB_413WithoutReading(t *testing.T) {
	e, tok := customerEnv(t)
	req, _ := http.NewRequest("POST", e.HTTP.URL+"/api/v1/customers", strings.NewReader(strings.Repeat(" ", 2<<20)))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "big")
	assertProblem(t, doWithin(t, e, req, 20*time.Second), 413, "body_too_large")
	if r := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "big"); r.Status != 201 {
		t.Fatalf("the key must stay free: %d %s", r.Status, r.Body)
	}
}

func TestHarden_SlowBody_CutOffWith408(t *testing.T) {
	e := apitest.New(t, apitest.Options{BodyReadTimeout: 300 * time.Millisecond})
	tok := e.Token(resources.PermTenancyWrite)
	for _, key := range []string{"", "slow"} {
		t.Run("key="+key, func(t *testing.T) {
			res := stallBody(t, e, tok, key)
			if res.StatusCode != http.StatusRequestTimeout || res.Header.Get("Retry-After") != "0" {
				t.Fatalf("status %d, Retry-After %q (send it again at once: 0)", res.StatusCode,
					res.Header.Get("Retry-After"))
			}
		})
	}
}

// stallBody sends POST /customers as tok (with Idempotency-Key key unless
// "") whose body stops after its first bytes, and returns the answer.
func stallBody(t *testing.T, e *apitest.Env, tok, key string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.HTTP.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := "POST /api/v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tok +
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
	if key != "" {
		head += "Idempotency-Key: " + key + "\r\n"
	}
	fmt.Fprint(conn, head+"\r\n"+`{"short_name":`) // then nothing more
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v\n%s", err, e.LogText())
	}
	return res
}

// lockTable takes an ACCESS EXCLUSIVE lock on table in a transaction held
// until the test ends.
func lockTable(t *testing.T, e *apitest.Env, table string) {
	t.Helper()
	tx, err := e.Store.DB().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.ExecContext(context.Background(), "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
}

func TestHarden_LockedTable_503StatementTimeoutOthersUnaffected(t *testing.T) {
	e := apitest.New(t, apitest.Options{StatementTimeout: 300 * time.Millisecond})
	tok := e.Token(resources.PermTenancyRead)
	lockTable(t, e, "customers")
	get := func(path, token string) *apitest.Response {
		req, _ := http.NewRequest("GET", e.HTTP.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		return doWithin(t, e, req, 10*time.Second)
	}
	r := get("/api/v1/customers", tok)
	assertProblem(t, r, 503, "unavailable")
	if r.Header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if r := get("/api/v1/whoami", tok); r.Status != 200 {
		t.Fatalf("whoami: %d %s", r.Status, r.Body)
	}
}

func TestHarden_SettingsLocked_NoDatabasePathsStillAnswer(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	tok := e.Token(resources.PermTenancyRead)
	if r := e.Do("GET", "/api/v1/meta", tok, nil); r.Status != 200 { // the switch is read once
		t.Fatalf("meta: %d", r.Status)
	}
	lockTable(t, e, "platform_settings")
	e.Clock.Advance(2 * time.Second) // the cached switch is stale: re-read in the background
	for _, c := range []struct {
		path, token string
		status      int
	}{
		{"/api/v1/openapi.json", "", 200},
		{"/api/v1/docs", "", 200},
		{"/api/v1/no-such-path", "", 404},
		{"/api/v1/whoami", "svc_pat_malformed", 401},
		{"/api/v1/whoami", tok, 200},
	} {
		req, _ := http.NewRequest("GET", e.HTTP.URL+c.path, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		if r := doWithin(t, e, req, 5*time.Second); r.Status != c.status {
			t.Fatalf("%s: %d, want %d: %s", c.path, r.Status, c.status, r.Body)
		}
	}
}

func TestHarden_RequestDeadline_503WhenTheDatabaseHolds(t *testing.T) {
	e := apitest.New(t, apitest.Options{RequestTimeout: 500 * time.Millisecond})
	tok := e.Token(resources.PermTenancyRead)
	lockTable(t, e, "customers")
	req, _ := http.NewRequest("GET", e.HTTP.URL+"/api/v1/customers", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	r := doWithin(t, e, req, 10*time.Second)
	assertProblem(t, r, 503, "unavailable")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}

func TestHarden_DatabaseOutage_503WithRetryAfterFromTheFirstRequest(t *testing.T) {
	e := apitest.New(t, apitest.Options{Proxy: true})
	tok := e.Token(resources.PermTenancyRead, resources.PermTenancyWrite)
	createCustomer(t, e, tok, acme())
	e.Proxy.Cut() // open connections break, new ones are refused
	for i, c := range []struct{ method, path string }{
		{"GET", "/api/v1/customers"}, {"GET", "/api/v1/customers/1"}, {"POST", "/api/v1/customers"},
		{"GET", "/api/v1/whoami"}, {"GET", "/api/v1/customers"},
	} {
		var body any
		if c.method == "POST" {
			body = acme("short_name", "OTHER", "vcs_group", "other")
		}
		r := e.Do(c.method, c.path, tok, body)
		assertProblem(t, r, 503, "unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Fatalf("request %d: no Retry-After", i)
		}
	}
	e.Proxy.Restore()
	if r := e.Do("GET", "/api/v1/customers", tok, nil); r.Status != 200 {
		t.Fatalf("after the outage: %d %s", r.Status, r.Body)
	}
}

func TestHarden_FailedAuthenticationsPerAddress_429WithoutLookups(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	good := e.Token(resources.PermAIRead)
	revoked := e.Token(resources.PermAIRead)
	id := tokenID(t, e, revoked)
	if _, err := e.Portal.RevokeToken(context.Background(), resources.Actor{Label: apitest.AdminEmail}, parseInt(t, id)); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		if r := e.Do("GET", "/api/v1/meta", revoked, nil); r.Status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	before := e.Lookups.Count()
	for range 100 {
		r := e.Do("GET", "/api/v1/meta", revoked, nil)
		assertProblem(t, r, 429, "rate_limited")
		if r.Header.Get("Retry-After") == "" {
			t.Fatal("no Retry-After")
		}
	}
	if n := e.Lookups.Count() - before; n != 0 {
		t.Fatalf("%d token lookups while the address was refused", n)
	}
	assertProblem(t, e.Do("GET", "/api/v1/meta", "svc_pat_malformed", nil), 401, "token_invalid")
	e.Clock.Advance(time.Minute)
	if r := e.Do("GET", "/api/v1/meta", good, nil); r.Status != 200 {
		t.Fatalf("after a minute: %d %s", r.Status, r.Body)
	}
}

// Issue 18, R9: a 503 on a keyed POST wrote two ERROR lines with the same
// request id. One failure, one ERROR line. The request's first run is
// refused (ACME exists), so the key is claimed, and the database goes away
// before the run under the claimed key.
func TestHarden_DatabaseOutage_KeyedPOSTLogsOneErrorLine(t *testing.T) {
	var e *apitest.Env
	e = apitest.New(t, apitest.Options{Proxy: true, Idempotency: func(st resources.Idempotency) resources.Idempotency {
		return cutAfterBegin{Idempotency: st, cut: func() { e.Proxy.Cut() }}
	}})
	tok := e.Token(resources.PermTenancyRead, resources.PermTenancyWrite)
	createCustomer(t, e, tok, acme())
	r := e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "outage-1", "X-Request-ID", "outage-req-1")
	assertProblem(t, r, 503, "unavailable")
	e.Proxy.Restore()
	n := 0
	for _, line := range strings.Split(e.LogText(), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) && strings.Contains(line, "outage-req-1") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d ERROR lines for one failed request:\n%s", n, e.LogText())
	}
}

// cutAfterBegin is the real idempotency keeping with the database cut off
// right after a key is leased: the request then fails, and so does the
// key's release.
type cutAfterBegin struct {
	resources.Idempotency
	cut func()
}

// Begin leases the key, then cuts the database off.
func (c cutAfterBegin) Begin(ctx context.Context, req resources.IdempotencyRequest) (resources.Begun, error) {
	b, err := c.Idempotency.Begin(ctx, req)
	c.cut()
	return b, err
}

// Issue 18, R1: once an address spent its failed authentications, valid
// tokens from it were refused too (a proxy's or a NAT's clients all locked
// out by one). The limit guards lookups of tokens that are not live; a live
// token is still served, also once its cache entry needs a re-check (then
// with a lookup). TestAuthFailures_… covers new, idle and revoked tokens.
func TestHarden_FailedAuthenticationsPerAddress_ValidTokenStillServed(t *testing.T) {
	e := apitest.New(t, apitest.Options{CredentialCache: 30 * time.Second})
	good := e.Token(resources.PermAIRead)
	if r := e.Do("GET", "/api/v1/meta", good, nil); r.Status != 200 {
		t.Fatalf("first use: %d", r.Status)
	}
	unknown := resources.NewTokenValue(resources.TokenKindPersonal) // well formed, never minted
	for i := range 60 {
		if r := e.Do("GET", "/api/v1/meta", unknown, nil); r.Status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	assertProblem(t, e.Do("GET", "/api/v1/meta", unknown, nil), 429, "rate_limited")
	if r := e.Do("GET", "/api/v1/meta", good, nil); r.Status != 200 {
		t.Fatalf("a valid token from the refused address: %d %s", r.Status, r.Body)
	}
	e.Clock.Advance(31 * time.Second) // the cached credential needs a re-check now
	unknown = lockOut(t, e)
	before := e.Lookups.Count()
	if r := e.Do("GET", "/api/v1/meta", good, nil); r.Status != 200 || e.Lookups.Count() != before+1 {
		t.Fatalf("a valid token due for a re-check: %d, %d lookups", r.Status, e.Lookups.Count()-before)
	}
	assertProblem(t, e.Do("GET", "/api/v1/meta", unknown, nil), 429, "rate_limited")
}
