package api

import (
	"context"
	"net/http"

	"platformapi/resources"
)

// ProblemCodeItem is one entry of the problem-code catalogue.
type ProblemCodeItem struct {
	Code    string  `json:"code" example:"rate_limited" doc:"Stable machine code"`
	Kind    string  `json:"kind" enum:"problem,warning,operation_error" doc:"problem: an error answer; warning: on a successful answer; operation_error: a failed operation's error"`
	Title   string  `json:"title" example:"Too Many Requests" doc:"The title a problem document or a failed operation's error with this code carries: the status's reason phrase, else the code in words"`
	Status  *int    `json:"status" nullable:"true" doc:"HTTP status of a problem; null for warnings and operation errors"`
	Meaning string  `json:"meaning" doc:"What it means and what to do"`
	Retry   bool    `json:"retry" doc:"Whether the same request can succeed later (after Retry-After when sent)"`
	Next    *string `json:"next" nullable:"true" doc:"Operation id (MCP tool) that helps recover, or null"`
}

func (s *Server) registerProblems() {
	Register(s.api, Op{ID: "list-problems", Toolset: ToolsetIdentity, Public: true, Method: http.MethodGet,
		Path: "/problems", Tags: []string{"Meta"}, Summary: "Every problem code",
		Description: "The shared error catalogue: every code the server can answer in a problem document, a " +
			"warning or a failed operation, with its status, meaning and whether a retry can help. Needs no token. " +
			"Not paginated: next_cursor is always null. MCP serves it as the resource " +
			"platformapi://catalogue/problems.",
		Notes: "the shared error catalogue: every code, its status, meaning, whether a retry " +
			"helps; not an MCP tool (the MCP resource `platformapi://catalogue/problems` holds " +
			"it)",
	}, func(context.Context, *EmptyInput) (*ListOutput[ProblemCodeItem], error) {
		out := &ListOutput[ProblemCodeItem]{}
		out.Body.Items = ProblemCatalogue()
		return out, nil
	})
}

// ProblemCatalogue is the problem-code catalogue as GET /problems lists it
// (and MCP serves it as a resource), sorted by code.
func ProblemCatalogue() []ProblemCodeItem {
	cs := resources.Problems()
	out := make([]ProblemCodeItem, len(cs))
	for i, c := range cs {
		out[i] = problemCodeItem(c)
	}
	return out
}

func problemCodeItem(c resources.ProblemCode) ProblemCodeItem {
	it := ProblemCodeItem{Code: c.Code, Kind: c.Kind, Title: resources.ProblemTitle(c.Code),
		Meaning: c.Meaning, Retry: c.Retry}
	if c.Status != 0 {
		it.Status = &c.Status
	}
	if c.Next != "" {
		it.Next = &c.Next
	}
	return it
}
