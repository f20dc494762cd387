package provider

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// The examples and docs live beside the provider's main package, in
// tfplugindocs' conventional paths.
const (
	examplesDir = "../examples"
	docsDir     = "../docs"
	regenerate  = "run go generate ./cmd/terraform-provider-platformapi/..."
)

// typeNames are the provider's declared resource and data source types.
func typeNames(t *testing.T) (resources, dataSources []string) {
	t.Helper()
	ctx := context.Background()
	p := New("test")()
	for _, f := range p.Resources(ctx) {
		var resp resource.MetadataResponse
		f().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "platformapi"}, &resp)
		resources = append(resources, resp.TypeName)
	}
	for _, f := range p.DataSources(ctx) {
		var resp datasource.MetadataResponse
		f().Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "platformapi"}, &resp)
		dataSources = append(dataSources, resp.TypeName)
	}
	return resources, dataSources
}

// hclBlocks parses an HCL file (failing the test on a syntax error).
func hclBlocks(t *testing.T, file string) hclsyntax.Blocks {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read example: %v", err)
	}
	f, diags := hclsyntax.ParseConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("parse %s: %v", file, diags)
	}
	return f.Body.(*hclsyntax.Body).Blocks
}

// declared is the set of "type.name" addresses of blocks of blockType
// ("resource" or "data") in file.
func declared(t *testing.T, file, blockType string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, b := range hclBlocks(t, file) {
		if b.Type == blockType && len(b.Labels) == 2 {
			out[b.Labels[0]+"."+b.Labels[1]] = true
		}
	}
	return out
}

// importTargets are the addresses the import blocks of file import to.
func importTargets(t *testing.T, file string) []string {
	t.Helper()
	var out []string
	for _, b := range hclBlocks(t, file) {
		if b.Type != "import" {
			continue
		}
		to, ok := b.Body.Attributes["to"]
		if !ok {
			t.Fatalf("%s: an import block without to", file)
		}
		trav, diags := hcl.AbsTraversalForExpr(to.Expr)
		if diags.HasErrors() {
			t.Fatalf("%s: import to: %v", file, diags)
		}
		out = append(out, strings.Join(traversalNames(trav), "."))
	}
	return out
}

func traversalNames(trav hcl.Traversal) []string {
	var names []string
	for _, step := range trav {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			names = append(names, s.Name)
		case hcl.TraverseAttr:
			names = append(names, s.Name)
		}
	}
	return names
}

// importCommands are the addresses of the `terraform import ADDR ID` lines
// of an import.sh.
func importCommands(t *testing.T, file string) []string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read import example: %v", err)
	}
	var out []string
	for _, line := range strings.Split(string(src), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "terraform" && f[1] == "import" {
			out = append(out, f[2])
		}
	}
	return out
}

// TestExamples_EveryResourceHasExampleAndImport walks the provider's
// declared resources: each has a resource.tf declaring it, an import.sh
// and an import-by-string-id.tf importing to a resource that resource.tf
// declares, and a generated page with both sections.
func TestExamples_EveryResourceHasExampleAndImport(t *testing.T) {
	resources, _ := typeNames(t)
	for _, name := range resources {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(examplesDir, "resources", name)
			decl := declared(t, filepath.Join(dir, "resource.tf"), "resource")
			if !hasType(decl, name) {
				t.Errorf("%s/resource.tf declares no %s (it declares %v)",
					dir, name, slices.Sorted(maps.Keys(decl)))
			}
			cmds := importCommands(t, filepath.Join(dir, "import.sh"))
			blocks := importTargets(t, filepath.Join(dir, "import-by-string-id.tf"))
			if len(cmds) == 0 || len(blocks) == 0 {
				t.Fatalf("%s: import.sh has %d terraform import lines, import-by-string-id.tf %d import blocks",
					dir, len(cmds), len(blocks))
			}
			for _, addr := range append(cmds, blocks...) {
				if !strings.HasPrefix(addr, name+".") || !decl[addr] {
					t.Errorf("%s imports to %s, which is not a %s of resource.tf", dir, addr, name)
				}
			}
			page := readPage(t, "resources", name)
			for _, want := range []string{"## Example Usage", "## Import", "terraform import " + cmds[0]} {
				if !strings.Contains(page, want) {
					t.Errorf("the page of %s lacks %q: %s", name, want, regenerate)
				}
			}
		})
	}
}

// TestExamples_EveryDataSourceHasExample walks the provider's declared
// data sources: each has a data-source.tf reading it and a generated page
// showing it.
func TestExamples_EveryDataSourceHasExample(t *testing.T) {
	_, dataSources := typeNames(t)
	for _, name := range dataSources {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(examplesDir, "data-sources", name, "data-source.tf")
			decl := declared(t, file, "data")
			if !hasType(decl, name) {
				t.Errorf("%s reads no %s (it reads %v)", file, name, slices.Sorted(maps.Keys(decl)))
			}
			page := readPage(t, "data-sources", name)
			if !strings.Contains(page, "## Example Usage") || !strings.Contains(page, `data "`+name+`"`) {
				t.Errorf("the page of %s shows no example: %s", name, regenerate)
			}
		})
	}
}

// TestExamples_NoneForUndeclaredTypes: an example directory names a type the
// provider declares (a removed or renamed type leaves none behind), and the
// provider example exists.
func TestExamples_NoneForUndeclaredTypes(t *testing.T) {
	resources, dataSources := typeNames(t)
	for sub, names := range map[string][]string{"resources": resources, "data-sources": dataSources} {
		entries, err := os.ReadDir(filepath.Join(examplesDir, sub))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		slices.Sort(names)
		if !slices.Equal(got, names) {
			t.Errorf("examples/%s has %v; the provider declares %v", sub, got, names)
		}
	}
	if len(declaredProviders(t, filepath.Join(examplesDir, "provider", "provider.tf"))) != 1 {
		t.Error("examples/provider/provider.tf configures no platformapi provider")
	}
}

func declaredProviders(t *testing.T, file string) []string {
	var out []string
	for _, b := range hclBlocks(t, file) {
		if b.Type == "provider" && len(b.Labels) == 1 && b.Labels[0] == "platformapi" {
			out = append(out, b.Labels[0])
		}
	}
	return out
}

// readPage is the generated page of a type, in docs/sub.
func readPage(t *testing.T, sub, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(docsDir, sub, strings.TrimPrefix(name, "platformapi_")+".md"))
	if err != nil {
		t.Fatalf("generated page missing (%s): %v", regenerate, err)
	}
	return string(b)
}

// hasType says whether one of the addresses is of type name.
func hasType(addrs map[string]bool, name string) bool {
	for a := range addrs {
		if strings.HasPrefix(a, name+".") {
			return true
		}
	}
	return false
}
