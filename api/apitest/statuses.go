package apitest

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
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

// statuses is what the package's tests answered: each answer is checked
// against the document of the server that gave it when its test ends, and
// Main fails the run when one was undeclared. Each map keeps the first
// test that saw the answer.
var statuses struct {
	mu         sync.Mutex
	declared   Declared          // every server's declared statuses
	answered   map[Answer]string // every answer
	undeclared map[Answer]string // the answers their operation does not declare
}

// requestsMetric is the server's count of answered requests by operation
// and status: the same labels as the access log.
const requestsMetric = "platformapi_http_requests_total"

// recordStatuses checks, when the test ends and its server has closed,
// every (operation, status) the server counted (registered before the
// server's own cleanup, so it runs after it).
func (e *Env) recordStatuses() { e.T.Cleanup(e.checkStatuses) }

// checkStatuses adds the answers e's server counted to the package's
// record and those its document does not declare to the undeclared ones.
func (e *Env) checkStatuses() {
	families, err := e.Metrics.Gather()
	if err != nil {
		e.T.Errorf("apitest: gather metrics: %v", err)
	}
	answered := map[Answer]string{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == requestsMetric {
				answered[answerOf(m.GetLabel())] = e.T.Name()
			}
		}
	}
	oapi := e.Server.API().OpenAPI()
	answered = OverHTTP(oapi, answered)
	declared := DeclaredStatuses(oapi)
	statuses.mu.Lock()
	defer statuses.mu.Unlock()
	if statuses.answered == nil {
		statuses.declared, statuses.answered = Declared{}, map[Answer]string{}
		statuses.undeclared = map[Answer]string{}
	}
	for op, codes := range declared {
		statuses.declared[op] = codes // the same operation declares the same everywhere
	}
	for a, test := range answered {
		statuses.answered[a] = cmp.Or(statuses.answered[a], test)
	}
	for _, a := range Undeclared(declared, answered) {
		statuses.undeclared[a] = cmp.Or(statuses.undeclared[a], answered[a])
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

// OverHTTP is answered without the answers of oapi's operations that only
// an in-process call (api.Invoke, an MCP tool call) gets and no HTTP client
// ever does: a GET's api.StatusResultTooLarge (the tool's result budget,
// which becomes the tool's error). Over HTTP a GET never answers 413 under
// its operation: it reads no body, and the router's 413 comes before
// routing. The request metric counts both kinds alike.
func OverHTTP(oapi *huma.OpenAPI, answered map[Answer]string) map[Answer]string {
	out := maps.Clone(answered)
	for op := range api.Operations(oapi) {
		if op.Method == http.MethodGet {
			delete(out, Answer{op.OperationID, api.StatusResultTooLarge})
		}
	}
	return out
}

// DeclaredStatuses lists each operation's numbered responses; "default"
// does not count as declaring a status.
func DeclaredStatuses(oapi *huma.OpenAPI) Declared {
	d := Declared{}
	for op := range api.Operations(oapi) {
		d[op.OperationID] = map[int]bool{}
		for code := range op.Responses {
			if n, err := strconv.Atoi(code); err == nil {
				d[op.OperationID][n] = true
			}
		}
	}
	return d
}

// Undeclared lists, sorted, each answer of an operation of declared whose
// status that operation does not declare. Answers of no operation (the
// router's 404 and 405, the gate, /mcp, the docs, probes) and 499 (the
// client hung up: nothing was sent) are outside the check.
func Undeclared(declared Declared, answered map[Answer]string) []Answer {
	var out []Answer
	for a := range answered {
		codes, ok := declared[a.Operation]
		if ok && a.Status != api.StatusClientClosed && !codes[a.Status] {
			out = append(out, a)
		}
	}
	return sortAnswers(out)
}

// sortAnswers sorts as by operation, then status, and returns it.
func sortAnswers(as []Answer) []Answer {
	slices.SortFunc(as, func(x, y Answer) int {
		return cmp.Or(cmp.Compare(x.Operation, y.Operation), cmp.Compare(x.Status, y.Status))
	})
	return as
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
	if len(statuses.undeclared) == 0 {
		return code
	}
	fmt.Fprintln(os.Stderr, "apitest: answered statuses the operation does not declare "+
		"in the OpenAPI:")
	for _, a := range sortAnswers(slices.Collect(maps.Keys(statuses.undeclared))) {
		fmt.Fprintf(os.Stderr, "\t%s %d (first in %s)\n", a.Operation, a.Status,
			statuses.undeclared[a])
	}
	return cmp.Or(code, 1)
}
