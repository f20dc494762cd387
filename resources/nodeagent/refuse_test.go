package nodeagent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// refusalCase is a request the agent must refuse, and what it answers.
type refusalCase struct {
	name, method, repo, body string
	setup                    func(*testing.T, Config) // nil: the store holds models/acme/llama
	status                   int
	code                     string
}

// refusalCases are the bad inputs and the links leading out of a root.
func refusalCases() []refusalCase {
	link := func(target, name string) func(*testing.T, Config) {
		return func(t *testing.T, cfg Config) {
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, name); err != nil {
				t.Fatal(err)
			}
		}
	}
	manifest := func(content string) func(*testing.T, Config) {
		return func(t *testing.T, cfg Config) {
			writeFile(t, filepath.Join(cfg.StoreRoot, "models/acme/x", resources.CentralManifestName), content)
		}
	}
	sum := digest([]byte("w"))
	body := func(source string) string { return `{"source":"` + source + `"}` }
	llama, x := body("models/acme/llama"), body("models/acme/x")
	return []refusalCase{
		{"source climbs with ..", "PUT", "acme/llama", body("models/../../outside"), nil, 422, CodeInvalidSource},
		{"source climbs out", "PUT", "acme/llama", body("../outside"), nil, 422, CodeInvalidSource},
		{"source absolute", "PUT", "acme/llama", body("/etc"), nil, 422, CodeInvalidSource},
		{"source not clean", "PUT", "acme/llama", body("models//acme/llama/"), nil, 422, CodeInvalidSource},
		{"source empty", "PUT", "acme/llama", body(""), nil, 422, CodeInvalidSource},
		{"repo name starts with a dot", "PUT", "acme/.hidden", llama, nil, 422, CodeInvalidRepo},
		{"repo of dots", "PUT", "acme/%2e%2e", llama, nil, 422, CodeInvalidRepo},
		{"repo of three parts", "PUT", "acme/llama/x", llama, nil, 404, codeNotFound},
		{"unknown member", "PUT", "acme/llama", `{"source":"models/acme/llama","url":"https://hub"}`, nil,
			422, resources.CodeValidationFailed},
		{"not JSON", "PUT", "acme/llama", `source=models`, nil, 400, codeMalformedBody},
		{"no SHA256SUMS", "PUT", "acme/llama", llama, func(t *testing.T, cfg Config) {
			_ = os.Remove(filepath.Join(cfg.StoreRoot, "models/acme/llama", resources.CentralManifestName))
		}, 409, resources.CodeCentralCopyInvalid},
		{"malformed SHA256SUMS", "PUT", "acme/x", x, manifest("not a digest  w.bin\n"),
			409, resources.CodeCentralCopyInvalid},
		{"listed file missing", "PUT", "acme/x", x, manifest(sum + "  w.bin\n"),
			409, resources.CodeCentralCopyInvalid},
		{"listed file climbs out", "PUT", "acme/x", x, manifest(sum + "  ../../../outside/w\n"),
			409, resources.CodeCentralCopyInvalid},
		{"listed file links out of the store", "PUT", "acme/x", x, func(t *testing.T, cfg Config) {
			manifest(sum+"  w.bin\n")(t, cfg)
			link(filepath.Join(outside(cfg), "w"), filepath.Join(cfg.StoreRoot, "models/acme/x/w.bin"))(t, cfg)
		}, 409, resources.CodeCentralCopyInvalid},
		{"central copy links out of the store", "PUT", "acme/x", x, func(t *testing.T, cfg Config) {
			link(outside(cfg), filepath.Join(cfg.StoreRoot, "models/acme/x"))(t, cfg)
		}, 409, resources.CodeCentralCopyInvalid},
		{"org directory in the cache links out", "PUT", "acme/llama", llama, func(t *testing.T, cfg Config) {
			link(outside(cfg), filepath.Join(cfg.CacheRoot, "acme"))(t, cfg)
		}, 409, CodeCachePathInvalid},
		{"partial directory links out", "PUT", "acme/llama", llama, func(t *testing.T, cfg Config) {
			link(outside(cfg), filepath.Join(cfg.CacheRoot, partialDir))(t, cfg)
		}, 409, CodeCachePathInvalid},
		{"removal through an org link", "DELETE", "acme/llama", "", func(t *testing.T, cfg Config) {
			link(outside(cfg), filepath.Join(cfg.CacheRoot, "acme"))(t, cfg)
		}, 409, CodeCachePathInvalid},
		{"removal of a bad repo", "DELETE", "acme/-x", "", nil, 422, CodeInvalidRepo},
		{"read of a bad repo", "GET", "acme/-x", "", nil, 422, CodeInvalidRepo},
	}
}

// TestCopy_BadInputOrLinksOut_RefusedNothingTouched sends requests the
// agent must refuse and checks that neither root nor the directory
// outside them changed.
func TestCopy_BadInputOrLinksOut_RefusedNothingTouched(t *testing.T) {
	for _, tc := range refusalCases() {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newConfig(t)
			writeModel(t, cfg.StoreRoot, "models/acme/llama", model())
			writeFile(t, filepath.Join(outside(cfg), "llama", "w.bin"), "precious")
			writeFile(t, filepath.Join(outside(cfg), "w"), "secret")
			if tc.setup != nil {
				tc.setup(t, cfg)
			}
			ta := startAgent(t, cfg)
			before := map[string]map[string]string{}
			for _, d := range []string{cfg.StoreRoot, cfg.CacheRoot, outside(cfg)} {
				before[d] = tree(t, d)
			}
			status, b := ta.do(tc.method, PathCaches+tc.repo, tc.body)
			if p := problem(t, b); status != tc.status || p.Code != tc.code || p.Status != status {
				t.Fatalf("%s %s: %d %s, want %d %s", tc.method, tc.repo, status, b, tc.status, tc.code)
			}
			for d, want := range before {
				if diff := cmp.Diff(want, tree(t, d)); diff != "" {
					t.Fatalf("%s changed (-before +after):\n%s", d, diff)
				}
			}
		})
	}
}
