package provider

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// needTerraform skips without TF_ACC (like the acceptance tests: these
// run terraform and tfplugindocs) and is the terraform to run.
func needTerraform(t *testing.T) string {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("runs terraform and tfplugindocs: set TF_ACC=1")
	}
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tf == "" {
		t.Fatal("terraform is not on PATH; these tests never download it")
	}
	return tf
}

// run runs a command in dir with extra environment, failing the test with
// its output when it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	out, err := output(dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// output is the standard output of a command in dir with extra
// environment, and its standard error when it fails.
func output(dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return append(out.Bytes(), errOut.Bytes()...), err
	}
	return out.Bytes(), nil
}

// generateCommand is the //go:generate line of generate.go, split.
func generateCommand(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatal("generate.go has no //go:generate line")
	return nil
}

// tree is every file under dir by its slash path relative to dir.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDocs_Fresh regenerates the docs with the go:generate line into a
// temporary directory and fails while the committed docs differ; then
// tfplugindocs validate checks the committed docs' layout and front matter.
func TestDocs_Fresh(t *testing.T) {
	needTerraform(t)
	gen := generateCommand(t)
	providerDir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rel, err := filepath.Rel(providerDir, out) // tfplugindocs takes it relative to --provider-dir
	if err != nil {
		t.Fatal(err)
	}
	run(t, ".", nil, gen[0], append(gen[1:], "--rendered-website-dir", rel)...)
	if d := cmp.Diff(tree(t, out), tree(t, docsDir)); d != "" {
		t.Errorf("docs are stale: %s (-generated +committed):\n%s", regenerate, d)
	}
	validate := slices.Clone(gen)
	validate[slices.Index(validate, "generate")] = "validate"
	run(t, ".", nil, validate[0], validate[1:]...)
}

// devOverrides is a CLI configuration that takes the provider from dir
// and nothing from any registry.
func devOverrides(dir string) string {
	return `disable_checkpoint = true
provider_installation {
  dev_overrides {
    "registry.terraform.io/platform/platformapi" = "` + dir + `"
  }
  direct {
    exclude = ["registry.terraform.io/*/*"]
  }
}
`
}

// requiredProviders is added to an example that declares no provider
// source (the resource and data source examples), as a user's root
// module would.
const requiredProviders = `terraform {
  required_providers {
    platformapi = {
      source = "registry.terraform.io/platform/platformapi"
    }
  }
}
`

// exampleDirs are the directories under examples holding .tf files.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(examplesDir, func(p string, d fs.DirEntry, err error) error {
		dir := filepath.Dir(p)
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".tf" && !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestExamples_FormattedAndValid: terraform fmt -check over every example,
// terraform validate of each example directory with the provider built
// from this tree (dev_overrides, offline), and sh -n of each import.sh.
func TestExamples_FormattedAndValid(t *testing.T) {
	tf := needTerraform(t)
	run(t, ".", nil, tf, "fmt", "-check", "-recursive", "-diff", examplesDir)
	bin := t.TempDir()
	run(t, ".", nil, "go", "build", "-o", bin+string(filepath.Separator), "..")
	cli := filepath.Join(t.TempDir(), "cli.tfrc")
	if err := os.WriteFile(cli, []byte(devOverrides(bin)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"TF_CLI_CONFIG_FILE=" + cli, "CHECKPOINT_DISABLE=1"}
	dirs := exampleDirs(t)
	if len(dirs) < 15 {
		t.Fatalf("found only %d example directories: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.ToSlash(strings.TrimPrefix(dir, examplesDir+"/")), func(t *testing.T) {
			work := copyExample(t, dir)
			out, _ := output(work, env, tf, "validate", "-json", "-no-color") // judged by its JSON
			checkValid(t, out)
			if _, err := os.Stat(filepath.Join(dir, "import.sh")); err == nil {
				run(t, ".", nil, "sh", "-n", filepath.Join(dir, "import.sh"))
			}
		})
	}
}

// copyExample copies the .tf files of dir into a new directory, adding the
// provider's source where the example has none.
func copyExample(t *testing.T, dir string) string {
	t.Helper()
	work := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	hasSource := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		hasSource = hasSource || bytes.Contains(b, []byte("required_providers"))
		if err := os.WriteFile(filepath.Join(work, filepath.Base(f)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if !hasSource {
		err := os.WriteFile(filepath.Join(work, "zz_source.tf"), []byte(requiredProviders), 0o600)
		if err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// checkValid fails on an invalid result of terraform validate -json or
// any diagnostic but the notice that dev_overrides are in effect.
func checkValid(t *testing.T, out []byte) {
	t.Helper()
	var res struct {
		Valid       bool `json:"valid"`
		Diagnostics []struct {
			Severity, Summary, Detail string
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("terraform validate -json: %v\n%s", err, out)
	}
	for _, d := range res.Diagnostics {
		if d.Summary != "Provider development overrides are in effect" {
			t.Errorf("terraform validate: %s: %s: %s", d.Severity, d.Summary, d.Detail)
		}
	}
	if !res.Valid {
		t.Error("terraform validate: not valid")
	}
}
