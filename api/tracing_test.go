package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"platformapi/api"
	"platformapi/api/apitest"
	"platformapi/resources"
	"platformapi/resources/prometheus"
	"platformapi/resources/tracing/tracingtest"
)

// tracedEnv starts an Env with tracing on, recording spans in memory, and
// a token holding the tenancy and project keys.
func tracedEnv(t *testing.T, o apitest.Options) (*apitest.Env, *tracingtest.Recorder, string) {
	rec := tracingtest.New(t)
	o.Tracing = rec.Tracing
	e := apitest.New(t, o)
	return e, rec, e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "traced", Scopes: []string{
		resources.PermTenancyRead, resources.PermTenancyWrite, resources.PermProjectsRead,
		resources.PermProjectsWrite, resources.PermAIRead}})
}

// serverSpan waits for the server span of the request with id requestID.
func serverSpan(t *testing.T, rec *tracingtest.Recorder, requestID string) sdktrace.ReadOnlySpan {
	t.Helper()
	return rec.Wait(t, "the server span of request "+requestID, func(s sdktrace.ReadOnlySpan) bool {
		return s.SpanKind() == trace.SpanKindServer &&
			tracingtest.Attr(s, "platformapi.request_id").AsString() == requestID
	})
}

func TestTracing_RESTGet_ServerSpanNamedAfterItsOperationWithStatusAndChildSQLSpans(t *testing.T) {
	e, rec, tok := tracedEnv(t, apitest.Options{})
	createCustomer(t, e, tok, acme("long_name", "Hushhush Industries"))
	r := e.Do("GET", "/api/v1/customers", tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	span := serverSpan(t, rec, r.Header.Get("X-Request-ID"))
	if span.Name() != "list-customers" || tracingtest.Attr(span, "http.response.status_code").AsInt64() != 200 ||
		tracingtest.Attr(span, "http.route").AsString() != api.Prefix+"/customers" ||
		tracingtest.Attr(span, "http.request.method").AsString() != "GET" ||
		tracingtest.Attr(span, "platformapi.token_id").AsString() == "" {
		t.Fatalf("server span %q: %v", span.Name(), span.Attributes())
	}
	sql := rec.Find(tracingtest.ChildOf(span.SpanContext()))
	if len(sql) == 0 || sql[0].SpanKind() != trace.SpanKindClient ||
		tracingtest.Attr(sql[0], "db.system").AsString() != "postgresql" ||
		tracingtest.Attr(sql[0], "db.statement").AsString() == "" {
		t.Fatalf("children of the server span: %v", tracingtest.Names(sql))
	}
	for _, s := range rec.Ended() { // a statement's arguments stay out of its span
		if stmt := tracingtest.Attr(s, "db.statement").AsString(); strings.Contains(stmt, "Hushhush") {
			t.Fatalf("span %q carries an argument: %s", s.Name(), stmt)
		}
	}
}

func TestTracing_IncomingTraceparent_ContinuesThatTrace(t *testing.T) {
	e, rec, tok := tracedEnv(t, apitest.Options{})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	r := e.Do("GET", "/api/v1/whoami", tok, nil, "traceparent", "00-"+traceID+"-"+parentID+"-01")
	if r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	span := serverSpan(t, rec, r.Header.Get("X-Request-ID"))
	if span.Name() != "get-whoami" || span.SpanContext().TraceID().String() != traceID ||
		span.Parent().SpanID().String() != parentID || !span.Parent().IsRemote() {
		t.Fatalf("span %q in trace %s under %s", span.Name(), span.SpanContext().TraceID(),
			span.Parent().SpanID())
	}
}

func TestTracing_ProjectProvision_JobSpanLinkedToTheRequestThatEnqueuedIt(t *testing.T) {
	e, rec, tok := tracedEnv(t, apitest.Options{})
	cid := createCustomer(t, e, tok, acme())["id"].(string)
	r := e.Do("POST", "/api/v1/projects", tok, shop(cid))
	if r.Status != http.StatusAccepted {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	apitest.PollOperation(t, e, tok, r.JSON(t)["id"].(string), "succeeded")
	post := serverSpan(t, rec, r.Header.Get("X-Request-ID"))
	work := rec.Wait(t, "the provisioning job's span",
		tracingtest.Named("river.work/"+resources.OpKindProjectProvision))
	if work.SpanKind() != trace.SpanKindConsumer || tracingtest.Attr(work, "status").AsString() != "ok" ||
		len(work.Links()) != 1 || work.Links()[0].SpanContext.TraceID() != post.SpanContext().TraceID() {
		t.Fatalf("job span %q: %v, links %v", work.Name(), work.Attributes(), work.Links())
	}
	if sql := rec.Find(tracingtest.ChildOf(work.SpanContext())); len(sql) == 0 {
		t.Fatal("the job's statements have no spans under the job's")
	}
}

func TestTracing_HotRead_GetAIModelHasItsSQLSpan(t *testing.T) {
	e, rec, _ := tracedEnv(t, apitest.Options{})
	tok := e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "ai", Scopes: []string{
		resources.PermAIRead, resources.PermAIWrite}})
	created := e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "traced/hot-read"})
	if created.Status != http.StatusCreated {
		t.Fatalf("%d %s", created.Status, created.Body)
	}
	r := e.Do("GET", "/api/v1/ai/models/"+created.JSON(t)["id"].(string), tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	get := serverSpan(t, rec, r.Header.Get("X-Request-ID"))
	sql := rec.Find(tracingtest.ChildOf(get.SpanContext()))
	for _, s := range sql {
		stmt := tracingtest.Attr(s, "db.statement").AsString()
		if s.Name() == "SELECT" && strings.Contains(stmt, `FROM "ai_models"`) && strings.Contains(stmt, "$1") {
			return
		}
	}
	t.Fatalf("no span of the catalogue read under the GET's: %v", tracingtest.Names(sql))
}

func TestTracing_Writes_AuditAndKeyStatementsHaveSQLSpansWithoutArguments(t *testing.T) {
	e, rec, tok := tracedEnv(t, apitest.Options{})
	for _, c := range []struct{ name, short, key, statement string }{
		{"plain", "PLAIN", "", "INSERT INTO audit_events (actor, action"},
		{"keyed", "KEYED", "trace-key-1", "WITH k AS (INSERT INTO idempotency_keys"},
	} {
		t.Run(c.name, func(t *testing.T) {
			secret := "Hushhush " + c.name
			var headers []string
			if c.key != "" {
				headers = []string{"Idempotency-Key", c.key}
			}
			r := e.Do("POST", "/api/v1/customers", tok, acme("short_name", c.short, "vcs_group",
				strings.ToLower(c.short), "long_name", secret), headers...)
			if r.Status != http.StatusCreated {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			post := serverSpan(t, rec, r.Header.Get("X-Request-ID"))
			var found sdktrace.ReadOnlySpan
			for _, s := range rec.Find(tracingtest.ChildOf(post.SpanContext())) {
				if strings.HasPrefix(tracingtest.Attr(s, "db.statement").AsString(), c.statement) {
					found = s
				}
			}
			if found == nil || found.SpanKind() != trace.SpanKindClient ||
				tracingtest.Attr(found, "db.system").AsString() != "postgresql" {
				t.Fatalf("no client span of %q under the POST's: %v", c.statement,
					tracingtest.Names(rec.Find(tracingtest.ChildOf(post.SpanContext()))))
			}
			for _, s := range rec.Ended() {
				if stmt := tracingtest.Attr(s, "db.statement").AsString(); strings.Contains(stmt, secret) ||
					c.key != "" && strings.Contains(stmt, c.key) {
					t.Fatalf("span %q carries an argument: %s", s.Name(), stmt)
				}
			}
		})
	}
}

// traceparentFake is a Prometheus answering an empty vector and keeping
// the traceparent of each query.
type traceparentFake struct {
	mu    sync.Mutex
	seen  []string
	serve *httptest.Server
}

func newTraceparentFake(t *testing.T) *traceparentFake {
	f := &traceparentFake{}
	f.serve = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, r.Header.Get("traceparent"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	t.Cleanup(f.serve.Close)
	return f
}

func (f *traceparentFake) traceparents() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func TestTracing_MonitoringQuery_CarriesTheRequestsTraceparent(t *testing.T) {
	fake := newTraceparentFake(t)
	rec := tracingtest.New(t)
	mon := prometheus.New(prometheus.Config{URL: fake.serve.URL, Client: rec.Tracing.Client()})
	e := apitest.New(t, apitest.Options{Tracing: rec.Tracing, Monitor: mon})
	tok := e.Token(resources.PermAIRead)
	importNodes(t, e, nodeRoster)
	r := e.Do("GET", "/api/v1/ai/nodes", tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	span := serverSpan(t, rec, r.Header.Get("X-Request-ID"))
	seen := fake.traceparents()
	if len(seen) != 1 {
		t.Fatalf("traceparents seen by monitoring: %q", seen)
	}
	carrier := propagation.MapCarrier{"traceparent": seen[0]}
	got := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(t.Context(), carrier))
	if got.TraceID() != span.SpanContext().TraceID() {
		t.Fatalf("monitoring saw trace %s, the request's is %s", got.TraceID(), span.SpanContext().TraceID())
	}
	client := rec.Wait(t, "the monitoring call's span", func(s sdktrace.ReadOnlySpan) bool {
		return s.SpanContext().SpanID() == got.SpanID()
	})
	if client.SpanKind() != trace.SpanKindClient {
		t.Fatalf("the outgoing call's span %q is of kind %v", client.Name(), client.SpanKind())
	}
}

func TestTracing_Off_NothingInstalled_NoSpanNoTraceContext(t *testing.T) {
	var mu sync.Mutex
	var seen []trace.SpanContext
	probe := func(srv *api.Server) {
		srv.Router().Get("/trace-probe", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, trace.SpanContextFromContext(r.Context()))
			mu.Unlock()
		})
	}
	rec := tracingtest.New(t)
	off := apitest.New(t, apitest.Options{Mount: probe})
	on := apitest.New(t, apitest.Options{Mount: probe, Tracing: rec.Tracing})
	if off.Server.Tracing() != nil || on.Server.Tracing() == nil {
		t.Fatalf("tracing: off %v, on %v", off.Server.Tracing(), on.Server.Tracing())
	}
	parent := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, e := range []*apitest.Env{off, on} {
		if r := e.Do("GET", "/trace-probe", "", nil, "traceparent", parent); r.Status != http.StatusOK {
			t.Fatalf("probe: %d %s", r.Status, r.Body)
		}
	}
	if len(seen) != 2 || seen[0].IsValid() || !seen[1].IsValid() ||
		seen[1].TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("trace context seen by the handler (off, on): %v", seen)
	}
	span := rec.Wait(t, "the probe's span", tracingtest.Named("trace-probe"))
	if span.SpanKind() != trace.SpanKindServer {
		t.Fatalf("probe span of kind %v", span.SpanKind())
	}
}
