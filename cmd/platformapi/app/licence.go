package app

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"platformapi/resources"
)

// demoLicenceKey signs the demo licence. Its seed is public by
// construction, so only demo mode trusts its public key.
var demoLicenceKey = ed25519.NewKeyFromSeed(func() []byte {
	s := sha256.Sum256([]byte("platformapi demo licence key: trusted by serve --demo only"))
	return s[:]
}())

// demoSerial is the serial of the demo licence.
const demoSerial = "DEMO-0000-0000-0001"

// licenceVerifier trusts the configured vendor key and, in demo mode, the
// demo key. An invalid configured key is an error.
func (m *Main) licenceVerifier(demo bool) (resources.LicenceVerifier, error) {
	var v resources.LicenceVerifier
	if m.opts.LicencePublicKey != "" {
		k, err := resources.ParseLicencePublicKey(m.opts.LicencePublicKey)
		if err != nil {
			return v, fmt.Errorf("--licence-public-key: %w", err)
		}
		v.Keys = append(v.Keys, k)
	}
	if demo {
		v.Keys = append(v.Keys, demoLicenceKey.Public().(ed25519.PublicKey))
	}
	return v, nil
}

// installDemoLicence installs a demo licence (every feature, a year, no
// limits) unless a licence that is valid or in grace is installed already.
func (m *Main) installDemoLicence(ctx context.Context) error {
	v, err := m.licenceVerifier(true)
	if err != nil {
		return err
	}
	st, err := m.store.StoredLicence(ctx)
	if err != nil {
		return err
	}
	now := m.now()
	if l := v.Evaluate(st, now); l.State == resources.LicenceValid || l.State == resources.LicenceGrace {
		return nil
	}
	p := resources.LicencePayload{Serial: demoSerial, InstallationID: st.InstallationID, Edition: "demo",
		Features: []string{resources.FeatureAI, resources.FeatureBrand}, Limits: map[string]int{},
		ValidFrom:  now.Add(-time.Minute).UTC().Truncate(time.Second),
		ValidUntil: now.AddDate(1, 0, 0).UTC().Truncate(time.Second)}
	bundle, err := resources.SignLicence(demoLicenceKey, p)
	if err != nil {
		return err
	}
	_, err = m.store.InstallLicenceAs(ctx, resources.Actor{Label: demoAdmin}, bundle, p)
	return err
}

// portalLicence shows the installation id and licence state, and installs
// a bundle from the console (as PUT /licence does).
func portalLicence(opts *Options, out io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "licence", Short: "The installation id and the licence"}
	cmd.AddCommand(&cobra.Command{Use: "show", Short: "Print the installation id and the licence state", Args: cobra.NoArgs,
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			v, err := m.licenceVerifier(false)
			if err != nil {
				return err
			}
			st, err := m.store.StoredLicence(c.Context())
			if err != nil {
				return err
			}
			return PrintJSON(out, m.shownLicence(v, st))
		})})
	cmd.AddCommand(licenceInstall(opts, out))
	return cmd
}

// shownLicence is the licence as a server with the configured key sees it;
// a demo licence (which only serve --demo trusts) says so and what serve
// --demo sees.
func (m *Main) shownLicence(v resources.LicenceVerifier, st resources.StoredLicence) map[string]any {
	l := v.Evaluate(st, m.now())
	out := licenceJSON(l)
	if l.State != resources.LicenceInvalid {
		return out
	}
	demo, _ := m.licenceVerifier(true) // the configured key parsed above
	if d := demo.Evaluate(st, m.now()); d.State != resources.LicenceInvalid {
		out["demo_licence"], out["state_under_serve_demo"] = true, d.State
		out["note"] = "the installed bundle is the demo licence, signed by the demo key: serve --demo trusts " +
			"it (GET /licence there says " + d.State + "), a server without --demo does not"
	}
	return out
}

func licenceInstall(opts *Options, out io.Writer) *cobra.Command {
	var as, file string
	cmd := &cobra.Command{Use: "install", Short: "Verify and install a licence bundle", Args: cobra.NoArgs,
		RunE: withMain(opts, func(c *cobra.Command, m *Main, _ []string) error {
			by := resources.Actor{Label: as} // permission first, as the portal's page checks it
			if _, err := m.store.ActingPerson(c.Context(), by, resources.PermLicenceAdmin,
				resources.PermAdmin); err != nil {
				return err
			}
			raw, err := readBundle(c, file)
			if err != nil {
				return err
			}
			v, err := m.licenceVerifier(false)
			if err != nil {
				return err
			}
			l, err := v.Install(c.Context(), m.store, m.store.InstallLicenceAs, by, raw, m.now())
			if err != nil {
				return err
			}
			return PrintJSON(out, licenceJSON(l))
		})}
	cmd.Flags().StringVar(&as, "as", "", "e-mail of the acting person, holding licence-admin-global (required)")
	cmd.Flags().StringVar(&file, "bundle", "-", "file holding the bundle; - reads standard input")
	_ = cmd.MarkFlagRequired("as")
	return cmd
}

func readBundle(c *cobra.Command, file string) (string, error) {
	var raw []byte
	var err error
	if file == "-" {
		raw, err = io.ReadAll(io.LimitReader(c.InOrStdin(), resources.MaxLicenceBundleLen+1))
	} else {
		raw, err = os.ReadFile(file)
	}
	if err != nil {
		return "", resources.Invalid("bundle", resources.CodeLicenceBundleInvalid, "cannot read %s: %v",
			file, withoutPath(err))
	}
	if len(raw) > resources.MaxLicenceBundleLen {
		return "", resources.Invalid("bundle", resources.CodeLicenceBundleInvalid, "form: longer than %d bytes",
			resources.MaxLicenceBundleLen)
	}
	return strings.TrimSpace(string(raw)), nil
}

// licenceJSON is the licence as the portal prints it (the full serial: the
// console is the operator's).
func licenceJSON(l resources.Licence) map[string]any {
	m := map[string]any{"installation_id": l.InstallationID, "state": l.State, "installed_at": l.InstalledAt}
	if r := l.Remedy(); r != "" {
		m["remedy"] = r
	}
	if p := l.Payload; p != nil {
		m["serial"], m["edition"], m["features"], m["limits"] = p.Serial, p.Edition, p.Features, p.Limits
		m["valid_from"], m["valid_until"], m["grace_days"] = p.ValidFrom, p.ValidUntil, p.GraceDays
	}
	return m
}
