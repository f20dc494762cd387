package app

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"platformapi/bunstore/pgtest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// TestReplicas_WithoutRedis_CachedCredentialsRevokedAtOnce runs two `serve`
// processes on one PostgreSQL and no Redis: each caches credentials, and a
// token revoked through the portal is refused at once by both, through the
// PostgreSQL change feed; a lost feed connection comes back by itself.
func TestReplicas_WithoutRedis_CachedCredentialsRevokedAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server and runs two replicas")
	}
	c := newCLI(t)
	c.ok("portal", "api", "enable", "--as", "root@example.test")
	bin := buildServer(t)
	a := startReplica(t, bin, c.dsn, "")
	b := startReplica(t, bin, c.dsn, "")
	const listening = "change feed (PostgreSQL) listening"
	a.waitLog(t, listening, 1)
	b.waitLog(t, listening, 1)

	revokeAtOnce := func(t *testing.T) {
		id, tok := c.mintTokenID(t)
		for _, r := range []*replica{a, b} { // the minting's own change may drop a first entry
			const hits = "platformapi_credential_cache_hits_total"
			before := r.metric(t, hits)
			testkit.Eventually(t, 5*time.Second, "replica "+r.name+" answers from its cache", func() bool {
				r.expect(t, tok, 200)
				return r.metric(t, hits) > before
			})
		}
		c.ok("--redis-url", "", "portal", "token", "revoke", id, "--as", "root@example.test")
		start := time.Now()
		a.eventually(t, tok, 401, 500*time.Millisecond)
		b.eventually(t, tok, 401, 500*time.Millisecond)
		t.Logf("refused by both replicas %v after the portal command returned (re-check interval %v)",
			time.Since(start), recheck)
	}
	t.Run("revoked through the portal: refused at once by both", revokeAtOnce)
	t.Run("feed connections lost: both listen again, revocation at once", func(t *testing.T) {
		var killed int
		c.query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "+
			"WHERE application_name = 'platformapi change feed' AND datname = current_database()", &killed)
		if killed != 2 {
			t.Fatalf("terminated %d feed connections, want 2", killed)
		}
		a.waitLog(t, listening, 2)
		b.waitLog(t, listening, 2)
		revokeAtOnce(t)
	})
	t.Run("minted while the address is refused: served by both within a second (last: the address stays refused a while)", func(t *testing.T) {
		for _, r := range []*replica{a, b} {
			stop := keepRefused(t, r)
			defer stop()
		}
		tok := mintSeenBy(t, c, nil, a, b)
		a.servedWhileRefused(t, tok)
		b.servedWhileRefused(t, tok)
	})
}

// tokenChanges is the metric that counts the token changes a replica's
// feed delivered (its credential cache's invalidations for them; the view
// of live tokens has taken the change before it counts).
const tokenChanges = `platformapi_credential_cache_invalidations_total{kind="token"}`

// mintSeenBy mints a token through the portal (with the global flags
// globals, e.g. the replicas' --redis-url) and waits until the change feed
// has brought it to every replica.
func mintSeenBy(t *testing.T, c *cli, globals []string, replicas ...*replica) string {
	t.Helper()
	before := make([]float64, len(replicas))
	for i, r := range replicas {
		before[i] = r.counter(t, tokenChanges)
	}
	tok := c.ok(append(globals, "portal", "token", "create", "--as", "root@example.test", "--name", "r",
		"--scopes", "tenancy-read-global")...)["token"].(string)
	for i, r := range replicas {
		testkit.Eventually(t, 5*time.Second, "replica "+r.name+" has the new token's change", func() bool {
			return r.counter(t, tokenChanges) > before[i]
		})
	}
	return tok
}

// servedWhileRefused checks that tok is served at r from its first use on,
// request after request, while unknown tokens from the same address are
// refused 429 between them.
func (r *replica) servedWhileRefused(t *testing.T, tok string) {
	t.Helper()
	refused := 0
	for i := range 20 {
		if got := r.get(t, tok); got != 200 {
			t.Fatalf("replica %s: request %d of a live token from the refused address: %d", r.name, i, got)
		}
		if r.get(t, resources.NewTokenValue(resources.TokenKindPersonal)) == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused == 0 {
		t.Fatalf("replica %s: the address was not refused meanwhile", r.name)
	}
}

// keepRefused spends the failed authentications of this client's address
// at r with unknown tokens, then keeps it refused (R1's attacker behind the
// same NAT) until stop is called; it fails the test when the address is
// not refused.
func keepRefused(t *testing.T, r *replica) (stop func()) {
	t.Helper()
	unknown := resources.NewTokenValue(resources.TokenKindPersonal)
	testkit.Eventually(t, 10*time.Second, "the address is refused", func() bool {
		return r.get(t, unknown) == http.StatusTooManyRequests
	})
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = r.get(t, unknown)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// counter is metric, 0 for a series not written yet.
func (r *replica) counter(t *testing.T, series string) float64 {
	t.Helper()
	v, _ := r.sample(t, series)
	return v
}

// metric reads one unlabelled sample from the replica's GET /metrics.
func (r *replica) metric(t *testing.T, name string) float64 {
	t.Helper()
	v, ok := r.sample(t, name)
	if !ok {
		t.Fatalf("replica %s: no metric %s", r.name, name)
	}
	return v
}

// sample reads the sample of one series (a name, with its labels if it has
// any) from the replica's GET /metrics.
func (r *replica) sample(t *testing.T, name string) (float64, bool) {
	t.Helper()
	res, err := http.Get("http://" + r.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f, true
		}
	}
	return 0, false
}

// TestClose_StopsTheChangeFeedBeforeTheDatabase: closing a server (here the
// embedded eval server) ends its LISTEN connection, so dropping the database
// afterwards does not cut a live feed (which logged "change feed lost" at the
// end of every `platformapi eval`).
func TestClose_StopsTheChangeFeedBeforeTheDatabase(t *testing.T) {
	dsn := pgtest.DSN(t)
	log := &testkit.LockedBuffer{}
	srv, err := StartEvalServer(context.Background(),
		Options{Logger: slog.New(slog.NewJSONHandler(log, nil))}, dsn)
	if err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, dsn: dsn}
	listeners := func() (n int) {
		c.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = "+
			"'platformapi change feed' AND datname = current_database()", &n)
		return n
	}
	testkit.Eventually(t, 0, "a change-feed connection while serving", func() bool { return listeners() == 1 })
	srv.Close()
	// The backend ends a moment after the client's Terminate message.
	testkit.Eventually(t, 5*time.Second, "no change-feed connection after Close",
		func() bool { return listeners() == 0 })
	if strings.Contains(log.String(), "change feed (PostgreSQL) lost") {
		t.Fatalf("Close cut the feed instead of stopping it:\n%s", log.String())
	}
}
