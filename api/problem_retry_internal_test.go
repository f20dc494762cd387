package api

import (
	"testing"

	"platformapi/resources"
)

// TestProblems_RetryableCodes_SendRetryAfter: every problem code the
// catalogue marks retryable is answered with Retry-After (and
// retry_after_seconds), also when the code that refused named no wait;
// codes a retry cannot cure send none (contract: "sent with … answers a
// retry can cure; absent when retrying will not help").
func TestProblems_RetryableCodes_SendRetryAfter(t *testing.T) {
	for _, c := range resources.Problems() {
		if c.Kind != resources.CodeKindProblem {
			continue
		}
		t.Run(c.Code, func(t *testing.T) {
			p := problemFromDomain(&resources.Error{Kind: kindOf(c.Status), Code: c.Code, Detail: "x"})
			p.Status = c.Status
			p.finish("/api/v1/x", "req_1")
			got := map[string]string{}
			p.headers(func(k, v string) { got[k] = v })
			_, sent := got["Retry-After"]
			if sent != c.Retry || (p.RetryAfterSeconds != nil) != c.Retry {
				t.Fatalf("retry %v in the catalogue; Retry-After %q, retry_after_seconds %v",
					c.Retry, got["Retry-After"], p.RetryAfterSeconds)
			}
		})
	}
}

// kindOf is a domain kind answered with status (any, for the statuses
// without one: the test sets the status itself).
func kindOf(status int) resources.Kind {
	for k, s := range kindStatus {
		if s == status {
			return k
		}
	}
	return resources.KindBadRequest
}
