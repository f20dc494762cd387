package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"platformapi/resources"
)

const testToken = "glpat-s3cr3t-test-token"

// fakeGroup is a group held by the fake GitLab.
type fakeGroup struct {
	id                  int64
	path, name, desc    string
	projects, subgroups int
}

func (g *fakeGroup) json() map[string]any {
	return map[string]any{"id": g.id, "name": g.name, "path": g.path, "full_path": g.path,
		"description": g.desc, "web_url": "https://gitlab.test/groups/" + g.path}
}

// fakeGitLab serves exactly the GitLab endpoints the adapter uses and checks
// every request's method, path, query, token and body.
type fakeGitLab struct {
	t        *testing.T
	mu       sync.Mutex
	byPath   map[string]*fakeGroup
	nextID   int64
	requests []string     // "METHOD escaped-path?query"
	creates  []createBody // bodies of POST /groups
	raceWith *fakeGroup   // if set, a POST inserts it first and answers 400 taken
}

func newFake(t *testing.T) (*fakeGitLab, *httptest.Server) {
	f := &fakeGitLab{t: t, byPath: map[string]*fakeGroup{}, nextID: 100}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeGitLab) add(g fakeGroup) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	g.id = f.nextID
	f.byPath[g.path] = &g
}

// race makes the next create lose to g, as if another creator got there first.
func (f *fakeGitLab) race(g fakeGroup) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.raceWith = &g
}

func (f *fakeGitLab) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

func (f *fakeGitLab) createsSeen() []createBody {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]createBody(nil), f.creates...)
}

func (f *fakeGitLab) description(path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byPath[path].desc
}

func (f *fakeGitLab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := r.URL.EscapedPath()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	if r.Header.Get("PRIVATE-TOKEN") != testToken {
		reply(w, http.StatusUnauthorized, map[string]any{"message": "401 Unauthorized"})
		return
	}
	rest, ok := strings.CutPrefix(p, "/api/v4/groups")
	switch {
	case ok && rest == "" && r.Method == http.MethodPost:
		f.create(w, r)
	case ok && strings.Count(rest, "/") == 1 && r.Method == http.MethodGet:
		f.get(w, rest[1:])
	case ok && strings.Count(rest, "/") == 2 && r.Method == http.MethodGet:
		f.list(w, r, rest[1:])
	default:
		f.t.Errorf("unexpected request %s %s", r.Method, r.URL.RequestURI())
		reply(w, http.StatusNotFound, map[string]any{"message": "404 Not Found"})
	}
}

func (f *fakeGitLab) get(w http.ResponseWriter, escaped string) {
	path, err := url.PathUnescape(escaped)
	if err != nil {
		f.t.Errorf("bad path encoding %q", escaped)
	}
	if g, ok := f.byPath[path]; ok {
		reply(w, http.StatusOK, g.json())
		return
	}
	reply(w, http.StatusNotFound, map[string]any{"message": "404 Group Not Found"})
}

func (f *fakeGitLab) list(w http.ResponseWriter, r *http.Request, rest string) {
	idText, what, _ := strings.Cut(rest, "/")
	q := r.URL.Query()
	if q.Get("per_page") != "1" || (what == "projects" && q.Get("include_subgroups") != "false") {
		f.t.Errorf("list query %q lacks per_page=1 / include_subgroups=false", r.URL.RawQuery)
	}
	id, _ := strconv.ParseInt(idText, 10, 64)
	for _, g := range f.byPath {
		if g.id != id {
			continue
		}
		n := map[string]int{"projects": g.projects, "subgroups": g.subgroups}[what]
		items := []map[string]any{}
		if n > 0 {
			items = append(items, map[string]any{"id": 9000})
		}
		reply(w, http.StatusOK, items)
		return
	}
	f.t.Errorf("list of unknown group %q", rest)
	reply(w, http.StatusNotFound, map[string]any{"message": "404 Group Not Found"})
}

func (f *fakeGitLab) create(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("create Content-Type = %q", ct)
	}
	var body createBody
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		f.t.Errorf("create body: %v", err)
	}
	f.creates = append(f.creates, body)
	if f.raceWith != nil {
		f.nextID++
		f.raceWith.id = f.nextID
		f.byPath[f.raceWith.path] = f.raceWith
		f.raceWith = nil
	}
	if _, taken := f.byPath[body.Path]; taken {
		reply(w, http.StatusBadRequest, map[string]any{"message": map[string]any{"path": []string{"has already been taken"}}})
		return
	}
	f.nextID++
	g := &fakeGroup{id: f.nextID, path: body.Path, name: body.Name, desc: body.Description}
	f.byPath[g.path] = g
	reply(w, http.StatusCreated, g.json())
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func TestGitLab_IsACodeHost(t *testing.T) {
	var _ resources.CodeHost = New("http://gitlab.test", testToken, nil)
}

func TestGitLab_MissingGroup_CreatedPrivateWithMarker(t *testing.T) {
	f, srv := newFake(t)
	g, err := New(srv.URL+"/", testToken, nil).EnsureGroup(context.Background(), "acme", "Acme Ltd")
	if err != nil {
		t.Fatalf("EnsureGroup: %v", err)
	}
	want := resources.VCSGroup{Path: "acme", Name: "Acme Ltd", WebURL: "https://gitlab.test/groups/acme", Adoptable: true}
	if *g != want {
		t.Fatalf("group = %+v; want %+v", *g, want)
	}
	wantBody := createBody{Name: "Acme Ltd", Path: "acme", Description: "managed-by: platformapi", Visibility: "private"}
	if got := f.createsSeen(); len(got) != 1 || got[0] != wantBody {
		t.Fatalf("creates = %+v; want [%+v]", got, wantBody)
	}
	if f.description("acme") != resources.ManagedMarker {
		t.Fatal("created group lacks the marker")
	}
}

func TestGitLab_ExistingEmptyGroup_AdoptedWithoutCreate(t *testing.T) {
	f, srv := newFake(t)
	f.add(fakeGroup{path: "acme", name: "Acme (old)", desc: "left here by someone"})
	g, err := New(srv.URL, testToken, nil).EnsureGroup(context.Background(), "acme", "Acme")
	if err != nil || !g.Adoptable || g.Name != "Acme (old)" {
		t.Fatalf("EnsureGroup = %+v, %v; want the existing group adopted", g, err)
	}
	want := []string{
		"GET /api/v4/groups/acme",
		"GET /api/v4/groups/101/projects?per_page=1&include_subgroups=false&with_shared=false",
		"GET /api/v4/groups/101/subgroups?per_page=1",
	}
	if got := f.seen(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("requests = %q; want %q (no create)", got, want)
	}
}

func TestGitLab_ExistingGroupWithProjects_Collision(t *testing.T) {
	f, srv := newFake(t)
	f.add(fakeGroup{path: "acme", name: "Acme", desc: "team acme", projects: 3})
	_, err := New(srv.URL, testToken, nil).EnsureGroup(context.Background(), "acme", "Acme")
	if !errors.Is(err, resources.ErrVCSGroupCollision) {
		t.Fatalf("err = %v; want ErrVCSGroupCollision", err)
	}
	if len(f.createsSeen()) != 0 {
		t.Fatal("a create was attempted over a foreign group")
	}
}

func TestGitLab_ExistingGroupWithSubgroups_Collision(t *testing.T) {
	f, srv := newFake(t)
	f.add(fakeGroup{path: "acme", name: "Acme", subgroups: 1})
	_, err := New(srv.URL, testToken, nil).EnsureGroup(context.Background(), "acme", "Acme")
	if !errors.Is(err, resources.ErrVCSGroupCollision) {
		t.Fatalf("err = %v; want ErrVCSGroupCollision", err)
	}
}

func TestGitLab_ExistingGroupWithMarker_AdoptedDespiteProjects(t *testing.T) {
	f, srv := newFake(t)
	f.add(fakeGroup{path: "acme", name: "Acme", desc: "Acme\nmanaged-by: platformapi", projects: 5, subgroups: 2})
	g, err := New(srv.URL, testToken, nil).EnsureGroup(context.Background(), "acme", "Acme")
	if err != nil || !g.Adoptable {
		t.Fatalf("EnsureGroup = %+v, %v; want adopted", g, err)
	}
	if got := f.seen(); len(got) != 1 || len(f.createsSeen()) != 0 {
		t.Fatalf("requests = %q; want only the lookup", got)
	}
}

func TestGitLab_FindGroup_MissingIsNilNil(t *testing.T) {
	_, srv := newFake(t)
	g, err := New(srv.URL, testToken, nil).FindGroup(context.Background(), "nobody")
	if g != nil || err != nil {
		t.Fatalf("FindGroup = %+v, %v; want nil, nil", g, err)
	}
}

func TestGitLab_FindGroup_PathIsURLEncoded(t *testing.T) {
	f, srv := newFake(t)
	f.add(fakeGroup{path: "team/sub", name: "Sub", desc: resources.ManagedMarker})
	g, err := New(srv.URL, testToken, nil).FindGroup(context.Background(), "team/sub")
	if err != nil || g == nil || g.Path != "team/sub" {
		t.Fatalf("FindGroup = %+v, %v", g, err)
	}
	if got := f.seen(); got[0] != "GET /api/v4/groups/team%2Fsub" {
		t.Fatalf("request = %q; want the path encoded as one segment", got[0])
	}
}

// failingServer answers every request with handler and returns a client for it.
func failingServer(t *testing.T, timeout time.Duration, handler http.HandlerFunc) *Client {
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return New(srv.URL, testToken, &http.Client{Timeout: timeout})
}

func assertUnreachable(t *testing.T, c *Client) error {
	t.Helper()
	ctx := context.Background()
	if _, err := c.FindGroup(ctx, "acme"); !errors.Is(err, resources.ErrCodeHostUnreachable) {
		t.Fatalf("FindGroup err = %v; want ErrCodeHostUnreachable", err)
	}
	_, err := c.EnsureGroup(ctx, "acme", "Acme")
	if !errors.Is(err, resources.ErrCodeHostUnreachable) || errors.Is(err, resources.ErrVCSGroupCollision) {
		t.Fatalf("EnsureGroup err = %v; want ErrCodeHostUnreachable", err)
	}
	if strings.Contains(err.Error(), testToken) {
		t.Fatalf("error %q leaks the token", err)
	}
	return err
}

func TestGitLab_ServerError_Unreachable(t *testing.T) {
	c := failingServer(t, 0, func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusInternalServerError, map[string]any{"message": "500 Internal Server Error"})
	})
	assertUnreachable(t, c)
}

func TestGitLab_ConnectionClosed_Unreachable(t *testing.T) {
	c := failingServer(t, 0, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
	})
	assertUnreachable(t, c)
}

func TestGitLab_SlowServer_TimeoutUnreachable(t *testing.T) {
	c := failingServer(t, 100*time.Millisecond, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	start := time.Now()
	assertUnreachable(t, c)
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("two calls took %v; the timeout did not bound them", el)
	}
}

func TestGitLab_CallerContextCancelled_UnreachableWrappingCtxError(t *testing.T) {
	_, srv := newFake(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(srv.URL, testToken, nil).FindGroup(ctx, "acme")
	if !errors.Is(err, resources.ErrCodeHostUnreachable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want ErrCodeHostUnreachable wrapping context.Canceled", err)
	}
}

func TestGitLab_Unauthorised_UnreachableAndTokenNotInError(t *testing.T) {
	_, srv := newFake(t)
	const wrong = "glpat-wrong-token-value"
	_, err := New(srv.URL, wrong, nil).EnsureGroup(context.Background(), "acme", "Acme")
	if !errors.Is(err, resources.ErrCodeHostUnreachable) {
		t.Fatalf("err = %v; want ErrCodeHostUnreachable", err)
	}
	if !strings.Contains(err.Error(), "not authorised") || strings.Contains(err.Error(), wrong) {
		t.Fatalf("err = %q; want 'not authorised' and no token", err)
	}
}

func TestGitLab_UnexpectedAnswer_UnreachableWithTokenRedacted(t *testing.T) {
	c := failingServer(t, 0, func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusUnprocessableEntity, map[string]any{"message": "bad header " + testToken})
	})
	err := assertUnreachable(t, c)
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("err = %q; want the echoed token redacted", err)
	}
}

func TestGitLab_Redirect_NotFollowedSoTokenStaysHome(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		t.Errorf("redirect followed; foreign host got PRIVATE-TOKEN %q", r.Header.Get("PRIVATE-TOKEN"))
	}))
	defer elsewhere.Close()
	c := failingServer(t, 0, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusFound)
	})
	assertUnreachable(t, c)
}

func TestGitLab_CreateRaceWithAdoptableGroup_Adopted(t *testing.T) {
	f, srv := newFake(t)
	f.race(fakeGroup{path: "acme", name: "Acme", desc: resources.ManagedMarker})
	g, err := New(srv.URL, testToken, nil).EnsureGroup(context.Background(), "acme", "Acme")
	if err != nil || g == nil || !g.Adoptable || g.Path != "acme" {
		t.Fatalf("EnsureGroup = %+v, %v; want the racing group adopted", g, err)
	}
	if len(f.createsSeen()) != 1 {
		t.Fatalf("%d creates; want exactly 1", len(f.createsSeen()))
	}
}

func TestGitLab_CreateRaceWithForeignGroup_Collision(t *testing.T) {
	f, srv := newFake(t)
	f.race(fakeGroup{path: "acme", name: "Acme", projects: 1})
	_, err := New(srv.URL, testToken, nil).EnsureGroup(context.Background(), "acme", "Acme")
	if !errors.Is(err, resources.ErrVCSGroupCollision) {
		t.Fatalf("err = %v; want ErrVCSGroupCollision", err)
	}
}

func TestGitLab_New_DefaultClientHasBoundedTimeout(t *testing.T) {
	if c := New("http://gitlab.test", testToken, nil); c.hc.Timeout != DefaultTimeout {
		t.Fatalf("default timeout = %v; want %v", c.hc.Timeout, DefaultTimeout)
	}
	own := &http.Client{Timeout: time.Second}
	if c := New("http://gitlab.test", testToken, own); c.hc.Timeout != time.Second || own.CheckRedirect != nil {
		t.Fatal("New must keep the caller's timeout and leave the caller's client unchanged")
	}
}
