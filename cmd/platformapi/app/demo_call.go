package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"platformapi/api"
)

// demoCaller calls the API in-process, through the whole handler, with one
// person's token: the demo world is built the way its people would build it.
type demoCaller struct {
	h     http.Handler
	token string
}

// do sends one request and decodes the JSON answer; any status outside
// 2xx is an error.
func (c demoCaller) do(ctx context.Context, method, path string, body any) (map[string]any, error) {
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	r := httptest.NewRequestWithContext(ctx, method, api.Prefix+path, rd)
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, r)
	if w.Code < 200 || w.Code > 299 {
		return nil, fmt.Errorf("demo world: %s %s: %d %s", method, path, w.Code, strings.TrimSpace(w.Body.String()))
	}
	out := map[string]any{}
	if w.Body.Len() > 0 {
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			return nil, fmt.Errorf("demo world: %s %s: %w", method, path, err)
		}
	}
	return out, nil
}

// id is the "id" member of an answer, as a string.
func id(m map[string]any) string { return fmt.Sprint(m["id"]) }

// wait polls an operation until it has finished (succeeded or failed) or
// is awaiting approval.
func (c demoCaller) wait(ctx context.Context, opID string) (map[string]any, error) {
	return c.waitFor(ctx, opID, func(op map[string]any) bool {
		switch op["status"] {
		case "succeeded", "failed", "awaiting_approval":
			return true
		}
		return false
	})
}

// waitFor polls an operation until done says so (at most a minute), every
// 10 ms at first and then less often (at most every 200 ms), so a slow wait
// does not spend the caller's rate budget, which a frozen clock never refills.
func (c demoCaller) waitFor(ctx context.Context, opID string, done func(map[string]any) bool) (map[string]any, error) {
	deadline, pause := time.Now().Add(time.Minute), 10*time.Millisecond
	for {
		op, err := c.do(ctx, http.MethodGet, "/operations/"+opID, nil)
		if err != nil {
			return nil, err
		}
		if done(op) {
			return op, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("demo world: operation %s still %v", opID, op["status"])
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(pause*3/2, 200*time.Millisecond)
	}
}

// create posts body and waits for the operation the answer names.
func (c demoCaller) create(ctx context.Context, path string, body any) (map[string]any, error) {
	op, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return nil, err
	}
	return c.wait(ctx, id(op))
}
