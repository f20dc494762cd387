package app

import (
	"context"
	"net/http"
)

// demoCustomer is a customer of the demo world with its projects.
type demoCustomer struct {
	body     map[string]any
	projects []map[string]any
}

var demoCustomers = []demoCustomer{
	{body: customer("ACME", "Acme Corporation", "acme", "PAYING", "enterprise", "jane.doe@acme.example", "Jane Doe"),
		projects: []map[string]any{
			project("SHOP", "Web shop", "cluster", "shop.acme.example", "app-api", "www"),
			project("PAY", "Payment gateway", "cluster", "pay.acme.example", "app-api")}},
	{body: customer("GLOBEX", "Globex Industries", "globex", "PAYING", "sp", "hank.scorpio@globex.example", "Hank Scorpio"),
		projects: []map[string]any{project("INTRANET", "Staff intranet", "cluster", "intranet.globex.example", "www")}},
	{body: customer("INITECH", "Initech Ltd", "initech", "INTERNAL", "sp", "bill.lumbergh@initech.example", "Bill Lumbergh"),
		projects: []map[string]any{project("TPS", "TPS report archive", "vm", "", "app-api")}},
	{body: customer("UMBRELLA", "Umbrella Research", "umbrella", "PAYING", "enterprise", "alice@umbrella.example", "Alice Abernathy"),
		projects: []map[string]any{
			project("LAB", "Lab notebook", "cluster", "lab.umbrella.example", "app-api", "www"),
			project("VAULT", "Sample vault", "vm", "", "www")}},
	{body: customer("HOOLI", "Hooli Labs", "hooli", "INTERNAL", "sp", "gavin@hooli.example", "Gavin Belson")},
}

func customer(short, long, group, billing, edition, email, contact string) map[string]any {
	return map[string]any{"short_name": short, "long_name": long, "vcs_group": group, "billing_tier": billing,
		"edition": edition, "primary_contact_email": email, "primary_contact_name": contact}
}

func project(short, name, kind, domain string, components ...string) map[string]any {
	p := map[string]any{"short_name": short, "name": name, "kind": kind, "components": components}
	if domain != "" {
		p["domain"] = domain
	}
	return p
}

// tenancy: Mara creates the customers and their projects three weeks back.
func (d *demoWorld) tenancy(ctx context.Context, _ http.Handler) error {
	if err := d.m.demoAt(ctx, 21*day); err != nil {
		return err
	}
	for _, c := range demoCustomers {
		made, err := d.mara.do(ctx, http.MethodPost, "/customers", c.body)
		if err != nil {
			return err
		}
		d.ids[c.body["short_name"].(string)] = id(made)
		for _, p := range c.projects {
			p["customer_id"] = id(made)
			op, err := d.mara.create(ctx, "/projects", p)
			if err != nil {
				return err
			}
			d.ids[p["short_name"].(string)] = targetID(op)
		}
	}
	return nil
}

// targetID is the id of an operation's target.
func targetID(op map[string]any) string {
	if t, ok := op["target"].(map[string]any); ok {
		return id(t)
	}
	return ""
}

// suspensions: a week back Mara suspends two customers; the day before
// the clock's instant she notes a renewal call.
func (d *demoWorld) suspensions(ctx context.Context) error {
	if err := d.m.demoAt(ctx, 7*day); err != nil {
		return err
	}
	for _, s := range []struct{ short, note string }{{"INITECH", "Unpaid invoices since September."},
		{"UMBRELLA", "Contract under legal review."}} {
		if _, err := d.mara.do(ctx, http.MethodPatch, "/customers/"+d.ids[s.short],
			map[string]any{"status": "suspended", "notes": s.note}); err != nil {
			return err
		}
	}
	return nil
}
