package resources

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/invopop/jsonschema"
	"gopkg.in/yaml.v3"
)

// CodeInventoryInvalid is the code of an inventory file that breaks a rule.
const CodeInventoryInvalid = "inventory_invalid"

// Limits of an inventory entry.
const (
	maxInventoryText   = 300 // specs_summary
	maxInventoryLabel  = 80  // gpu_class, site, each service
	maxVMID            = 999999999
	maxInventoryFaults = 20 // problems listed in one error
	maxAgentURL        = 300
)

// InventoryFile is the hardware inventory: the AI node roster. Its JSON
// Schema is InventorySchema (shipped as docs/inventory.schema.json); the
// rules are enforced by Validate.
type InventoryFile struct {
	Nodes []InventoryNode `json:"nodes" jsonschema:"required" jsonschema_description:"Every AI node of the installation; a node missing here is removed from the roster unless it holds node caches."`
}

// InventoryNode is one entry of the inventory file.
type InventoryNode struct {
	Hostname     string   `json:"hostname" jsonschema:"required,minLength=1,maxLength=253" jsonschema_description:"The node's id: lower-case letters, digits, '.', '-'; unique in the file."`
	IsVirtual    bool     `json:"is_virtual,omitempty" jsonschema:"default=false" jsonschema_description:"A GPU VM on a hybrid host."`
	GPUClass     *string  `json:"gpu_class,omitempty" jsonschema:"nullable,maxLength=80" jsonschema_description:"GPU class label."`
	MgmtIP       *string  `json:"mgmt_ip,omitempty" jsonschema:"nullable,maxLength=45" jsonschema_description:"Management address (IPv4 or IPv6)."`
	Site         *string  `json:"site,omitempty" jsonschema:"nullable,maxLength=80" jsonschema_description:"Site of the node."`
	SpecsSummary *string  `json:"specs_summary,omitempty" jsonschema:"nullable,maxLength=300" jsonschema_description:"CPU, GPUs, memory in one line."`
	ParentHost   *string  `json:"parent_host,omitempty" jsonschema:"nullable,maxLength=253" jsonschema_description:"Host of a virtual node; only for virtual nodes."`
	VMID         *int     `json:"vmid,omitempty" jsonschema:"nullable,minimum=1,maximum=999999999" jsonschema_description:"VM id on parent_host; only for virtual nodes."`
	Services     []string `json:"services,omitempty" jsonschema:"uniqueItems=true" jsonschema_description:"Other user-facing services the node hosts."`
	AgentURL     *string  `json:"agent_url,omitempty" jsonschema:"nullable,maxLength=300,format=uri" jsonschema_description:"Base URL of the node's agent (platformapi node-agent), http or https with host and optional port, e.g. https://10.0.0.5:9441; without it (and a node key) no weights can be copied onto the node."`
}

// JSONSchemaExtend adds the rules tags cannot say: the hostname pattern and
// that parent_host and vmid belong to virtual nodes only.
func (InventoryNode) JSONSchemaExtend(s *jsonschema.Schema) {
	host, _ := s.Properties.Get("hostname")
	host.Pattern = HostnamePattern
	parent, _ := s.Properties.Get("parent_host")
	parent.OneOf[0].Pattern = HostnamePattern
	services, _ := s.Properties.Get("services")
	services.Items = &jsonschema.Schema{Type: "string", MinLength: ptrU(1), MaxLength: ptrU(maxInventoryLabel)}
	virtual := jsonschema.NewProperties()
	virtual.Set("is_virtual", &jsonschema.Schema{Const: true})
	physical := jsonschema.NewProperties()
	physical.Set("parent_host", &jsonschema.Schema{Type: "null"})
	physical.Set("vmid", &jsonschema.Schema{Type: "null"})
	s.If = &jsonschema.Schema{Not: &jsonschema.Schema{Required: []string{"is_virtual"}, Properties: virtual}}
	s.Then = &jsonschema.Schema{Properties: physical}
}

// InventorySchema is the JSON Schema of the inventory file.
func InventorySchema() ([]byte, error) {
	r := &jsonschema.Reflector{ExpandedStruct: true, Anonymous: true}
	s := r.Reflect(&InventoryFile{})
	s.Title = "AI node inventory"
	s.Description = "The hardware inventory imported with `platformapi portal inventory import FILE` (YAML or JSON)."
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

// ParseInventory reads an inventory file, YAML or JSON (by the name's
// extension, else by content), and validates it. Every problem names its
// entry ("nodes[2] (gpu-b1): …").
func ParseInventory(name string, data []byte) (InventoryFile, error) {
	var f InventoryFile
	raw, err := inventoryJSON(name, data)
	if err != nil {
		return f, inventoryFault("", "the file is neither valid JSON nor valid YAML: %v", err)
	}
	var top struct {
		Nodes *[]json.RawMessage `json:"nodes"`
	}
	if err := strictJSON(raw, &top); err != nil || top.Nodes == nil {
		return f, inventoryFault("nodes", "the file must be an object {nodes: [...]} and nothing else (%v)", err)
	}
	f.Nodes = make([]InventoryNode, len(*top.Nodes))
	for i, entry := range *top.Nodes {
		if err := strictJSON(entry, &f.Nodes[i]); err != nil {
			return f, inventoryFault(fmt.Sprintf("nodes[%d]", i), "nodes[%d]: %v", i, err)
		}
	}
	err = f.Validate()
	return f, err
}

// inventoryJSON returns the file as JSON: YAML is converted.
func inventoryJSON(name string, data []byte) ([]byte, error) {
	ext := strings.ToLower(filepath.Ext(name))
	trimmed := bytes.TrimSpace(data)
	if ext == ".json" || (ext != ".yaml" && ext != ".yml" && bytes.HasPrefix(trimmed, []byte("{"))) {
		return trimmed, nil
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// strictJSON decodes one JSON value, refusing members it does not know.
func strictJSON(raw []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

func inventoryFault(field, format string, args ...any) *Error {
	return Invalid(field, CodeInventoryInvalid, "inventory: "+format, args...)
}

func ptrU(n uint64) *uint64 { return &n }

// InventoryImport is what an import did, by hostname.
type InventoryImport struct {
	Created   []string   `json:"created"`
	Updated   []string   `json:"updated"`
	Unchanged []string   `json:"unchanged"`
	Removed   []string   `json:"removed"`
	Kept      []KeptNode `json:"kept" doc:"missing from the file but kept"`
}

// KeptNode is a node missing from the file that stays on the roster
// because it still holds node caches.
type KeptNode struct {
	Hostname   string `json:"hostname"`
	NodeCaches int    `json:"node_caches"`
	Reason     string `json:"reason"`
}

// InventoryImporter replaces the AI node roster with an inventory file, in
// one transaction with one audit event, done as the person as (empty: the
// host operator: ops:cli).
type InventoryImporter interface {
	ImportInventory(ctx context.Context, by Actor, f InventoryFile) (InventoryImport, error)
}
