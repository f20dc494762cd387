package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"platformapi/resources"
)

// pacedRate is the rate (requests a second over the load's connections) of
// the paced verify loads: well under what either server answers at full
// speed on the bench machine, so their latency is the request's own and not
// the time it queued behind others (wrk always runs at full speed: its p99
// measures the machine's queue as much as the handler).
const pacedRate = 5000

// runPaced sends GET path with a bearer key of keys (taking turns) to the
// load's server at rate requests a second over conns connections for d.
// Connection i sends its k-th request at start + (k·conns + i)/rate, and a
// latency counts from that moment: an answer that makes later requests late
// counts their wait too (no coordinated omission).
func runPaced(ctx context.Context, base, path string, keys []string, rate, conns int,
	d time.Duration) (result, error) {
	tr := &http.Transport{MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	interval := time.Second * time.Duration(conns) / time.Duration(rate)
	start := time.Now().Add(50 * time.Millisecond)
	var mu sync.Mutex
	var lat []time.Duration
	non2xx := 0
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			mine, bad := pacedWorker(ctx, client, base+path, keys, start.Add(interval*time.Duration(i)/
				time.Duration(conns)), interval, start.Add(d), i)
			mu.Lock()
			lat, non2xx = append(lat, mine...), non2xx+bad
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lat)
	r := result{requests: len(lat), non2xx: non2xx, rps: float64(len(lat)) / d.Seconds(), cpu: cpuTimes{}}
	if len(lat) > 0 {
		r.p50, r.p99 = latency(lat[len(lat)/2]), latency(lat[len(lat)*99/100])
	}
	return r, ctx.Err()
}

// latency writes d as wrk writes its latencies: microseconds under a
// millisecond, else milliseconds, two decimals.
func latency(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.2fus", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

// pacedWorker sends one connection's requests, each at its moment (first,
// then every interval until end), and returns their latencies and how many
// answers were not 2xx (a failed request counts as one).
func pacedWorker(ctx context.Context, client *http.Client, url string, keys []string, first time.Time,
	interval time.Duration, end time.Time, turn int) ([]time.Duration, int) {
	var lat []time.Duration
	bad := 0
	for at := first; at.Before(end) && ctx.Err() == nil; at = at.Add(interval) {
		time.Sleep(time.Until(at))
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil) // a constant, valid URL
		if len(keys) > 0 {
			req.Header.Set("Authorization", "Bearer "+keys[turn%len(keys)])
			turn += 7 // a stride, so the connections (each from its own turn) do not send one key together
		}
		res, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
		}
		if err != nil || res.StatusCode >= 300 {
			bad++
		}
		lat = append(lat, time.Since(at))
	}
	return lat, bad
}

// pacedVerifySteps are the verify load and its bare reference again, paced
// at pacedRate: their p99 is the latency a gateway's forward authentication
// adds at that rate, beside the bare handler's at the same rate.
func pacedVerifySteps(bare200, srv *process, values []string) []step {
	p := probe{path: resources.GatewayVerifyPath, token: values[0]}
	return []step{
		{"bare200-paced", load{name: "bare net/http 200, paced", server: bare200, probe: p, rate: pacedRate,
			keys: values}, 0},
		{"verify-paced", load{name: "platformapi /ai-gateway/verify, paced", server: srv, probe: p,
			rate: pacedRate, keys: values}, 0},
	}
}
