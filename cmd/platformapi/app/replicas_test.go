package app

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"platformapi/api"
	"platformapi/api/sharedcache/redistest"
	"platformapi/resources"
	"platformapi/resources/testkit"
)

// recheck is the replicas' --auth-recheck in this test: shorter than the
// production 30 s so that "revocation holds within the interval while Redis
// is down" is checked in seconds.
const recheck = 2 * time.Second

// TestReplicas_SharedBudgetInstantRevocationAndRedisOutage runs two `serve`
// processes on one PostgreSQL and a private Redis: one token's budget (a
// burst of 600, refilled at 10 a second) is shared; a token revoked through
// the portal is refused at once by the other replica; with Redis stopped
// both keep serving and a revocation holds within the re-check interval;
// with Redis back the budget is shared again, and so is the budget of
// failed authentications per client address.
func TestReplicas_SharedBudgetInstantRevocationAndRedisOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server and runs two replicas and a redis-server")
	}
	redis := redistest.Start(t)
	c := newCLI(t)
	c.ok("portal", "api", "enable", "--as", "root@example.test")
	bin := buildServer(t)
	a := startReplica(t, bin, c.dsn, redis.URL())
	b := startReplica(t, bin, c.dsn, redis.URL())
	a.waitLog(t, "shared cache (Redis) reachable", 1)
	b.waitLog(t, "shared cache (Redis) reachable", 1)

	t.Run("one budget of 600 over both replicas", func(t *testing.T) {
		assertSharedBudget(t, c.mintToken(t), a, b)
	})
	t.Run("revoked through the portal: refused at once by the other replica", func(t *testing.T) {
		id, tok := c.mintTokenID(t)
		b.expect(t, tok, 200) // cached on b
		c.ok("--redis-url", redis.URL(), "portal", "token", "revoke", id, "--as", "root@example.test")
		start := time.Now()
		b.eventually(t, tok, 401, 500*time.Millisecond)
		t.Logf("refused by the other replica %v after the portal command returned", time.Since(start))
	})
	t.Run("Redis stopped: both serve; revocation holds within the re-check interval", func(t *testing.T) {
		id, tok := c.mintTokenID(t)
		b.expect(t, tok, 200)
		redis.Stop()
		a.waitLog(t, "shared cache (Redis) unreachable", 1)
		b.waitLog(t, "shared cache (Redis) unreachable", 1)
		a.expect(t, tok, 200)
		c.ok("--redis-url", redis.URL(), "portal", "token", "revoke", id, "--as", "root@example.test")
		start := time.Now()
		b.eventually(t, tok, 401, recheck+time.Second)
		t.Logf("refused %v after the revocation (re-check interval %v)", time.Since(start), recheck)
	})
	t.Run("Redis back: the budget is shared again", func(t *testing.T) {
		redis.Resume()
		a.waitLog(t, "shared cache (Redis) reachable", 2)
		b.waitLog(t, "shared cache (Redis) reachable", 2)
		assertSharedBudget(t, c.mintToken(t), a, b)
	})
	t.Run("failed authentications: one budget over both; live tokens still served", func(t *testing.T) {
		assertSharedFailures(t, a, b)
		for _, r := range []*replica{a, b} {
			stop := keepRefused(t, r)
			defer stop()
		}
		tok := mintSeenBy(t, c, []string{"--redis-url", redis.URL()}, a, b)
		a.servedWhileRefused(t, tok)
		b.servedWhileRefused(t, tok)
	})
}

// assertSharedFailures sends unknown tokens alternately to a and b until
// both refuse this address: about api.AuthFailuresPerMinute failures in
// all (plus what refills meanwhile), not that many on each replica.
func assertSharedFailures(t *testing.T, a, b *replica) {
	t.Helper()
	start := time.Now()
	failed, refusing := 0, map[string]bool{}
	for i := 0; len(refusing) < 2; i++ {
		r := []*replica{a, b}[i%2]
		switch code := r.get(t, resources.NewTokenValue(resources.TokenKindPersonal)); code {
		case 401:
			failed++
		case 429:
			refusing[r.name] = true
		default:
			t.Fatalf("status %d", code)
		}
		if i > 4*api.AuthFailuresPerMinute {
			t.Fatalf("%d failures and still not refused by both: %v", failed, refusing)
		}
	}
	refill := int(time.Since(start).Seconds()) + 2 // one a second
	if failed < api.AuthFailuresPerMinute || failed > api.AuthFailuresPerMinute+refill {
		t.Fatalf("%d failed authentications before both replicas refused, want %d (+%d refilled)",
			failed, api.AuthFailuresPerMinute, refill)
	}
}

// assertSharedBudget spends 700 requests of one token alternately on a and
// b: about 600 pass (plus what refills meanwhile, 10 a second), the rest are
// 429 on both replicas.
func assertSharedBudget(t *testing.T, tok string, a, b *replica) {
	t.Helper()
	start := time.Now()
	passed, refused := map[string]int{}, map[string]int{}
	for i := range 700 {
		r := []*replica{a, b}[i%2]
		switch code := r.get(t, tok); code {
		case 200:
			passed[r.name]++
		case 429:
			refused[r.name]++
		default:
			t.Fatalf("status %d", code)
		}
	}
	total := passed[a.name] + passed[b.name]
	refill := int(time.Since(start).Seconds()*10) + 2
	if total < 600 || total > 600+refill || refused[a.name] == 0 || refused[b.name] == 0 {
		t.Fatalf("passed %v, refused %v in %v: want 600 (+%d refilled) in all, refusals on both",
			passed, refused, time.Since(start), refill)
	}
}

// buildServer builds the platformapi binary (cmd/platformapi) for a test
// that runs it as a process.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "platformapi")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func (c *cli) mintTokenID(t *testing.T) (id, token string) {
	t.Helper()
	m := c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "r", "--scopes", "tenancy-read-global")
	return m["id"].(string), m["token"].(string)
}

func (c *cli) mintToken(t *testing.T) string { _, tok := c.mintTokenID(t); return tok }

// replica is one `serve` process with its log.
type replica struct {
	name string
	addr string
	log  *testkit.LockedBuffer
}

func startReplica(t *testing.T, bin, dsn, redisURL string) *replica {
	t.Helper()
	r := &replica{addr: freeAddr(t), log: &testkit.LockedBuffer{}}
	r.name = r.addr
	cmd := exec.Command(bin, "--database-url", dsn, "--redis-url", redisURL, "--log-level", "info",
		"serve", "--addr", r.addr, "--auth-recheck", recheck.String())
	cmd.Env = append(os.Environ(), "PLATFORMAPI_TOKEN_PEPPER=cli-test-pepper-0123456789")
	cmd.Stdout, cmd.Stderr = io.Discard, r.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			t.Logf("replica %s log:\n%s", r.addr, r.log.String())
		}
	})
	r.waitLog(t, `"msg":"serving"`, 1)
	return r
}

// waitLog waits until the log holds text at least n times.
func (r *replica) waitLog(t *testing.T, text string, n int) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, fmt.Sprintf("replica %s: %q logged %d times", r.addr, text, n),
		func() bool { return strings.Count(r.log.String(), text) >= n })
}

// get sends GET /meta with tok and returns the status.
func (r *replica) get(t *testing.T, tok string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+r.addr+"/api/v1/meta", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode
}

func (r *replica) expect(t *testing.T, tok string, status int) {
	t.Helper()
	if got := r.get(t, tok); got != status {
		t.Fatalf("replica %s: status %d, want %d", r.addr, got, status)
	}
}

// eventually polls until tok gets status, failing after within.
func (r *replica) eventually(t *testing.T, tok string, status int, within time.Duration) {
	t.Helper()
	testkit.Eventually(t, within, fmt.Sprintf("replica %s answers %d", r.addr, status),
		func() bool { return r.get(t, tok) == status })
}
