package app

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/bunstore"
	"platformapi/resources"
)

// TestPortalDeployReport_WithoutPromotion_RecordsTheDeployedVersion: what
// a pipeline reports for a deploy started outside the API (a push) is
// recorded by `portal deploy report`; a failure nothing accounts for is
// refused.
func TestPortalDeployReport_WithoutPromotion_RecordsTheDeployedVersion(t *testing.T) {
	c := newCLI(t)
	shopProject(t, c)
	report := []string{"portal", "deploy", "report", "--project", "1", "--env", "dev", "--component", "www",
		"--version", "3.2.1", "--by", "pipeline:push-7"}
	if m := c.ok(report...); m["recorded"] != true {
		t.Fatalf("report: %v", m)
	}
	var got []struct {
		Env, Version, ReportedBy string
	}
	c.query("SELECT env, version, reported_by FROM deployments", &got)
	if diff := cmp.Diff([]struct{ Env, Version, ReportedBy string }{{"dev", "3.2.1", "pipeline:push-7"}}, got); diff != "" {
		t.Fatalf("deployments (-want +got):\n%s", diff)
	}
	c.refused(resources.CodeReleaseOperationNotFound, append(report, "--failed", "--reason", "boom")...)
}

// TestPortalDeployReport_PromotionAlreadyEnded_SaysNothingChanged: a report
// on a promotion that has ended changes nothing (pipelines may repeat), and
// `portal deploy report` said {"recorded": true} all the same, even for a
// failure reported after the promotion succeeded. It now says so.
func TestPortalDeployReport_PromotionAlreadyEnded_SaysNothingChanged(t *testing.T) {
	c := newCLI(t)
	st := shopProject(t, c)
	ctx, actor := context.Background(), resources.Actor{Label: "test"}
	v := "3.2.1"
	op, err := st.RequestPromotion(ctx, actor, []int64{}, 1,
		resources.PromotionRequest{Component: "www", TargetEnv: "dev", Version: &v}, nil)
	if err != nil {
		t.Fatal(err)
	}
	report := []string{"portal", "deploy", "report", "--project", "1", "--env", "dev", "--component", "www",
		"--version", v, "--by", "pipeline:run-1", "--operation", strconv.FormatInt(op.ID, 10)}
	if m := c.ok(report...); m["recorded"] != true {
		t.Fatalf("first report: %v", m)
	}
	got := c.ok(append(report, "--failed", "--reason", "late")...)
	want := map[string]any{"recorded": false, "status": "succeeded",
		"detail": "release operation 1 had already ended succeeded; this report changes nothing"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("late report (-want +got):\n%s", d)
	}
}

// shopProject creates, in c's database, the customer ACME and its project
// 1, SHOP, with the component www, and gives the store it used.
func shopProject(t *testing.T, c *cli) *bunstore.Store {
	t.Helper()
	db, err := bunstore.Open(context.Background(), c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	st, ctx, actor := bunstore.NewStore(db), context.Background(), resources.Actor{Label: "test"}
	cust, err := st.CreateCustomer(ctx, actor, resources.CustomerCreate{Customer: resources.Customer{
		ShortName: "ACME", LongName: "Acme Corp", VCSGroup: "acme", PrimaryContactEmail: "a@acme.example",
		PrimaryContactName: "Jane", BillingTier: "INTERNAL", DefaultEmailTier: 3, Edition: "sp",
		Status: "active"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateProject(ctx, actor, resources.Project{CustomerID: cust.ID, ShortName: "SHOP",
		Name: "Web shop", Kind: "cluster", Components: []string{"www"}}, nil); err != nil {
		t.Fatal(err)
	}
	return st
}
