package resources

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var updateSchema = flag.Bool("update-inventory-schema", false, "rewrite docs/inventory.schema.json")

const schemaFile = "../docs/inventory.schema.json"

func TestInventorySchema_DocsFileIsUpToDate(t *testing.T) {
	want, err := InventorySchema()
	if err != nil {
		t.Fatal(err)
	}
	if *updateSchema {
		if err := os.WriteFile(schemaFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is stale (%v); regenerate: go test ./resources -run TestInventorySchema -update-inventory-schema", schemaFile, err)
	}
}

// compiledSchema compiles the shipped schema with a 2020-12 validator.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, _ := InventorySchema()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("inventory.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("inventory.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestInventorySchema_AcceptsTheExampleRefusesVMIDOnAPhysicalNode(t *testing.T) {
	s := compiledSchema(t)
	data, _ := os.ReadFile("testdata/inventory.yaml")
	f, err := ParseInventory("inventory.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{"example": mustJSON(t, f), "bad": `{"nodes":[{"hostname":"a1","vmid":7}]}`,
		"bad host": `{"nodes":[{"hostname":"A1"}]}`, "unknown": `{"nodes":[{"hostname":"a1","colour":"red"}]}`} {
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err := s.Validate(inst); (err == nil) != (name == "example") {
			t.Errorf("%s: schema verdict %v", name, err)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseInventory_YAMLAndJSONGiveTheSameNormalisedRoster(t *testing.T) {
	data, _ := os.ReadFile("testdata/inventory.yaml")
	y, err := ParseInventory("inventory.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	j, err := ParseInventory("roster", []byte(mustJSON(t, y))) // no extension: JSON by content
	if err != nil || mustJSON(t, j) != mustJSON(t, y) {
		t.Fatalf("json: %v\n%v\n%v", err, j, y)
	}
	vm := y.Nodes[1]
	if len(y.Nodes) != 4 || !vm.IsVirtual || *vm.ParentHost != "gpu-fra1-01" || *vm.VMID != 101 {
		t.Fatalf("parsed: %+v", y.Nodes)
	}
	if *y.Nodes[2].MgmtIP != "fd00::12" || y.Nodes[3].Services == nil || y.Nodes[0].Services[1] != "open-webui" {
		t.Fatalf("normalised: %+v", y.Nodes)
	}
}

func TestParseInventory_InvalidFilesNameTheEntryAndTheRule(t *testing.T) {
	cases := map[string]struct{ file, field, says string }{
		"pattern":     {`{"nodes":[{"hostname":"GPU_1"}]}`, "nodes[0].hostname", `nodes[0] (GPU_1): hostname "GPU_1" must match`},
		"duplicate":   {"nodes:\n- hostname: a1\n- hostname: b1\n- hostname: a1\n", "nodes[2].hostname", "nodes[2] (a1): hostname repeats nodes[0]"},
		"vmid":        {"nodes:\n- {hostname: a1, vmid: 7}\n", "nodes[0].is_virtual", "nodes[0] (a1): parent_host and vmid are only for virtual nodes"},
		"parent":      {"nodes:\n- {hostname: a1, parent_host: b1}\n", "nodes[0].is_virtual", "only for virtual nodes"},
		"self parent": {"nodes:\n- {hostname: a1, is_virtual: true, parent_host: a1}\n", "nodes[0].parent_host", "another host's name"},
		"ip":          {"nodes:\n- {hostname: a1, mgmt_ip: 10.0.0.300}\n", "nodes[0].mgmt_ip", `mgmt_ip "10.0.0.300" is not an IP address`},
		"unknown":     {"nodes:\n- {hostname: a1, colour: red}\n", "nodes[0]", `nodes[0]: json: unknown field "colour"`},
		"no nodes":    {"- a1\n", "nodes", "must be an object {nodes: [...]}"},
		"not yaml":    {"nodes: [\n", "", "neither valid JSON nor valid YAML"},
		"services":    {"nodes:\n- {hostname: a1, services: [x, x]}\n", "nodes[0].services", `service "x" is listed twice`},
		"agent scheme": {"nodes:\n- {hostname: a1, agent_url: 'ftp://10.0.0.5:9441'}\n", "nodes[0].agent_url",
			"must be an http or https URL with a host"},
		"agent host": {"nodes:\n- {hostname: a1, agent_url: 'https://:9441'}\n", "nodes[0].agent_url", "with a host"},
		"agent user": {"nodes:\n- {hostname: a1, agent_url: 'https://u:p@10.0.0.5'}\n", "nodes[0].agent_url",
			"must not carry a user, a query or a fragment"},
		"agent query":       {"nodes:\n- {hostname: a1, agent_url: 'https://10.0.0.5/?x=1'}\n", "nodes[0].agent_url", "a query"},
		"agent empty query": {"nodes:\n- {hostname: a1, agent_url: 'https://10.0.0.5?'}\n", "nodes[0].agent_url", "a query"},
		"agent relative":    {"nodes:\n- {hostname: a1, agent_url: '10.0.0.5:9441'}\n", "nodes[0].agent_url", "http or https"},
		"agent long": {"nodes:\n- {hostname: a1, agent_url: 'https://a" + strings.Repeat("b", 300) + "'}\n",
			"nodes[0].agent_url", "longer than 300"},
	}
	for name, tc := range cases {
		_, err := ParseInventory("f.yaml", []byte(tc.file))
		e, ok := AsError(err)
		if !ok || e.Code != CodeInventoryInvalid || e.Kind != KindInvalid || e.Field != tc.field || !strings.Contains(e.Detail, tc.says) {
			t.Errorf("%s: %v (field %q)", name, err, fieldOf(e))
		}
	}
}

func TestParseInventory_AgentURL_TrimmedAndTrailingSlashDropped(t *testing.T) {
	f, err := ParseInventory("f.yaml", []byte("nodes:\n- {hostname: a1, agent_url: ' https://10.0.0.5:9441/ '}\n"+
		"- {hostname: a2, agent_url: ''}\n- {hostname: a3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := []*string{f.Nodes[0].AgentURL, f.Nodes[1].AgentURL, f.Nodes[2].AgentURL}
	want := "https://10.0.0.5:9441"
	if got[0] == nil || *got[0] != want || got[1] != nil || got[2] != nil {
		t.Fatalf("agent urls: %v %v %v", got[0], got[1], got[2])
	}
}

func fieldOf(e *Error) string {
	if e == nil {
		return ""
	}
	return e.Field
}

func TestParseInventory_ListsEveryProblemAtOnce(t *testing.T) {
	_, err := ParseInventory("f.yaml", []byte("nodes:\n- {hostname: a1, vmid: 1}\n- {hostname: B}\n- {hostname: a1}\n"))
	e, _ := AsError(err)
	if e == nil || !strings.Contains(e.Detail, "3 problem(s)") || !strings.Contains(e.Detail, "nodes[1] (B)") {
		t.Fatalf("%v", err)
	}
}

func TestModelPlacement_CentralCopyAndReadyCaches(t *testing.T) {
	cases := []struct {
		central bool
		ready   int
		offline bool
		loc     string
	}{{true, 1, true, "both"}, {true, 0, false, "nas"}, {false, 2, true, "local"}, {false, 0, false, ""}}
	for _, c := range cases {
		off, loc := ModelPlacement(c.central, c.ready)
		got := ""
		if loc != nil {
			got = *loc
		}
		if off != c.offline || got != c.loc {
			t.Errorf("%v/%d: %v %q", c.central, c.ready, off, got)
		}
	}
}
