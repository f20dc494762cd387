package app

import (
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"platformapi/resources"
)

// portalCommand groups the actions reserved to a signed-in person. Each acts
// on the database directly, is audited with the acting person (--as) and
// auth kind "session", and prints JSON.
func portalCommand(opts *Options, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "portal", Short: "Actions reserved to a signed-in person in the portal"}
	cmd.AddCommand(portalAPI(opts, out), portalUser(opts, out), portalRole(opts, out),
		portalServiceAccount(opts, out), portalToken(opts, out))
	cmd.AddCommand(portalRelease(opts, out)...)
	cmd.AddCommand(portalInventory(opts, out), portalNodeKey(opts, out), portalLicence(opts, out))
	return cmd
}

func portalAPI(opts *Options, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "api", Short: "Turn the API (and MCP) on or off"}
	for _, on := range []bool{true, false} {
		use := map[bool]string{true: "enable", false: "disable"}[on]
		var as string
		short := map[bool]string{true: "Turn the API and MCP on", false: "Turn the API and MCP off: " +
			"every /api/v1 path and /mcp answer 404"}[on]
		sub := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs,
			RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
				st, err := m.Portal().SetAPIEnabled(c.Context(), resources.Actor{Label: as}, on)
				if err != nil {
					return err
				}
				return PrintJSON(out, st)
			})}
		sub.Flags().StringVar(&as, "as", "", "e-mail of the acting administrator (required)")
		_ = sub.MarkFlagRequired("as")
		cmd.AddCommand(sub)
	}
	return cmd
}

func portalUser(opts *Options, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "People"}
	var as string
	var u resources.NewUser
	create := &cobra.Command{Use: "create", Short: "Create a person", Args: cobra.NoArgs,
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			user, err := m.Portal().CreateUser(c.Context(), resources.Actor{Label: as}, u)
			if err != nil {
				return err
			}
			return PrintJSON(out, user)
		})}
	create.Flags().StringVar(&as, "as", "", "acting person (empty: the host operator, audited as ops:cli)")
	create.Flags().StringVar(&u.Email, "email", "", "e-mail address (required)")
	create.Flags().StringVar(&u.DisplayName, "name", "", "display name (required)")
	create.Flags().StringSliceVar(&u.Roles, "role", nil, "role name; repeat or comma-separate")
	_ = create.MarkFlagRequired("email")
	_ = create.MarkFlagRequired("name")
	cmd.AddCommand(create)
	return cmd
}

func portalRole(opts *Options, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "role", Short: "Roles and who holds them"}
	var as string
	var r resources.Role
	create := &cobra.Command{Use: "create NAME", Short: "Create a role with permission keys", Args: cobra.ExactArgs(1),
		RunE: withMain(opts, func(c *cobra.Command, m *Main, args []string) error {
			r.Name = args[0]
			role, err := m.Portal().CreateRole(c.Context(), resources.Actor{Label: as}, r)
			if err != nil {
				return err
			}
			return PrintJSON(out, role)
		})}
	create.Flags().StringVar(&as, "as", "", "acting administrator (empty: the host operator, audited as ops:cli)")
	create.Flags().StringSliceVar(&r.Permissions, "permissions", nil, "permission keys, comma-separated")
	create.Flags().StringVar(&r.Description, "description", "", "what the role is for")
	list := &cobra.Command{Use: "list", Short: "List roles", Args: cobra.NoArgs,
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			roles, err := m.Portal().ListRoles(c.Context())
			if err != nil {
				return err
			}
			return PrintJSON(out, map[string]any{"items": roles})
		})}
	cmd.AddCommand(create, list, roleChange(opts, out, true), roleChange(opts, out, false))
	return cmd
}

func roleChange(opts *Options, out io.Writer, grant bool) *cobra.Command {
	var as, email string
	use := map[bool]string{true: "grant ROLE", false: "revoke ROLE"}[grant]
	short := map[bool]string{true: "Give a person a role (effective on the next request)",
		false: "Take a role from a person (effective on the next request)"}[grant]
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: withMain(opts, func(c *cobra.Command, m *Main, args []string) error {
			change := m.Portal().RevokeRole
			if grant {
				change = m.Portal().GrantRole
			}
			u, err := change(c.Context(), resources.Actor{Label: as}, email, args[0])
			if err != nil {
				return err
			}
			return PrintJSON(out, u)
		})}
	cmd.Flags().StringVar(&as, "as", "", "acting administrator (empty: the host operator, audited as ops:cli)")
	cmd.Flags().StringVar(&email, "user", "", "e-mail of the person (required)")
	_ = cmd.MarkFlagRequired("user")
	return cmd
}

func portalServiceAccount(opts *Options, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "service-account", Short: "Service accounts"}
	var as string
	var sa resources.NewServiceAccount
	create := &cobra.Command{Use: "create", Short: "Create a service account", Args: cobra.NoArgs,
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			acct, err := m.Portal().CreateServiceAccount(c.Context(), resources.Actor{Label: as}, sa)
			if err != nil {
				return err
			}
			return PrintJSON(out, acct)
		})}
	create.Flags().StringVar(&as, "as", "", "acting person holding api-tokens-admin-global (required)")
	create.Flags().StringVar(&sa.Name, "name", "", "account name (required)")
	create.Flags().StringVar(&sa.Description, "description", "", "what it is for")
	create.Flags().StringSliceVar(&sa.Permissions, "permissions", nil, "permission keys, each held by the acting person")
	_ = create.MarkFlagRequired("as")
	_ = create.MarkFlagRequired("name")
	cmd.AddCommand(create)
	return cmd
}

func portalToken(opts *Options, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "API tokens"}
	cmd.AddCommand(tokenCreate(opts, out), tokenRevoke(opts, out), tokenExtend(opts, out))
	return cmd
}

func tokenCreate(opts *Options, out io.Writer) *cobra.Command {
	var as string
	var ips []string
	t := resources.NewToken{}
	cmd := &cobra.Command{Use: "create", Short: "Mint a token; prints its value once", Args: cobra.NoArgs,
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			for _, s := range ips {
				p, err := resources.ParseAllowedNetwork(s)
				if err != nil {
					return err
				}
				t.AllowedIPs = append(t.AllowedIPs, p)
			}
			minted, err := m.Portal().CreateToken(c.Context(), resources.Actor{Label: as}, t)
			if err != nil {
				return err
			}
			same := make([]string, len(minted.SameNameLive))
			for i, id := range minted.SameNameLive {
				same[i] = strconv.FormatInt(id, 10)
			}
			return PrintJSON(out, map[string]any{"id": strconv.FormatInt(minted.Token.ID, 10),
				"token": minted.Value, "expires_at": minted.Token.ExpiresAt, "same_name_live": same})
		})}
	f := cmd.Flags()
	f.StringVar(&as, "as", "", "e-mail of the minting person (required)")
	f.StringVar(&t.Name, "name", "", "token name (required)")
	f.StringSliceVar(&t.Scopes, "scopes", nil, "permission keys, comma-separated (required)")
	f.IntVar(&t.Days, "days", resources.TokenDefaultDays, "lifetime in days, 1 to 365")
	f.BoolVar(&t.AllowDestroy, "allow-destroy", false, "allow operations that archive, delete, deactivate or retire")
	f.StringSliceVar(&ips, "allowed-ips", nil, "networks (CIDR) or single addresses the token may be used from; default any")
	f.StringVar(&t.ServiceAccount, "service-account", "", "mint for this service account instead of the acting person")
	for _, name := range []string{"as", "name", "scopes"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func tokenRevoke(opts *Options, out io.Writer) *cobra.Command {
	var as string
	cmd := &cobra.Command{Use: "revoke ID", Short: "Revoke a token at once", Args: cobra.ExactArgs(1),
		RunE: withMain(opts, func(c *cobra.Command, m *Main, args []string) error {
			id, err := tokenID(args[0])
			if err != nil {
				return err
			}
			t, err := m.Portal().RevokeToken(c.Context(), resources.Actor{Label: as}, id)
			if err != nil {
				return err
			}
			return PrintJSON(out, tokenJSON(t))
		})}
	cmd.Flags().StringVar(&as, "as", "", "acting person (required)")
	_ = cmd.MarkFlagRequired("as")
	return cmd
}

func tokenExtend(opts *Options, out io.Writer) *cobra.Command {
	var as string
	var days int
	cmd := &cobra.Command{Use: "extend ID", Short: "Set a token's expiry to DAYS from now", Args: cobra.ExactArgs(1),
		RunE: withMain(opts, func(c *cobra.Command, m *Main, args []string) error {
			id, err := tokenID(args[0])
			if err != nil {
				return err
			}
			t, err := m.Portal().ExtendToken(c.Context(), resources.Actor{Label: as}, id, days)
			if err != nil {
				return err
			}
			return PrintJSON(out, tokenJSON(t))
		})}
	cmd.Flags().StringVar(&as, "as", "", "acting person holding api-tokens-admin-global (required)")
	cmd.Flags().IntVar(&days, "days", resources.TokenDefaultDays, "new lifetime from now, 1 to 365 days")
	_ = cmd.MarkFlagRequired("as")
	return cmd
}

func tokenID(s string) (int64, error) { return positiveID("id", s) }

// tokenJSON is a token's metadata as the portal prints it (never a value).
func tokenJSON(t resources.APIToken) map[string]any {
	return map[string]any{"id": strconv.FormatInt(t.ID, 10), "name": t.Name, "kind": t.Kind, "scopes": t.Scopes,
		"allow_destroy": t.AllowDestroy, "expires_at": t.ExpiresAt, "revoked_at": t.RevokedAt}
}
