package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
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
// The k-th request is due at start + k/rate; one pacer hands each moment to
// a connection that is free, and a latency counts from that moment: an
// answer that keeps every connection busy makes the requests due meanwhile
// late, and their wait counts too (no coordinated omission).
func runPaced(ctx context.Context, base, path string, keys []string, rate, conns int,
	d time.Duration) (result, error) {
	tr := &http.Transport{MaxConnsPerHost: conns, MaxIdleConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	due := make(chan moment, conns)
	var mu sync.Mutex
	var lat []time.Duration
	non2xx := 0
	var wg sync.WaitGroup
	cpu0 := selfCPU()
	for range conns {
		wg.Go(func() {
			mine, bad := pacedWorker(ctx, client, base+path, keys, due)
			mu.Lock()
			lat, non2xx = append(lat, mine...), non2xx+bad
			mu.Unlock()
		})
	}
	pace(ctx, time.Now().Add(50*time.Millisecond), time.Second/time.Duration(rate), d, due)
	wg.Wait()
	slices.Sort(lat)
	// The client's column is this process's CPU: it sent the load.
	r := result{requests: len(lat), non2xx: non2xx, rps: float64(len(lat)) / d.Seconds(),
		cpu: cpuTimes{"wrk": selfCPU() - cpu0}}
	if len(lat) > 0 {
		r.p50, r.p99 = latency(lat[len(lat)/2]), latency(lat[len(lat)*99/100])
	}
	return r, ctx.Err()
}

// moment is a request's due time and its place in the load.
type moment struct {
	at time.Time
	k  int
}

// pace sends due the moments from start, every interval, for d, each when
// it comes (on its own thread, see sleepUntil), then closes due. Handing a
// moment over waits while every connection is busy.
func pace(ctx context.Context, start time.Time, interval, d time.Duration, due chan<- moment) {
	defer close(due)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	end := start.Add(d)
	for k, at := 0, start; at.Before(end) && ctx.Err() == nil; k, at = k+1, at.Add(interval) {
		sleepUntil(at)
		due <- moment{at: at, k: k}
	}
}

// latency writes d as wrk writes its latencies: microseconds under a
// millisecond, else milliseconds, two decimals.
func latency(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.2fus", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

// pacedWorker sends one connection's requests, each as its moment is
// handed over, until due closes, and returns their latencies (from the
// moment) and how many answers were not 2xx (a failed request counts as one).
func pacedWorker(ctx context.Context, client *http.Client, url string, keys []string,
	due <-chan moment) ([]time.Duration, int) {
	var lat []time.Duration
	bad := 0
	for m := range due {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil) // a constant, valid URL
		if len(keys) > 0 {
			// A stride, so requests close together do not send one key.
			req.Header.Set("Authorization", "Bearer "+keys[m.k*7%len(keys)])
		}
		res, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
		}
		if err != nil || res.StatusCode >= 300 {
			bad++
		}
		lat = append(lat, time.Since(m.at))
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
