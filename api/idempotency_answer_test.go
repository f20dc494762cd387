package api_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
	"platformapi/resources"
)

// finishCounter counts the answers stored after a keyed request; with fail
// set, storing one fails (a crash between the commit and the stored answer).
type finishCounter struct {
	resources.Idempotency
	mu       sync.Mutex
	fail     bool
	finished int
}

func (f *finishCounter) Finish(ctx context.Context, l *resources.Lease, res resources.StoredResponse) error {
	f.mu.Lock()
	f.finished++
	fail := f.fail
	f.mu.Unlock()
	if fail {
		return context.DeadlineExceeded
	}
	return f.Idempotency.Finish(ctx, l, res)
}

func (f *finishCounter) count() int { f.mu.Lock(); defer f.mu.Unlock(); return f.finished }

func answerEnv(t *testing.T, fail bool) (*apitest.Env, string, *finishCounter) {
	f := &finishCounter{fail: fail}
	e := apitest.New(t, apitest.Options{Idempotency: func(st resources.Idempotency) resources.Idempotency {
		f.Idempotency = st
		return f
	}})
	return e, e.Token(resources.PermAIWrite, resources.PermAIRead), f
}

func TestIdempotency_AIModelCreate_AnswerKeptInTheBusinessTransaction(t *testing.T) {
	e, tok, f := answerEnv(t, true) // storing an answer after the request would fail
	body := map[string]any{"repo": "org/kept-in-tx"}
	first := e.Do("POST", "/api/v1/ai/models", tok, body, "Idempotency-Key", "tx-1")
	if first.Status != 201 {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	// No store after the request, yet a retry at once is the stored answer
	// (before, it was 429 in progress until the lease ran out).
	again := e.Do("POST", "/api/v1/ai/models", tok, body, "Idempotency-Key", "tx-1")
	if again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %d %s (replayed %q)", again.Status, again.Body, again.Header.Get("Idempotent-Replayed"))
	}
	if d := cmp.Diff(string(first.Body), string(again.Body)); d != "" {
		t.Fatalf("replayed body (-first +replay):\n%s", d)
	}
	for _, h := range []string{"Location", "Content-Type"} {
		if again.Header.Get(h) != first.Header.Get(h) {
			t.Fatalf("%s: first %q, replay %q", h, first.Header.Get(h), again.Header.Get(h))
		}
	}
	if n := f.count(); n != 0 {
		t.Fatalf("the answer was stored again after the request (%d times)", n)
	}
}

func TestIdempotency_AIModelCreate_AnswerSentDiffersFromKept_SentOneStored(t *testing.T) {
	e, tok, f := answerEnv(t, false)
	body := map[string]any{"repo": "org/other-media-type"}
	// "json" is the JSON format's short name: the answer says Content-Type:
	// json, not the application/json the transaction kept.
	first := e.Do("POST", "/api/v1/ai/models", tok, body, "Idempotency-Key", "tx-2", "Accept", "json")
	if first.Status != 201 || first.Header.Get("Content-Type") != "json" {
		t.Fatalf("first: %d %q %s", first.Status, first.Header.Get("Content-Type"), first.Body)
	}
	again := e.Do("POST", "/api/v1/ai/models", tok, body, "Idempotency-Key", "tx-2")
	if again.Header.Get("Content-Type") != "json" || string(again.Body) != string(first.Body) {
		t.Fatalf("replay: %q %s", again.Header.Get("Content-Type"), again.Body)
	}
	if n := f.count(); n != 1 {
		t.Fatalf("answers stored after the request: %d, want 1", n)
	}
}

func TestIdempotency_LeaseTakenOverDuringTheChange_ChangeRolledBack(t *testing.T) {
	e, _, _ := answerEnv(t, false)
	ctx := context.Background()
	begun, err := e.Store.Begin(ctx, resources.IdempotencyRequest{Account: "user:1", Key: "lost",
		Fingerprint: []byte("f")})
	if err != nil || begun.Lease == nil {
		t.Fatalf("begin: %+v %v", begun, err)
	}
	// A retry took the key over (the first attempt's lease ran out).
	if _, err := e.Store.DB().ExecContext(ctx, `UPDATE idempotency_keys SET lease = 'retry' WHERE id = ?`,
		begun.Lease.ID); err != nil {
		t.Fatal(err)
	}
	m, err := resources.NewAIModel(resources.AIModelCreate{Repo: "org/lost-lease"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Store.CreateAIModel(ctx, resources.Actor{Label: "system"}, m, begun.Lease)
	if e, ok := resources.AsError(err); !ok || e.Code != resources.CodeIdempotencyLeaseLost {
		t.Fatalf("create with a lost lease: %v, want idempotency_lease_lost", err)
	}
	for _, q := range []string{"SELECT count(*) FROM ai_models WHERE repo = 'org/lost-lease'",
		"SELECT count(*) FROM audit_events WHERE action = 'ai_model.create'"} {
		if n := count(t, e, q); n != 0 {
			t.Fatalf("%s: %d after a rolled-back change", q, n)
		}
	}
}

func TestIdempotency_AIModelCreate_ConcurrentIdenticalKeyedRequests_OneModelSameAnswer(t *testing.T) {
	e, tok, _ := answerEnv(t, false)
	body := map[string]any{"repo": "org/concurrent"}
	const n = 20
	answers := make([]*apitest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i] = e.Do("POST", "/api/v1/ai/models", tok, body, "Idempotency-Key", "same") })
	}
	wg.Wait()
	bodies := map[string]int{}
	for i, a := range answers {
		if a.Status == 429 { // the first still ran when this one looked: a retry gets the answer
			a = e.Do("POST", "/api/v1/ai/models", tok, body, "Idempotency-Key", "same")
		}
		if a.Status != 201 {
			t.Fatalf("answer %d: %d %s", i, a.Status, a.Body)
		}
		bodies[string(a.Body)]++
	}
	if len(bodies) != 1 {
		t.Fatalf("%d different answers to one keyed request:\n%v", len(bodies), bodies)
	}
	for q, want := range map[string]int{
		"SELECT count(*) FROM ai_models WHERE repo = 'org/concurrent'":       1,
		"SELECT count(*) FROM audit_events WHERE action = 'ai_model.create'": 1,
		"SELECT count(*) FROM idempotency_keys WHERE key = 'same'":           1,
	} {
		if got := count(t, e, q); got != want {
			t.Fatalf("%s: %d, want %d", q, got, want)
		}
	}
}

func TestIdempotency_AIModelCreate_KeyReusedForAnotherBody_409AndNothingCreated(t *testing.T) {
	e, tok, _ := answerEnv(t, false)
	if r := e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "org/first"}, "Idempotency-Key", "reuse"); r.Status != 201 {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	r := e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "org/second"}, "Idempotency-Key", "reuse")
	assertProblem(t, r, 409, "idempotency_key_reused")
	if n := count(t, e, "SELECT count(*) FROM ai_models WHERE repo = 'org/second'"); n != 0 {
		t.Fatalf("the second body's model was created (%d) though its key was refused", n)
	}
}

func TestIdempotency_AIModelCreate_KeyOlderThan24Hours_FreeAgain(t *testing.T) {
	e, tok, f := answerEnv(t, false)
	if r := e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "org/old-key"}, "Idempotency-Key", "old"); r.Status != 201 {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	e.Clock.Advance(resources.IdempotencyWindow + time.Hour)
	r := e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "org/new-key"}, "Idempotency-Key", "old")
	if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" || r.JSON(t)["repo"] != "org/new-key" {
		t.Fatalf("a key past the window is free again: %d %s", r.Status, r.Body)
	}
	again := e.Do("POST", "/api/v1/ai/models", tok, map[string]any{"repo": "org/new-key"}, "Idempotency-Key", "old")
	if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(r.Body) {
		t.Fatalf("replay of the new request: %d %s", again.Status, again.Body)
	}
	if n := f.count(); n != 0 {
		t.Fatalf("answers stored after the request: %d, want 0 (kept in the business transaction)", n)
	}
}
