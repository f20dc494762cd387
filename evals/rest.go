package evals

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// APIPrefix is where the REST API lives under the target URL.
const APIPrefix = "/api/v1"

// restStep sends one REST setup step and returns the decoded JSON answer
// (nil for an empty body) and whether it had the step's until_status.
func (r *run) restStep(ctx context.Context, s *RESTStep) (any, bool, error) {
	doc, status, err := r.restRequest(ctx, s)
	if err != nil {
		return nil, false, err
	}
	return doc, s.Until != 0 && status == s.Until, nil
}

// restRequest sends the step's request once and checks its status.
func (r *run) restRequest(ctx context.Context, s *RESTStep) (any, int, error) {
	path, err := r.vars.text(s.Path)
	if err != nil {
		return nil, 0, err
	}
	token := r.token
	if s.Token != "" {
		if token, err = r.vars.text(s.Token); err != nil {
			return nil, 0, err
		}
	}
	var body io.Reader
	if s.Body != nil {
		b, err := r.vars.value(s.Body)
		if err != nil {
			return nil, 0, err
		}
		body = bytes.NewReader(mustJSON(b))
	}
	req, err := http.NewRequestWithContext(ctx, s.Method, strings.TrimRight(r.target.URL, "/")+APIPrefix+path, body)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range s.Headers {
		if v, err = r.vars.text(v); err != nil {
			return nil, 0, err
		}
		req.Header.Set(k, v)
	}
	return r.send(req, s.Status, s.Until)
}

// send does the request, bounded by the step timeout, and checks the
// status (want 0: any 2xx; until, when set, is accepted too) and returns
// the decoded answer and status.
func (r *run) send(req *http.Request, want, until int) (doc any, code int, err error) {
	what := req.Method + " " + req.URL.Path
	err = within(req.Context(), r.opts.stepTimeout(), what, func(ctx context.Context) error {
		doc, code, err = r.exchange(req.WithContext(ctx), want, until)
		return err
	})
	return doc, code, err
}

// exchange does the request and checks the status (see send).
func (r *run) exchange(req *http.Request, want, until int) (any, int, error) {
	res, err := r.target.httpClient().Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, 0, err
	}
	code := res.StatusCode
	ok := want == 0 && code >= 200 && code <= 299 || want != 0 && code == want || until != 0 && code == until
	if !ok {
		return nil, code, fmt.Errorf("%s %s answered %d: %s", req.Method, req.URL.Path, code, cut(string(b), 200))
	}
	var doc any
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &doc); err != nil {
			return string(b), code, nil
		}
	}
	return doc, code, nil
}

// cut keeps at most n bytes of s, never ending inside a character, and
// marks a cut with "…". Every shortened text of the runner (quoted
// answers, the table's reasons) is cut here.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
