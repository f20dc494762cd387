package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// runBare is the reference: chi and a pgx pool (as many connections as the
// server's pool) answering GET /ai/models/{id} with one indexed
// SELECT row_to_json(...) on the same table. No authentication, no rate
// limit, no request id, no log.
func runBare(args []string) {
	fs := flag.NewFlagSet("bare", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:18090", "listen address")
	dsn := fs.String("database-url", "", "database DSN")
	_ = fs.Parse(args)
	cfg, err := pgxpool.ParseConfig(*dsn)
	if err != nil {
		log.Fatal(err)
	}
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	r := chi.NewRouter()
	r.Get("/ai/models/{id}", func(w http.ResponseWriter, req *http.Request) {
		id, err := strconv.ParseInt(chi.URLParam(req, "id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		var body []byte
		err = pool.QueryRow(req.Context(), `SELECT row_to_json(m) FROM ai_models m WHERE id = $1`, id).Scan(&body)
		if errors.Is(err, pgx.ErrNoRows) {
			http.NotFound(w, req)
			return
		}
		if err != nil {
			http.Error(w, "internal", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	log.Fatal(http.ListenAndServe(*addr, r))
}
