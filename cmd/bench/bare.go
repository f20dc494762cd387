package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// runBare is the reference: chi and a pgx pool (as many connections as the
// server's pool) answering GET /ai/models/{id} with one indexed
// SELECT row_to_json(...) on the same table. No authentication, no rate
// limit, no request id, no log. POST /mcp answers a tools/call of
// get-ai-model around the same read (see bareMCP).
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
	read := func(ctx context.Context, id int64) (body []byte, err error) {
		err = pool.QueryRow(ctx, `SELECT row_to_json(m) FROM ai_models m WHERE id = $1`, id).Scan(&body)
		return body, err
	}
	r := chi.NewRouter()
	r.Get("/ai/models/{id}", func(w http.ResponseWriter, req *http.Request) {
		id, err := strconv.ParseInt(chi.URLParam(req, "id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		body, err := read(req.Context(), id)
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
	r.Post("/mcp", bareMCP(read))
	log.Fatal(http.ListenAndServe(*addr, r))
}

// bareMCP is the least an MCP server built on mcp-go does for a tool call
// around read: the body read, mcp-go's MCPServer.HandleMessage (which finds
// the tool and decodes its arguments), the tool's answer as text and as
// structured content (its bytes as they are), the answer encoded by
// encoding/json. No authentication, no checks of the protocol's headers, no
// rate limit, no log: its ratio to the bare GET is what mcp-go itself
// leaves of REST's throughput.
func bareMCP(read func(context.Context, int64) ([]byte, error)) http.HandlerFunc {
	s := server.NewMCPServer("bare", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("get-ai-model", mcp.WithString("model_id", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			id, err := strconv.ParseInt(req.GetString("model_id", ""), 10, 64)
			if err != nil {
				return mcp.NewToolResultError("bad model_id"), nil
			}
			body, err := read(ctx, id)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			res := mcp.NewToolResultText(string(body))
			res.RawStructuredContent = body
			return res, nil
		})
	return func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		resp := s.HandleMessage(req.Context(), body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}
}
