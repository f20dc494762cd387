package api

import (
	"context"

	"platformapi/resources"
)

// createCustomer checks the code host for a colliding group, writes the
// customer (resuming a keyed retry past that point), then creates or adopts
// the group; a code-host failure becomes a warning.
func (s *Server) createCustomer(ctx context.Context, in *CreateCustomerInput) (*CustomerCreatedOutput, error) {
	c, err := in.Body.domain()
	if err != nil {
		return nil, err
	}
	lease := LeaseFrom(ctx)
	if !lease.Resumed(resources.RecoveryCustomerCreated) {
		if err := s.refuseCollision(ctx, c.VCSGroup); err != nil {
			return nil, err
		}
	}
	created, err := s.svc.Customers.CreateCustomer(ctx, ActorFrom(ctx), c, lease)
	if err != nil {
		return nil, err
	}
	out := &CustomerCreatedOutput{Location: Prefix + "/customers/" + formatID(created.ID), Body: customerView(created)}
	if _, err := s.svc.CodeHost.EnsureGroup(ctx, created.VCSGroup, created.LongName); err != nil {
		loggerFrom(ctx, s.cfg.Logger).Warn("code-host group not created", "customer_id", created.ID, "error", err)
		out.Body.Warnings = append(out.Body.Warnings, Warning{Code: resources.CodeVCSGroupFailed,
			Message: "The customer exists, but its code-host group " + created.VCSGroup + " could not be created or adopted."})
	}
	return out, nil
}

// refuseCollision answers 409 vcs_group_collision when a group that cannot
// be adopted holds the path; an unreachable code host does not block. When
// the platform itself holds the path (a customer's group, adopted while
// empty and filled since, or a tenant's slug) the answer is 409
// vcs_group_taken, as the write would give.
func (s *Server) refuseCollision(ctx context.Context, path string) error {
	g, err := s.svc.CodeHost.FindGroup(ctx, path)
	if err != nil || g == nil || g.Adoptable {
		return nil
	}
	held, err := s.vcsGroupHeld(ctx, path)
	if err != nil {
		return err
	}
	if held {
		return resources.VCSGroupTaken(path)
	}
	e := resources.Errorf(resources.KindConflict, resources.CodeVCSGroupCollision,
		"a code-host group %s exists that the platform cannot adopt", path)
	e.Field = "vcs_group"
	return e
}

// vcsGroupHeld reports whether a customer's vcs_group or a tenant's slug
// is path.
func (s *Server) vcsGroupHeld(ctx context.Context, path string) (bool, error) {
	one := resources.PageQuery{Limit: 1}
	c, err := s.svc.Customers.ListCustomers(ctx, resources.CustomerFilter{VCSGroup: path}, one)
	if err != nil || len(c.Items) > 0 {
		return len(c.Items) > 0, err
	}
	t, err := s.svc.Tenants.ListTenants(ctx, resources.TenantFilter{Slug: path}, one)
	return len(t.Items) > 0, err
}

func (s *Server) getCustomer(ctx context.Context, in *GetCustomerInput) (*CustomerOutput, error) {
	c, err := s.svc.Customers.GetCustomer(ctx, parseID(in.CustomerID))
	if err != nil {
		return nil, err
	}
	out := &CustomerOutput{Body: customerView(*c)}
	if in.Include == "vcs_status" {
		out.Body.VCSStatus, out.Body.Warnings = s.vcsStatus(ctx, c.VCSGroup)
	}
	return out, nil
}

// vcsStatus looks the group up live, read-only.
func (s *Server) vcsStatus(ctx context.Context, path string) (Nullable[VCSStatus], []Warning) {
	g, err := s.svc.CodeHost.FindGroup(ctx, path)
	switch {
	case err != nil: // every failure but a collision wraps ErrCodeHostUnreachable
		return NullOf[VCSStatus](nil), []Warning{{Code: resources.CodeVCSStatusUnavailable,
			Message: "The code host could not be reached; the group's status is unknown."}}
	case g == nil:
		return NullOf(&VCSStatus{State: resources.VCSStateMissing}), nil
	}
	url := g.WebURL
	return NullOf(&VCSStatus{State: resources.VCSStatePresent, WebURL: &url}), nil
}
