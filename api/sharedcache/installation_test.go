package sharedcache_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"platformapi/api/sharedcache"
	"platformapi/api/sharedcache/redistest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// startInstallation is a replica of the installation id on the Redis at url.
func startInstallation(t *testing.T, url, id string, perMinute int) *replica {
	t.Helper()
	r := startReplicaWith(t, sharedcache.Options{URL: url, PerMinute: perMinute,
		Installation: func(context.Context) (string, error) { return id, nil }})
	testkit.Eventually(t, 0, "the feed subscribed", r.Healthy)
	return r
}

// TestShared_TwoInstallationsOnOneRedis_ShareNeitherBudgetsNorChanges: two
// installations whose token ids coincide (staging and production on one
// Redis database) keep apart: a token spending its budget on one does not
// spend the other's token of the same id, and a change published by one
// reaches only its own replicas.
func TestShared_TwoInstallationsOnOneRedis_ShareNeitherBudgetsNorChanges(t *testing.T) {
	srv := redistest.Start(t)
	staging, staging2 := startInstallation(t, srv.URL(), "inst-staging", 10),
		startInstallation(t, srv.URL(), "inst-staging", 10)
	prod, prod2 := startInstallation(t, srv.URL(), "inst-prod", 10),
		startInstallation(t, srv.URL(), "inst-prod", 10)
	if refused := take(t, "token:1", 10, staging); refused != 0 {
		t.Fatalf("staging's own budget: %d refused", refused)
	}
	if refused := take(t, "token:1", 10, prod, prod2); refused != 0 {
		t.Fatalf("prod's token 1 was refused %d times after staging's token 1 spent its budget", refused)
	}
	if refused := take(t, "token:1", 4, prod, prod2); refused != 4 {
		t.Fatalf("prod's replicas do not share their budget: %d of 4 refused", refused)
	}
	change := resources.TokenChanged(7)
	prod.Publish(context.Background(), change)
	testkit.Eventually(t, 0, "prod's other replica got the change", func() bool {
		got, _ := prod2.sink.got()
		return len(got) == 1 && got[0] == change
	})
	// Redis delivers in the order it took the messages: had staging shared
	// prod's channel, its other replica would get prod's change before
	// staging's own marker, sent after it.
	marker := resources.TokenChanged(8)
	staging.Publish(context.Background(), marker)
	testkit.Eventually(t, 0, "staging's other replica got its marker", func() bool {
		got, _ := staging2.sink.got()
		return len(got) > 0 && got[len(got)-1] == marker
	})
	if got, _ := staging2.sink.got(); len(got) != 1 {
		t.Fatalf("staging received prod's change: %v", got)
	}
}

// While the installation id cannot be read (PostgreSQL down at start),
// the replica serves with its own budgets, and its log says that cause,
// not that Redis is unreachable: Redis answers.
func TestShared_InstallationIDUnreadable_LogNamesItNotRedis(t *testing.T) {
	srv := redistest.Start(t)
	r := startReplicaWith(t, sharedcache.Options{URL: srv.URL(), PerMinute: 10,
		Installation: func(context.Context) (string, error) {
			return "", errors.New("dial tcp 127.0.0.1:5432: connection refused")
		}})
	testkit.Eventually(t, 0, "the fallback logged", func() bool { return r.log.String() != "" })
	var line struct{ Msg, Error string }
	first, _, _ := strings.Cut(r.log.String(), "\n")
	if err := json.Unmarshal([]byte(first), &line); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line.Msg, "Redis) unreachable") || !strings.Contains(line.Msg, "installation id") ||
		!strings.Contains(line.Error, "connection refused") {
		t.Fatalf("log line %s", first)
	}
	if refused := take(t, "token:1", 10, r); refused != 0 {
		t.Fatalf("the replica's own budget: %d of 10 refused", refused)
	}
}
