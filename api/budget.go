package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"platformapi/resources"
)

// Result budgets of MCP tool calls, in estimated tokens (bytes of the
// result's JSON text / 4). REST answers are never cut: the contract's page
// sizes hold there.
const (
	// DefaultPageBudget bounds a list tool called without `limit`.
	DefaultPageBudget = 8_000
	// MaxResultBudget bounds every tool result.
	MaxResultBudget = 25_000
	// BytesPerToken is the estimate's ratio.
	BytesPerToken = 4
	// pageEnvelopeBytes is reserved for a page's members besides its items
	// (brackets, next_cursor, monitoring_reachable).
	pageEnvelopeBytes = 512
)

// StatusResultTooLarge is the status of result_too_large: answered only to
// an in-process call with a result budget (an MCP tool call, whose error it
// becomes), never over HTTP, so no operation declares it.
const StatusResultTooLarge = http.StatusRequestEntityTooLarge

// ResultBudget is the bound, in estimated tokens, of the results of the
// request ctx belongs to: the in-process call's Budget (the MCP adapter sets
// one on every tool call), else 0 (none: REST's defaults).
func ResultBudget(ctx context.Context) int {
	if c := callOf(ctx); c != nil {
		return c.Budget
	}
	return 0
}

// EstimateTokens is the token estimate of n bytes of JSON text.
func EstimateTokens(n int) int { return (n + BytesPerToken - 1) / BytesPerToken }

// fitBudget returns how many of the encoded items fit a page within budget
// estimated tokens beside reserve bytes of other page members, and whether
// that is fewer than all. No budget fits all.
func fitBudget(enc []json.RawMessage, budget, reserve int) (int, bool) {
	if budget <= 0 {
		return len(enc), false
	}
	size := pageEnvelopeBytes + reserve
	for i, e := range enc {
		size += len(e) + 1
		if size > budget*BytesPerToken {
			return i, true
		}
	}
	return len(enc), false
}

// firstItemTooLarge is the problem of a page whose first item alone passes
// the budget (beside reserve bytes of other page members): the caller must
// select fewer members, or, when the item would fit MaxResultBudget, pass
// limit to have that budget.
func firstItemTooLarge(item json.RawMessage, budget, reserve int) *Problem {
	d := "the next item alone is about " + strconv.Itoa(EstimateTokens(len(item))) +
		" estimated tokens, over this call's budget of " + strconv.Itoa(budget) +
		"; pass fields with the members you need to leave out the large ones"
	_, overMax := fitBudget([]json.RawMessage{item}, MaxResultBudget, reserve)
	if budget < MaxResultBudget && !overMax {
		d += ", or pass limit explicitly for a budget of " + strconv.Itoa(MaxResultBudget)
	}
	return &Problem{Status: StatusResultTooLarge, Code: resources.CodeResultTooLarge, Field: "fields", Detail: d}
}

// listTooLarge is the problem of an unpaged list that passes the budget.
func listTooLarge(fit, total, budget int) *Problem {
	return &Problem{Status: StatusResultTooLarge, Code: resources.CodeResultTooLarge, Field: "fields",
		Detail: "only " + strconv.Itoa(fit) + " of the " + strconv.Itoa(total) + " items fit this call's budget of " +
			strconv.Itoa(budget) + " estimated tokens; pass fields with the members you need"}
}
