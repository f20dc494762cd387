package api

import (
	"context"
	"net/http"
	"time"

	"platformapi/resources"
)

// User is a person of the installation as the API shows it; there is no
// password member, ever.
type User struct {
	ID            string     `json:"id" example:"7"`
	Email         string     `json:"email" example:"jane@example.com" doc:"Stored normalised"`
	DisplayName   string     `json:"display_name" example:"Jane Doe"`
	Roles         []string   `json:"roles" doc:"Role names, sorted"`
	Status        string     `json:"status" doc:"active or deactivated, …"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	DeactivatedAt *time.Time `json:"deactivated_at" nullable:"true" doc:"When the person was deactivated; null while active"`
}

// UserInvite is the body of POST /users.
type UserInvite struct {
	Email       string   `json:"email" minLength:"3" maxLength:"320" doc:"Stored normalised; unique regardless of case"`
	DisplayName string   `json:"display_name" minLength:"1" maxLength:"120"`
	Roles       []string `json:"roles,omitempty" maxItems:"20" uniqueItems:"true" doc:"Role names; each must exist and carry only keys the caller holds"`
}

// UserPatch is the merge-patch body of PATCH /users/{id}; no member is
// nullable and email cannot be changed.
type UserPatch struct {
	DisplayName Optional[string]   `json:"display_name,omitzero" minLength:"1" maxLength:"120"`
	Roles       Optional[[]string] `json:"roles,omitzero" maxItems:"20" uniqueItems:"true" doc:"Replaces the set; roles newly given must carry only keys the caller holds"`
}

func userView(u resources.User) User {
	out := User{ID: formatID(u.ID), Email: u.Email, DisplayName: u.DisplayName, Roles: u.Roles, Status: u.Status,
		CreatedAt: u.CreatedAt.UTC(), UpdatedAt: u.UpdatedAt.UTC()}
	if u.DeactivatedAt != nil {
		at := u.DeactivatedAt.UTC()
		out.DeactivatedAt = &at
	}
	if out.Roles == nil {
		out.Roles = []string{}
	}
	return out
}

// Inputs and outputs of the user operations.
type (
	ListUsersInput struct {
		ListParams
		Email  string   `query:"email" maxLength:"320" doc:"E-mail address, normalised; exact apart from case"`
		Status []string `query:"status" enum:"active,deactivated"`
		Role   string   `query:"role" maxLength:"40" doc:"Holds this role"`
	}
	UserIDInput struct {
		UserID string `path:"user_id" pattern:"^[1-9][0-9]{0,17}$" doc:"User id"`
	}
	InviteUserInput struct {
		Body UserInvite
	}
	PatchUserInput struct {
		UserIDInput
		Body UserPatch `contentType:"application/merge-patch+json"`
	}
	UserOutput struct {
		Body User
	}
	UserCreatedOutput struct {
		Location string `header:"Location" doc:"/api/v1/users/{id}"`
		Body     User
	}
)

var (
	usersRead  = []string{resources.PermUsersRead, resources.PermUsersWrite}
	usersWrite = []string{resources.PermUsersWrite}
)

func (s *Server) registerUsers() {
	tags := []string{"Users"}
	Register(s.api, Op{ID: "list-users", Toolset: ToolsetTenancy, Method: http.MethodGet, Path: "/users", Tags: tags,
		Summary: "List users", Permissions: usersRead, Errors: []int{http.StatusBadRequest},
		Description: "People in id order, deactivated included; filters combine. email is normalised and matched " +
			"regardless of case; role lists the holders of that role.",
		Notes: "filters `email`, `status`, `role`",
	}, s.listUsers)
	Register(s.api, Op{ID: "invite-user", Toolset: ToolsetTenancy, Method: http.MethodPost, Path: "/users", Tags: tags, Status: http.StatusCreated,
		Summary: "Invite a user", Permissions: usersWrite, Idempotent: true,
		Errors: []int{http.StatusBadRequest, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Creates an active person with roles; no password is set or returned. 409 email_taken (case-insensitive); " +
			"422 role_not_found (field roles); 403 role_not_grantable when a role carries a permission key the calling " +
			"token's effective scopes lack (detail and remedy name the missing keys; every one is needed).",
		Notes: "201; `Idempotency-Key`; no password member anywhere; 409 `email_taken`",
	}, s.inviteUser)
	Register(s.api, Op{ID: "get-user", Toolset: ToolsetTenancy, Method: http.MethodGet, Path: "/users/{user_id}", Tags: tags,
		Summary: "Read a user", Permissions: usersRead, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "One person's e-mail, display name, roles and status (deactivated users included).",
		Notes:       "404 `user_not_found`",
	}, s.getUser)
	Register(s.api, Op{ID: "patch-user", Toolset: ToolsetTenancy, Method: http.MethodPatch, Path: "/users/{user_id}", Tags: tags,
		Summary: "Change a user (JSON Merge Patch)", Permissions: usersWrite,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity},
		Description: "Only the members sent change; neither is nullable and email cannot be changed. roles replaces the set " +
			"(422 role_not_found; 403 role_not_grantable when a newly given role carries a key the caller lacks). " +
			"A deactivated user is 409 user_deactivated. A patch that changes nothing is not audited.",
		Notes: "display name and roles",
	}, s.patchUser)
	Register(s.api, Op{ID: "deactivate-user", Toolset: ToolsetTenancy, Method: http.MethodDelete, Path: "/users/{user_id}", Tags: tags,
		Summary: "Deactivate a user", Permissions: usersWrite, Destroy: true, Status: http.StatusNoContent,
		Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusConflict},
		Description: "Deactivates (never deletes) a person: their tokens answer 401 principal_disabled from the next " +
			"request. Deactivating a deactivated user succeeds and changes nothing. Nobody can deactivate themself " +
			"(409 cannot_deactivate_self), nor the last active administrator (409 last_administrator).",
		Notes: "deactivates (never deletes); the person's tokens then answer 401 " +
			"`principal_disabled`; never the last administrator (409 `last_administrator`)",
	}, s.deactivateUser)
}

func (s *Server) listUsers(ctx context.Context, in *ListUsersInput) (*ListOutput[User], error) {
	f := resources.UserFilter{Status: in.Status, Role: in.Role}
	if in.Email != "" {
		email, err := resources.NormalizeEmail("email", in.Email)
		if err != nil {
			return nil, &resources.Error{Kind: resources.KindBadRequest, Code: CodeInvalidParameter,
				Field: "email", Detail: "the email filter is not an e-mail address"}
		}
		f.Email = email
	}
	return listPage(ctx, s, "users", f, in.page(), func(q resources.PageQuery) (resources.Page[resources.User], error) {
		return s.svc.Users.ListUsers(ctx, f, q)
	}, userView)
}

func (s *Server) getUser(ctx context.Context, in *UserIDInput) (*UserOutput, error) {
	u, err := s.svc.Users.GetUser(ctx, parseID(in.UserID))
	if err != nil {
		return nil, err
	}
	return &UserOutput{Body: userView(*u)}, nil
}

// scopesOf is the calling token's effective scopes: they bound the roles
// the caller may give.
func scopesOf(ctx context.Context) []string {
	if cred := CredentialFrom(ctx); cred != nil {
		return cred.EffectiveScopes()
	}
	return nil
}

func (s *Server) inviteUser(ctx context.Context, in *InviteUserInput) (*UserCreatedOutput, error) {
	b := in.Body
	u, err := s.svc.Users.InviteUser(ctx, ActorFrom(ctx),
		resources.NewUser{Email: b.Email, DisplayName: b.DisplayName, Roles: b.Roles}, scopesOf(ctx), LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	return &UserCreatedOutput{Location: Prefix + "/users/" + formatID(u.ID), Body: userView(u)}, nil
}

func (s *Server) patchUser(ctx context.Context, in *PatchUserInput) (*UserOutput, error) {
	p := resources.UserPatch{DisplayName: in.Body.DisplayName.Patch(), Roles: in.Body.Roles.Patch()}
	u, err := s.svc.Users.PatchUser(ctx, ActorFrom(ctx), parseID(in.UserID), p, scopesOf(ctx))
	if err != nil {
		return nil, err
	}
	return &UserOutput{Body: userView(u)}, nil
}

func (s *Server) deactivateUser(ctx context.Context, in *UserIDInput) (*struct{}, error) {
	return nil, s.svc.Users.DeactivateUser(ctx, ActorFrom(ctx), parseID(in.UserID))
}
