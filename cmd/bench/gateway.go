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
// whose one handler answers 200 with an empty body to every request.
func runBare200(args []string) {
	fs := flag.NewFlagSet("bare200", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:18091", "listen address")
	_ = fs.Parse(args)
	log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	})))
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
