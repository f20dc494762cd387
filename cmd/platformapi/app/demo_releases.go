package app

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"platformapi/resources"

	"github.com/uptrace/bun"
)

// releases: ten days back Jonas takes SHOP's app-api 1.4.0 from dev to
// prod (the administrator approves) and www 2.3.0 to dev; three days back
// app-api 1.5.0 reaches uat and PAY's first dev release fails in the
// pipeline.
func (d *demoWorld) releases(ctx context.Context, _ http.Handler) error {
	if err := d.m.demoAt(ctx, 10*day); err != nil {
		return err
	}
	shop, pay := d.ids["SHOP"], d.ids["PAY"]
	if err := d.promote(ctx, shop, "app-api", "dev", "1.4.0"); err != nil {
		return err
	}
	if err := d.promote(ctx, shop, "app-api", "uat", ""); err != nil {
		return err
	}
	if err := d.promote(ctx, shop, "app-api", "prod", "1.4.0"); err != nil {
		return err
	}
	if err := d.promote(ctx, shop, "www", "dev", "2.3.0"); err != nil {
		return err
	}
	if err := d.suspensions(ctx); err != nil {
		return err
	}
	if err := d.m.demoAt(ctx, 3*day); err != nil {
		return err
	}
	if err := d.promote(ctx, shop, "app-api", "dev", "1.5.0"); err != nil {
		return err
	}
	if err := d.promote(ctx, shop, "app-api", "uat", ""); err != nil {
		return err
	}
	d.sim.FailNext(1)
	return d.promote(ctx, pay, "app-api", "dev", "0.9.0")
}

// promote has Jonas request a promotion and waits for it; a prod one
// awaiting approval is approved by the administrator.
func (d *demoWorld) promote(ctx context.Context, project, component, env, version string) error {
	body := map[string]any{"component": component, "target_env": env}
	if version != "" {
		body["version"] = version
	}
	op, err := d.jon.create(ctx, "/projects/"+project+"/release-promotions", body)
	if err != nil || op["status"] != "awaiting_approval" {
		return err
	}
	rid, err := strconv.ParseInt(targetOrRelease(op), 10, 64)
	if err != nil {
		return fmt.Errorf("demo world: release id of %v", op["id"])
	}
	if _, err := d.m.store.ApproveRelease(ctx, resources.Actor{Label: demoAdmin}, rid, "Checked in uat with the customer."); err != nil {
		return err
	}
	_, err = d.jon.wait(ctx, id(op))
	return err
}

// targetOrRelease is the release operation id of a promotion operation
// ("release:<id>").
func targetOrRelease(op map[string]any) string {
	s := id(op)
	if len(s) > 8 && s[:8] == "release:" {
		return s[8:]
	}
	return s
}

// lastDays: the days before the clock's instant. Mara revokes her old
// laptop's token and notes GLOBEX's renewal; Li revokes a gateway key and
// edits a summary; Jonas asks for app-api 1.5.0 in prod, which awaits
// approval.
func (d *demoWorld) lastDays(ctx context.Context, _ http.Handler) error {
	if err := d.m.demoAt(ctx, 2*day); err != nil {
		return err
	}
	laptop, _ := strconv.ParseInt(d.ids["token:mara old laptop"], 10, 64)
	if _, err := d.m.Portal().RevokeToken(ctx, resources.Actor{Label: demoMara}, laptop); err != nil {
		return err
	}
	if _, err := d.li.do(ctx, http.MethodDelete, "/ai/gateway/keys/"+d.ids["key:legacy-bot"], nil); err != nil {
		return err
	}
	if err := d.m.demoAt(ctx, 26*hour); err != nil {
		return err
	}
	if _, err := d.jon.do(ctx, http.MethodPost, "/projects/"+d.ids["SHOP"]+"/release-promotions",
		map[string]any{"component": "app-api", "target_env": "prod", "version": "1.5.0"}); err != nil {
		return err
	}
	if err := d.m.demoAt(ctx, 5*hour); err != nil {
		return err
	}
	qwen, err := d.modelID(ctx, "Qwen/Qwen3-Coder-30B-A3B-Instruct")
	if err != nil {
		return err
	}
	if _, err := d.li.do(ctx, http.MethodPatch, "/ai/models/"+qwen,
		map[string]any{"summary": "Coding model behind the code tier; served by gpu-fra1-01."}); err != nil {
		return err
	}
	if _, err := d.mara.do(ctx, http.MethodPatch, "/customers/"+d.ids["GLOBEX"],
		map[string]any{"notes": "Renewal call booked."}); err != nil {
		return err
	}
	return d.slowCopy(ctx)
}

// slowCopy: three hours back Li starts copying BAAI/bge-m3 onto the lab VM,
// whose agent is capped (demoSlowAgent): the copy is still running, with
// its first bytes moved, when the demo starts.
func (d *demoWorld) slowCopy(ctx context.Context) error {
	if err := d.m.demoAt(ctx, 3*hour); err != nil {
		return err
	}
	bge, err := d.modelID(ctx, "BAAI/bge-m3")
	if err != nil {
		return err
	}
	op, err := d.li.do(ctx, http.MethodPut, "/node-caches/"+demoSlowAgent+"/"+bge, nil)
	if err != nil {
		return err
	}
	_, err = d.li.waitFor(ctx, id(op), func(op map[string]any) bool { // the first span moved
		p, _ := op["progress"].(map[string]any)
		return p != nil && p["bytes_done"] != 0.0
	})
	return err
}

func bunList(s []string) any { return bun.List(s) }

func formatID(id int64) string { return strconv.FormatInt(id, 10) }
