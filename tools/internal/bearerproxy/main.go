// Command bearerproxy is a local reverse proxy for testing MCP clients that
// cannot send a bearer token (the MCP conformance suite): it listens on a
// loopback address and forwards every request to the target with
// Authorization: Bearer <token> added, keeping the client's Host and Origin
// headers so the server's origin checks see what the client sent.
//
//	bearerproxy -listen 127.0.0.1:18788 -target http://127.0.0.1:18787 -token-file FILE
package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"log"
	"maps"
	"mime"
	"net/http"
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
// proxy forwards each request to target with the bearer token. An answer
// is read whole before it is passed on, except a text/event-stream one,
// which is copied and flushed as it comes. (httputil.ReverseProxy, used
// before, now and then found its connection to the server closed under it
// after the first 4 KB of a large chunked answer, the client's request
// still live: 2 to 5 tool lists in 100 were cut, whichever server build;
// reading whole, none in 150.)
func proxy(target *url.URL, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := forward(r, target, token)
		if err != nil {
			log.Printf("forward %s %s: %v", r.Method, r.URL, err)
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		maps.Copy(w.Header(), res.Header)
		if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "text/event-stream" {
			w.WriteHeader(res.StatusCode)
			stream(w, res.Body)
			return
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			log.Printf("read the answer to %s %s: %v", r.Method, r.URL, err)
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(body)
	})
}

// forward sends r to target (same method, path, query, headers and Host)
// with Authorization: Bearer token. The request body is read whole first:
// once the answer's header is flushed to the client, net/http may stop
// reading the client's body, and a transport still sending it then fails
// the request and closes the connection under the answer being streamed
// (an event stream cut after its first event).
func forward(r *http.Request, target *url.URL, token string) (*http.Response, error) {
	u := *target
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = r.Header.Clone()
	out.ContentLength, out.Host = int64(len(body)), r.Host
	out.Header.Set("Authorization", "Bearer "+token)
	return http.DefaultTransport.RoundTrip(out)
}

// stream copies server-sent events to w, flushing after every read. A copy
// cut short by the server's side aborts the client's answer (its reader
// sees an error, not a clean end of a shorter stream).
func stream(w http.ResponseWriter, body io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = http.NewResponseController(w).Flush()
		}
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			log.Printf("event stream cut: %v", err)
			panic(http.ErrAbortHandler)
		}
	}
}
