package api_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

func TestHealthz_ServedWhileTheAPIIsOff(t *testing.T) {
	e := apitest.New(t, apitest.Options{Disabled: true})
	if r := e.Do("GET", "/api/v1/meta", "", nil); r.Status != 404 {
		t.Fatalf("API off: /api/v1/meta %d", r.Status)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		r := e.Do("GET", path, "", nil)
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	if d := cmp.Diff(map[string]any{"status": "ok"}, e.Do("GET", "/healthz", "", nil).JSON(t)); d != "" {
		t.Fatal(d)
	}
	want := map[string]any{"status": "ready", "database": "ok", "migrations": "ok"}
	if d := cmp.Diff(want, e.Do("GET", "/readyz", "", nil).JSON(t)); d != "" {
		t.Fatal(d)
	}
}

func TestReadyz_MigrationMissing_503Pending(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	var name string
	db := e.Store.DB()
	ctx := context.Background()
	if err := db.NewRaw("DELETE FROM bun_migrations WHERE id = (SELECT max(id) FROM bun_migrations) RETURNING name").
		Scan(ctx, &name); err != nil {
		t.Fatal(err)
	}
	r := e.Do("GET", "/readyz", "", nil)
	got := r.JSON(t)
	pending, _ := got["pending"].([]any)
	if len(pending) != 1 || !strings.HasPrefix(pending[0].(string), name+"_") {
		t.Fatalf("pending %v, want the migration %s", pending, name)
	}
	delete(got, "pending")
	want := map[string]any{"status": "not_ready", "database": "ok", "migrations": "pending"}
	if d := cmp.Diff(want, got); r.Status != 503 || d != "" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("%d %s", r.Status, d)
	}
}

// TestReadyz_DatabaseBlocked_503WithinTheBound holds a lock the readiness
// query needs: the probe answers 503 after its one-second bound, not when
// the lock goes.
func TestReadyz_DatabaseBlocked_503WithinTheBound(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	tx, err := e.Store.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "LOCK TABLE bun_migrations IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := e.Do("GET", "/readyz", "", nil)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("readyz waited %v", took)
	}
	want := map[string]any{"status": "not_ready", "database": "unreachable", "migrations": "unknown"}
	if d := cmp.Diff(want, r.JSON(t)); r.Status != 503 || d != "" {
		t.Fatalf("%d %s", r.Status, d)
	}
	if h := e.Do("GET", "/healthz", "", nil); h.Status != 200 {
		t.Fatalf("healthz while the database is blocked: %d", h.Status)
	}
}

func TestMetrics_RequestsRefusalsReplaysAndLatency(t *testing.T) {
	e := apitest.New(t, apitest.Options{Limiter: api.NewLocalLimiter(3, nil)}) // 3 units per token
	tok, other := e.Token(resources.PermTenancyWrite), e.Token(resources.PermTenancyRead)
	e.Do("GET", "/api/v1/whoami", tok, nil)
	e.Do("GET", "/api/v1/whoami", "", nil)
	e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "m1")
	e.Do("POST", "/api/v1/customers", tok, acme(), "Idempotency-Key", "m1")
	for range 4 {
		e.Do("GET", "/api/v1/meta", other, nil)
	}
	r := e.Do("GET", "/metrics", "", nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	text := string(r.Body)
	for _, want := range []string{
		`platformapi_http_requests_total{operation="get-whoami",status="200"} 1`,
		`platformapi_http_requests_total{operation="get-whoami",status="401"} 1`,
		`platformapi_http_requests_total{operation="create-customer",status="201"} 2`,
		`platformapi_http_requests_total{operation="get-meta",status="429"} 1`,
		`platformapi_http_request_duration_seconds_count{operation="get-meta"} `,
		`platformapi_idempotency_replays_total 1`,
		`platformapi_rate_limit_refusals_total 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestMetrics_BackgroundJobsFinished(t *testing.T) {
	e, tok := projectEnv(t)
	activeProject(t, e, tok, "", nil)
	want := `platformapi_jobs_finished_total{kind="` + resources.OpKindProjectProvision + `",outcome="completed"} 1`
	var text string
	testkit.Eventually(t, 5*time.Second, "/metrics counts the finished job", func() bool {
		text = string(e.Do("GET", "/metrics", "", nil).Body)
		return strings.Contains(text, want)
	})
	for _, w := range []string{want, `platformapi_job_run_seconds_count{kind="` + resources.OpKindProjectProvision + `"} 1`} {
		if !strings.Contains(text, w) {
			t.Errorf("/metrics lacks %q", w)
		}
	}
}

// TestMetrics_OperationLabelIsAlwaysAName: plain routes (the OpenAPI
// document, the docs page and its assets) are counted under kebab-case
// names like operations, never under a path.
func TestMetrics_OperationLabelIsAlwaysAName(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	for _, path := range []string{"/api/v1/openapi.json", "/api/v1/openapi.yaml", "/api/v1/docs",
		"/api/v1/whoami", "/nowhere"} {
		e.Do("GET", path, "", nil)
	}
	text := string(e.Do("GET", "/metrics", "", nil).Body)
	for _, want := range []string{`operation="openapi-json"`, `operation="openapi-yaml"`,
		`operation="docs"`, `operation="get-whoami"`, `operation="unmatched"`} {
		if !strings.Contains(text, "platformapi_http_requests_total{"+want) {
			t.Errorf("/metrics lacks requests with %s", want)
		}
	}
	label := regexp.MustCompile(`platformapi_http_requests_total\{operation="([^"]*)"`)
	for _, m := range label.FindAllStringSubmatch(text, -1) {
		if !regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(m[1]) {
			t.Errorf("operation label %q is not a name", m[1])
		}
	}
}
