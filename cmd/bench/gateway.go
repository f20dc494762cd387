package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"

	"github.com/uptrace/bun/dialect/pgdialect"

	"platformapi/api"
	"platformapi/resources"
)

// liveGatewayKeys is how many live gateway keys the verify load draws
// from: the server holds them all in its view.
const liveGatewayKeys = 10_000

// seedGatewayKeys replaces the bench's gateway keys with liveGatewayKeys
// fresh ones, in one statement, hashed under the server key as the server
// hashes them; their values exist only in this run (w.gatewayValues).
func (w *world) seedGatewayKeys(ctx context.Context) error {
	key, err := w.store.GatewayKeyHashKey(ctx)
	if err != nil {
		return err
	}
	values, names := make([]string, liveGatewayKeys), make([]string, liveGatewayKeys)
	tiers, hashes := make([]string, liveGatewayKeys), make([][]byte, liveGatewayKeys)
	for i := range liveGatewayKeys {
		values[i], names[i] = resources.NewGatewayKeyValue(), "bench key "+strconv.Itoa(i)
		tiers[i], hashes[i] = []string{"basic", "pro", "edge"}[i%3], key.Hash(values[i])
	}
	if _, err := w.db.ExecContext(ctx, "DELETE FROM ai_gateway_keys WHERE created_by = 'bench'"); err != nil {
		return err
	}
	_, err = w.db.NewRaw(`INSERT INTO ai_gateway_keys (name, tier, key_hash, created_by)
		SELECT n, t, h, 'bench' FROM unnest(?::text[], ?::text[], ?::bytea[]) AS u(n, t, h)`,
		pgdialect.Array(names), pgdialect.Array(tiers), pgdialect.Array(hashes)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("insert %d gateway keys: %w", liveGatewayKeys, err)
	}
	w.gatewayValues = values
	return nil
}

// runBare200 is the reference of the verify load: a bare net/http server
// whose one handler answers 200 with an empty body to every request; with
// -headers it also writes the four headers verify's 200 must carry (see
// bare200Handler).
func runBare200(args []string) {
	fs := flag.NewFlagSet("bare200", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:18091", "listen address")
	headers := fs.Bool("headers", false, "write the headers of verify's 200 answer")
	_ = fs.Parse(args)
	log.Fatal(http.ListenAndServe(*addr, bare200Handler(*headers)))
}

// bare200Handler answers 200 with an empty body. With headers it first
// writes what the contract and DESIGN require of verify's 200 and nothing
// else: a new X-Request-ID (made as the server makes it) and a key's id, name
// and tier. It measures what the answer alone costs beside the bare 200:
// the bound of any verify, before it finds the key, checks the network or
// records the request.
func bare200Handler(headers bool) http.Handler {
	if !headers {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusOK)
		})
	}
	id, name, tier := []string{"4711"}, []string{"bench key 4711"}, []string{"pro"}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h["X-Request-Id"] = []string{api.NewRequestID()}
		h[resources.GatewayKeyIDHeader], h[resources.GatewayKeyNameHeader] = id, name
		h[resources.GatewayTierHeader] = tier
		w.WriteHeader(http.StatusOK)
	})
}

// verifyScript asks /ai-gateway/verify with a random key of values, as a
// gateway's forward authentication does; the bare reference gets the very
// same requests.
func verifyScript(values []string) string {
	return "local keys = {\"" + strings.Join(values, "\",\"") + "\"}\n" + luaPrelude + `
request = function()
  return wrk.format("GET", "` + resources.GatewayVerifyPath + `",
    {["Authorization"] = "Bearer " .. keys[math.random(1, #keys)]})
end
`
}
