package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"platformapi/api/apitest"
	"platformapi/bunstore/pgtest"
	"platformapi/resources"
)

// cliConfig keeps terraform off the network in acceptance tests: no
// version checkpoint, and no provider installation source at all (the
// provider under test is reattached in-process).
const cliConfig = `disable_checkpoint = true
provider_installation {
  direct {
    exclude = ["registry.terraform.io/*/*"]
  }
}
`

func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC") != "" {
		dir, err := os.MkdirTemp("", "platformapi-tfcli")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		cfg := filepath.Join(dir, "cli.tfrc")
		if err := os.WriteFile(cfg, []byte(cliConfig), 0o600); err != nil {
			panic(err)
		}
		os.Setenv("TF_CLI_CONFIG_FILE", cfg)
		os.Setenv("CHECKPOINT_DISABLE", "1")
		if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
			if p, err := exec.LookPath("terraform"); err == nil {
				os.Setenv("TF_ACC_TERRAFORM_PATH", p)
			}
		}
	}
	pgtest.Main(m)
}

// acc is a real server on a real database for one acceptance test, with
// a token holding every token-allowed scope (token) and one that also
// carries Allow destroy (destroyer).
type acc struct {
	*apitest.Env
	token, destroyer string
}

func newAcc(t *testing.T, o apitest.Options) *acc {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		t.Fatal("terraform is not on PATH; acceptance tests never download it")
	}
	e := apitest.New(t, o)
	var scopes []string
	for _, p := range resources.Permissions() {
		if resources.TokenAllowed(p.Key) {
			scopes = append(scopes, p.Key)
		}
	}
	return &acc{Env: e,
		token:     e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "tf", Scopes: scopes}),
		destroyer: e.TokenFor(apitest.AdminEmail, resources.NewToken{Name: "tf-destroy", Scopes: scopes, AllowDestroy: true}),
	}
}

// factories run the provider in-process (protocol 6).
var factories = map[string]func() (tfprotov6.ProviderServer, error){
	"platformapi": providerserver.NewProtocol6WithError(New("test")()),
}

// provider is a provider block for base (default: the env's server).
func (a *acc) provider(token string, allowDestroy bool, base ...string) string {
	url := a.HTTP.URL
	if len(base) > 0 {
		url = base[0]
	}
	return fmt.Sprintf("provider \"platformapi\" {\n  base_url = %q\n  token = %q\n  allow_destroy = %t\n}\n",
		url, token, allowDestroy)
}

// get reads path with the destroy-capable token and decodes the object.
func (a *acc) get(t *testing.T, path string) map[string]any {
	t.Helper()
	r := a.Do("GET", path, a.destroyer, nil)
	if r.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// says matches the parts in order, each spelled literally but with any
// run of spaces matching any whitespace (terraform wraps its messages).
func says(parts ...string) *regexp.Regexp {
	var q []string
	for _, p := range parts {
		q = append(q, strings.Join(strings.Fields(regexp.QuoteMeta(p)), `\s+`))
	}
	return regexp.MustCompile(`(?s)` + strings.Join(q, ".*"))
}

// TestAcc_TokenRefused_DiagnosticNamesTheTokenSetting: a 401 said only
// "the token is malformed" (or "expired at …"), not which setting holds
// the token nor where a token is made.
func TestAcc_TokenRefused_DiagnosticNamesTheTokenSetting(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	const bad = "svc_pat_NotARealTokenAtAll0000000000000000"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: a.provider(bad, false) + "data \"platformapi_whoami\" \"me\" {}\n",
			ExpectError: says("read whoami failed: token_invalid", "the provider's token",
				"PLATFORMAPI_TOKEN", "/portal/tokens"),
		}},
	})
}

// TestAcc_BaseURLWithoutScheme_ProviderError: a base_url without its
// scheme failed every read with a URL parser's message naming no setting.
func TestAcc_BaseURLWithoutScheme_ProviderError(t *testing.T) {
	a := newAcc(t, apitest.Options{})
	host := strings.TrimPrefix(a.HTTP.URL, "http://")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config:      a.provider(a.token, false, host) + "data \"platformapi_whoami\" \"me\" {}\n",
			ExpectError: says("invalid base_url", host, "http:// or https://"),
		}},
	})
}
