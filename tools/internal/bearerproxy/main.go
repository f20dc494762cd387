// Command bearerproxy is a local reverse proxy for testing MCP clients that
// cannot send a bearer token (the MCP conformance suite): it listens on a
// loopback address and forwards every request to the target with
// Authorization: Bearer <token> added, keeping the client's Host and Origin
// headers so the server's origin checks see what the client sent.
//
//	bearerproxy -listen 127.0.0.1:18788 -target http://127.0.0.1:18787 -token-file FILE
package main

import (
	"flag"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18788", "loopback address to listen on")
	target := flag.String("target", "http://127.0.0.1:8080", "server to forward to")
	tokenFile := flag.String("token-file", "", "file holding the bearer token (or env PLATFORMAPI_TOKEN)")
	flag.Parse()
	token := os.Getenv("PLATFORMAPI_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			log.Fatal(err)
		}
		token = strings.TrimSpace(string(b))
	}
	u, err := url.Parse(*target)
	if err != nil || token == "" {
		log.Fatalf("need a valid -target and a token (%v)", err)
	}
	log.Fatal(http.ListenAndServe(*listen, proxy(u, token)))
}

// proxy forwards to target with the bearer token, keeping Host and Origin.
func proxy(target *url.URL, token string) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1, // stream server-sent events as they come
	}
}
