//go:build benchpprof

package main

import (
	"log"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof on http.DefaultServeMux
	"os"
)

// A build with the benchpprof tag (cmd/bench -profile) serves pprof on
// PLATFORMAPI_PPROF_ADDR; a normal build has no pprof at all.
func init() {
	addr := os.Getenv("PLATFORMAPI_PPROF_ADDR")
	if addr == "" {
		return
	}
	go func() { log.Println(http.ListenAndServe(addr, nil)) }()
}
