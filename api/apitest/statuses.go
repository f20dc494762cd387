package apitest

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/api"
	"platformapi/bunstore/pgtest"
)

// Answer is one (operation id, HTTP status) a test's server answered.
type Answer struct {
	Operation string
	Status    int
}

// Declared is each operation's declared response statuses, by operation id.
type Declared map[string]map[int]bool

// statuses is what the package's tests answered, checked by Main at the
// end of the run against what the served OpenAPI document declares.
var statuses struct {
	mu       sync.Mutex
	declared Declared
	answered map[Answer]string // the first test that saw the answer
}

// requestsMetric is the server's count of answered requests by operation
// and status: the same labels as the access log.
const requestsMetric = "platformapi_http_requests_total"

// recordStatuses takes the declared statuses from e's document (once per
// package) and, when the test ends and its server has closed, adds every
// (operation, status) the server counted to the package's record.
func (e *Env) recordStatuses() {
	statuses.mu.Lock()
	if statuses.declared == nil {
		statuses.declared = DeclaredStatuses(e.Server.API().OpenAPI())
	}
	statuses.mu.Unlock()
	e.T.Cleanup(e.addAnswers)
}

// addAnswers adds every (operation, status) e's server counted to the
// package's record, with the test's name for those first seen.
func (e *Env) addAnswers() {
	families, err := e.Metrics.Gather()
	if err != nil {
		e.T.Errorf("apitest: gather metrics: %v", err)
	}
	statuses.mu.Lock()
	defer statuses.mu.Unlock()
	if statuses.answered == nil {
		statuses.answered = map[Answer]string{}
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			a := answerOf(m.GetLabel())
			if f.GetName() == requestsMetric && statuses.answered[a] == "" {
				statuses.answered[a] = e.T.Name()
			}
		}
	}
}

// labelPair is a metric's label as the registry gathers it.
type labelPair interface {
	GetName() string
	GetValue() string
}

// answerOf is the (operation, status) of a requests metric's labels.
func answerOf[L labelPair](labels []L) Answer {
	var a Answer
	for _, l := range labels {
		switch l.GetName() {
		case "operation":
			a.Operation = l.GetValue()
		case "status":
			a.Status, _ = strconv.Atoi(l.GetValue())
		}
	}
	return a
}

// DeclaredStatuses lists each operation's numbered responses; "default"
// does not count as declaring a status.
func DeclaredStatuses(oapi *huma.OpenAPI) Declared {
	d := Declared{}
	for _, item := range oapi.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete,
			item.Options, item.Head, item.Patch, item.Trace} {
			if op == nil {
				continue
			}
			d[op.OperationID] = map[int]bool{}
			for code := range op.Responses {
				if n, err := strconv.Atoi(code); err == nil {
					d[op.OperationID][n] = true
				}
			}
		}
	}
	return d
}

// Undeclared lists, sorted, each answer of an operation of declared whose
// status that operation does not declare, with the first test that saw
// it. Answers of no operation (the router's 404 and 405, the gate, /mcp,
// the docs, probes) and 499 (the client hung up: nothing was sent) are
// outside the check.
func Undeclared(declared Declared, answered map[Answer]string) []string {
	var out []string
	for a, test := range answered {
		codes, ok := declared[a.Operation]
		if !ok || a.Status == api.StatusClientClosed || codes[a.Status] {
			continue
		}
		out = append(out, fmt.Sprintf("%s %d (first in %s)", a.Operation, a.Status, test))
	}
	slices.Sort(out)
	return out
}

// Unanswered lists, sorted, each operation of declared with the statuses
// it declares that no answer has: for information (APITEST_UNANSWERED=1),
// meaningful after a whole package's run.
func Unanswered(declared Declared, answered map[Answer]string) []string {
	var out []string
	for op, codes := range declared {
		var missing []int
		for code := range codes {
			if _, ok := answered[Answer{op, code}]; !ok {
				missing = append(missing, code)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			out = append(out, fmt.Sprint(op, " ", missing))
		}
	}
	slices.Sort(out)
	return out
}

// Main is TestMain for a package whose tests run Envs: pgtest.Main's
// run, which then fails when a server answered a status its operation
// does not declare in the OpenAPI document.
func Main(m *testing.M) { pgtest.Main(checkedRun{m}) }

// checkedRun runs the tests, then checks the statuses they answered.
type checkedRun struct{ m *testing.M }

// Run runs the tests and returns their exit code, or 1 when they passed
// but answered an undeclared status.
func (c checkedRun) Run() int {
	code := c.m.Run()
	statuses.mu.Lock()
	defer statuses.mu.Unlock()
	if os.Getenv("APITEST_UNANSWERED") != "" {
		fmt.Fprintln(os.Stderr, "apitest: declared statuses no test answered:")
		for _, u := range Unanswered(statuses.declared, statuses.answered) {
			fmt.Fprintln(os.Stderr, "\t"+u)
		}
	}
	bad := Undeclared(statuses.declared, statuses.answered)
	if len(bad) == 0 {
		return code
	}
	fmt.Fprintln(os.Stderr, "apitest: answered statuses the operation does not declare "+
		"in the OpenAPI:")
	for _, b := range bad {
		fmt.Fprintln(os.Stderr, "\t"+b)
	}
	return cmp.Or(code, 1)
}
