package api_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/api/apitest"
)

// TestReleases_PipelineUnreachableToTheLastAttempt_PromotionFailsPipelineUnavailable:
// a promotion whose pipeline stayed unreachable through the dispatch job's
// last attempt stayed `running` for ever (River discarded the job and
// nothing ended the release operation), so a caller polling until
// succeeded or failed never stopped. It now ends failed with operation
// error pipeline_unavailable, and nothing is deployed.
func TestReleases_PipelineUnreachableToTheLastAttempt_PromotionFailsPipelineUnavailable(t *testing.T) {
	e, tok := projectEnv(t)
	pid, _ := activeProject(t, e, tok, "", nil)
	e.Pipeline.SetUnavailable(true)
	op := acceptedPromotion(t, postPromotion(e, tok, pid, promotion("app-api", "dev", "5.0.0")))
	waitDispatchFailedOnce(t, e)
	// The next attempt is the last one (25 would span weeks).
	if _, err := e.Store.DB().ExecContext(context.Background(), `UPDATE river_job
		SET max_attempts = attempt + 1, scheduled_at = now() WHERE kind = 'release_promotion'`); err != nil {
		t.Fatal(err)
	}
	done := apitest.PollOperation(t, e, tok, op["id"].(string), "failed")
	oe, _ := done["error"].(map[string]any)
	got := map[string]any{"code": oe["code"], "result": done["result"], "finished": done["finished_at"] != nil}
	want := map[string]any{"code": "pipeline_unavailable", "result": nil, "finished": true}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("operation (-want +got):\n%s\n%v", d, done)
	}
	if n := len(e.Pipeline.Runs()); n != 0 {
		t.Fatalf("runs: %d", n)
	}
}
