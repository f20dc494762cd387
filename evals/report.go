package evals

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a run of several suites (the --json output).
type Report struct {
	Agent      string        `json:"agent"`
	Repeat     int           `json:"repeat"`
	Suites     []SuiteResult `json:"suites"`
	Passed     int           `json:"passed"`      // suites that passed every run
	Failed     int           `json:"failed"`      // suites that failed a run
	PassHatK   float64       `json:"pass_hat_k"`  // share of suites passing all Repeat runs (pass^k)
	PassRate   float64       `json:"pass_rate"`   // share of runs that passed (pass^1)
	Calls      int           `json:"calls"`       // tool calls, all runs
	TokensRead int           `json:"tokens_read"` // estimated tokens of every result, all runs
	LatencyMS  *int64        `json:"latency_ms,omitempty"`
	runs       int
	passedRuns int
}

// SuiteResult is one suite's runs.
type SuiteResult struct {
	Suite string      `json:"suite"`
	File  string      `json:"file"`
	Pass  bool        `json:"pass"`
	Runs  []RunResult `json:"runs"`
}

// RunResult is one run of a suite.
type RunResult struct {
	Pass    bool     `json:"pass"`
	Reasons []string `json:"reasons,omitempty"`
	// Lines are the suite file's line of each reason, index for index: the
	// failing path check or expectation member, the capture, else the
	// call, setup step or turn (1: the file as a whole).
	Lines      []int         `json:"reason_lines,omitempty"`
	Calls      int           `json:"calls"`
	TokensRead int           `json:"tokens_read"`
	Tools      []CallSummary `json:"tools"`
	Answers    []string      `json:"answers,omitempty"` // agent-driven: final answer per turn
	LatencyMS  *int64        `json:"latency_ms,omitempty"`
}

// CallSummary is one tool call of a run.
type CallSummary struct {
	Tool    string `json:"tool"`
	IsError bool   `json:"is_error"`
	Tokens  int    `json:"tokens"`
}

func (r *Report) add(s SuiteResult) {
	r.Suites = append(r.Suites, s)
	if s.Pass {
		r.Passed++
	} else {
		r.Failed++
	}
	for _, run := range s.Runs {
		r.runs++
		if run.Pass {
			r.passedRuns++
		}
		r.Calls += run.Calls
		r.TokensRead += run.TokensRead
	}
}

func (r *Report) finish(d time.Duration, noTiming bool) {
	if len(r.Suites) > 0 {
		r.PassHatK = float64(r.Passed) / float64(len(r.Suites))
	}
	if r.runs > 0 {
		r.PassRate = float64(r.passedRuns) / float64(r.runs)
	}
	if !noTiming {
		ms := d.Milliseconds()
		r.LatencyMS = &ms
	}
}

// OK reports whether every suite passed every run.
func (r *Report) OK() bool { return r.Failed == 0 }

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteTable writes the report for people: one line per suite, the
// reasons of failures below it (each after its suite's file, on one line
// and cut past maxTableReason bytes: WriteJSON has them whole), and
// the totals.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUITE\tRESULT\tRUNS\tCALLS\tTOKENS\tLATENCY")
	for _, s := range r.Suites {
		passed, calls, tokens, ms := 0, 0, 0, int64(0)
		for _, run := range s.Runs {
			if run.Pass {
				passed++
			}
			calls, tokens = calls+run.Calls, tokens+run.TokensRead
			if run.LatencyMS != nil {
				ms += *run.LatencyMS
			}
		}
		n := len(s.Runs)
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%d\t%s\n", s.Suite, map[bool]string{true: "pass", false: "FAIL"}[s.Pass],
			passed, n, calls/n, tokens/n, latency(ms/int64(n), r.LatencyMS != nil))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Suites {
		for i, run := range s.Runs {
			for k, reason := range run.Reasons {
				at := s.File
				if k < len(run.Lines) && run.Lines[k] > 0 {
					at = fmt.Sprintf("%s:%d", s.File, run.Lines[k])
				}
				fmt.Fprintf(w, "%s: %s run %d: %s\n", at, s.Suite, i+1, tableReason(reason))
			}
		}
	}
	total := "-"
	if r.LatencyMS != nil {
		total = (time.Duration(*r.LatencyMS) * time.Millisecond).String()
	}
	_, err := fmt.Fprintf(w, "\n%d passed, %d failed (agent %s, pass^%d %.2f, pass rate %.2f, %d calls, "+
		"%d tokens read, %s)\n", r.Passed, r.Failed, r.Agent, r.Repeat, r.PassHatK, r.PassRate, r.Calls, r.TokensRead, total)
	return err
}

// maxTableReason bounds a reason in the table, in bytes.
const maxTableReason = 600

// tableReason is a reason as the table shows it: each run of white space
// (a server's answer may hold newlines) one space, cut past
// maxTableReason bytes as cut does.
func tableReason(reason string) string {
	return cut(strings.Join(strings.Fields(reason), " "), maxTableReason)
}

func latency(ms int64, timed bool) string {
	if !timed {
		return "-"
	}
	return fmt.Sprintf("%dms", ms)
}
