package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"golang.org/x/sync/errgroup"
)

// warm sends one GET /api/v1/whoami with each token, eight at a time, and
// fails unless every answer is 200. A load then measures steady state: a
// token's first request reads it from PostgreSQL, records its last use and
// starts its rate-limit state. A client does that once per token and 30
// seconds; a rotated bench token would do it once per few dozen requests,
// and more often the more units a request costs (an MCP call's pool is
// twice as large), which charged the loads unequally. Each token spends one
// unit; poolSize leaves far more than that unused.
func warm(ctx context.Context, base string, tokens []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, tok := range tokens {
		g.Go(func() error { return warmOne(ctx, base, tok) })
	}
	return g.Wait()
}

func warmOne(ctx context.Context, base, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/whoami", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("warm-up: GET /api/v1/whoami answered %d", res.StatusCode)
	}
	return nil
}
