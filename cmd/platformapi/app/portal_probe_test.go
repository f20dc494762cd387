package app

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// problemLine finds the problem a portal page states.
var problemLine = regexp.MustCompile(`<p class="problem" role="alert">([^<]*)</p>`)

// answer is a portal answer reduced to what a prober compares: the status
// and the problem it states, the id it was about written as ID.
type answer struct {
	Status  int
	Problem string
}

// TestPortalTokens_OthersTokenNotVisible_AnswersAsAnUnknownID: revoking or
// extending a token the person may not see (another's, without an
// api-tokens key) answers exactly what an id that does not exist answers
// (404, same words), so ids cannot be probed; a person who may see it
// (its owner, a holder of api-tokens-read-global) still hears 403, and a
// token administrator still acts on it.
func TestPortalTokens_OthersTokenNotVisible_AnswersAsAnUnknownID(t *testing.T) {
	w := startPortal(t, false, false)
	w.personWith("ada@example.test", "Ada", resources.PermAPITokensAdmin, resources.PermTenancyRead)
	w.personWith("bob@example.test", "Bob", resources.PermTenancyRead)
	w.personWith("cy@example.test", "Cy", resources.PermAPITokensRead, resources.PermTenancyRead)
	mint := func(name, owner string) string {
		t.Helper()
		m, err := w.m.Portal().CreateToken(t.Context(), resources.Actor{Label: "ada@example.test"},
			resources.NewToken{Name: name, Scopes: []string{resources.PermTenancyRead}, Days: 10})
		if err != nil {
			t.Fatal(err)
		}
		if owner != "ada@example.test" { // hand it over: Bob's own token
			if _, err := w.m.db.NewRaw("UPDATE api_tokens SET user_id = (SELECT id FROM users WHERE email = ?), "+
				"minted_by = (SELECT id FROM users WHERE email = ?) WHERE id = ?", owner, owner,
				m.Token.ID).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		return strconv.FormatInt(m.Token.ID, 10)
	}
	adas, bobs, unknown := mint("ada-laptop", "ada@example.test"), mint("bob-laptop", "bob@example.test"), "99999"
	act := func(as, id, action string) answer {
		t.Helper()
		w.signedInAs(as)
		res, body := w.post("/portal/tokens/"+id+"/"+action, url.Values{"days": {"30"}}, "req-probe")
		a := answer{Status: res.StatusCode}
		if m := problemLine.FindStringSubmatch(body); m != nil {
			a.Problem = strings.ReplaceAll(m[1], id, "ID")
		}
		return a
	}
	for _, action := range []string{"revoke", "extend"} {
		t.Run(action, func(t *testing.T) {
			if diff := cmp.Diff(act("bob@example.test", unknown, action),
				act("bob@example.test", adas, action)); diff != "" {
				t.Errorf("Bob on Ada's token vs an unknown id (-unknown +Ada's)\n%s", diff)
			}
			if got := act("bob@example.test", unknown, action); got.Status != 404 {
				t.Errorf("Bob on an unknown id: %+v", got)
			}
			if got := act("cy@example.test", adas, action); got.Status != 403 {
				t.Errorf("Cy (api-tokens-read-global) on Ada's token: %+v, want 403", got)
			}
		})
	}
	if got := act("bob@example.test", bobs, "extend"); got.Status != 403 {
		t.Errorf("Bob extending his own token: %+v, want 403", got)
	}
	if got := act("ada@example.test", bobs, "extend"); got.Status != 303 {
		t.Errorf("Ada (token administrator) extending Bob's token: %+v, want 303", got)
	}
	if got := act("ada@example.test", bobs, "revoke"); got.Status != 303 {
		t.Errorf("Ada (token administrator) revoking Bob's token: %+v, want 303", got)
	}
	if n := w.count("SELECT count(*) FROM api_tokens WHERE revoked_at IS NOT NULL"); n != 1 {
		t.Errorf("revoked tokens: %d, want Bob's only", n)
	}
}

// TestPortalTokenCLI_OthersTokenNotVisible_AnswersAsAnUnknownID: the
// portal command line refuses an acting person's revoke or extend of a
// token they may not see with the error of an unknown id.
func TestPortalTokenCLI_OthersTokenNotVisible_AnswersAsAnUnknownID(t *testing.T) {
	c := newCLI(t)
	c.ok("portal", "user", "create", "--email", "bob@example.test", "--name", "Bob")
	c.ok("portal", "token", "create", "--as", "root@example.test", "--name", "x", "--scopes", "ai-read-global")
	for _, args := range [][]string{{"revoke"}, {"extend", "--days", "30"}} {
		t.Run(args[0], func(t *testing.T) {
			c := &cli{t: t, dsn: c.dsn}
			run := func(id string) string {
				cmd := append([]string{"portal", "token", args[0], id, "--as", "bob@example.test"}, args[1:]...)
				e := c.refused(resources.CodeAPITokenNotFound, cmd...)
				return strings.ReplaceAll(e.Detail, id, "ID")
			}
			if diff := cmp.Diff(run("99999"), run("1")); diff != "" {
				t.Errorf("root's token vs an unknown id (-unknown +root's)\n%s", diff)
			}
		})
	}
	if n := c.count("SELECT count(*) FROM audit_events " +
		"WHERE action IN ('api_token.revoke', 'api_token.extend')"); n != 0 {
		t.Fatalf("refused actions left %d audit rows", n)
	}
}
