// Command bench measures platformapi side by side with a bare chi + pgx
// handler in one run, with wrk on loopback, and prints the results as a
// Markdown report (docs/benchmarks.md explains it):
//
//	go run ./cmd/bench                 # everything, 10 s per load
//	go run ./cmd/bench -duration 30s   # longer loads
//	go run ./cmd/bench -profile DIR    # also CPU and allocation profiles per load
//	go run ./cmd/bench -rounds 5 -only bare,get,mcp   # the loads take turns, five times
//	go run ./cmd/bench copy            # the node agent's copy of a 2 GiB model beside cp -r
//
// It creates (and drops first) the database platformapi_bench on the admin
// DSN (TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres),
// seeds 100,000 catalogue rows, 1,000,000 audit events and 10,000 live
// AI gateway keys, builds the server,
// and runs it with Redis (-redis-url, default redis://127.0.0.1:6379/15)
// when Redis answers. The reference servers it starts: `bench bare` (chi +
// pgx on the GET's query; on POST /mcp the same read as a tool call through
// mcp-go alone), `bench bare200` (a bare net/http handler answering 200,
// the reference of /ai-gateway/verify) and `bench bare200 -headers` (the
// same writing the four headers verify's answer carries).
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"time"
)

// config is what one run measures against.
type config struct {
	adminDSN string
	redisURL string
	duration time.Duration
	conns    int
	threads  int
	modes    bool   // also compare pgx statement modes
	only     string // comma-separated load keys to run (empty: all)
	server   string // prebuilt server binary (empty: build ./cmd/platformapi)
	logLevel string // the server's --log-level (info: the access log is on)
	profile  string // directory for CPU and allocation profiles of the server (empty: none)
	reuse    bool   // keep a bench database an earlier run seeded
	rounds   int    // times each load runs, the loads taking turns; figures are over all rounds
	keep     bool   // keep the work directory (the servers' logs)
	warm     bool   // send one request with each token before its load
	work     string
}

// accessLog says whether the server writes its access log at c.logLevel.
func (c config) accessLog() string {
	if c.logLevel == "debug" || c.logLevel == "info" {
		return "on (level " + c.logLevel + ", to a file)"
	}
	return "off (level " + c.logLevel + ")"
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "bare" {
		runBare(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "bare200" {
		runBare200(os.Args[2:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "copy" {
		runCopy(os.Args[2:])
		return
	}
	var c config
	flag.StringVar(&c.adminDSN, "database-url", cmp.Or(os.Getenv("TEST_DATABASE_URL"),
		"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "admin DSN of the PostgreSQL to use")
	flag.StringVar(&c.redisURL, "redis-url", "redis://127.0.0.1:6379/15", "Redis for the server (empty: none)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "length of each load")
	flag.IntVar(&c.conns, "c", 16, "wrk connections")
	flag.IntVar(&c.threads, "t", 2, "wrk threads")
	flag.BoolVar(&c.modes, "modes", true, "also measure GET under each pgx statement mode")
	flag.StringVar(&c.only, "only", "", "run only these loads (keys: bare,get,baremcp,mcp,post,keyed,audit1,"+
		"auditdeep,rss,bare200,bare200h,verify,bare200-paced,verify-paced)")
	flag.StringVar(&c.server, "server-bin", "", "measure this platformapi binary (e.g. an older build) instead of building one")
	flag.StringVar(&c.logLevel, "log-level", "info", "the server's --log-level (info: access log on, as the targets require)")
	flag.StringVar(&c.profile, "profile", "", "write CPU and allocation profiles of the server per load into this directory")
	flag.IntVar(&c.rounds, "rounds", 1, "run the loads this many times, taking turns (a slow spell of a "+
		"shared machine then falls on every load alike); figures are over all rounds")
	flag.BoolVar(&c.warm, "warm", true, "send one GET /api/v1/whoami with each token before its load, "+
		"so the load measures steady state rather than each rotated token's first use")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory: the servers' logs, the wrk scripts")
	flag.BoolVar(&c.reuse, "reuse", false, "reuse the bench database an earlier run seeded (faster; removes what its loads added, its tokens included: run one bench at a time)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, c config) error {
	if _, err := exec.LookPath("wrk"); err != nil {
		return fmt.Errorf("wrk is not installed (Debian: apt-get install wrk)")
	}
	var err error
	if c.work, err = os.MkdirTemp("", "platformapi-bench-"); err != nil {
		return err
	}
	if c.keep {
		log.Printf("work directory kept: %s", c.work)
	} else {
		defer os.RemoveAll(c.work)
	}
	if c.profile != "" {
		if err := os.MkdirAll(c.profile, 0o755); err != nil {
			return err
		}
	}
	r := &report{started: time.Now(), cfg: c}
	r.machine = machine()
	log.Printf("seeding %s (100,000 models, 1,000,000 audit events)", benchDB)
	w, err := seed(ctx, c)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if c.redisURL != "" && !redisAnswers(ctx, c.redisURL) {
		log.Printf("Redis at %s does not answer: the server runs without it", c.redisURL)
		c.redisURL = ""
	}
	r.redis = c.redisURL != ""
	if err := measure(ctx, c, w, r); err != nil {
		return err
	}
	r.print(os.Stdout)
	return nil
}
