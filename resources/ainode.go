package resources

import (
	"context"
	"regexp"
	"time"
)

// CodeAINodeNotFound is the 404 code of an unknown AI node hostname.
const CodeAINodeNotFound = "ai_node_not_found"

// Live statuses of an AI node (the list is open: other values may appear).
const (
	NodeServing    = "serving"
	NodeLoadedIdle = "loaded_idle"
	NodeIdle       = "idle"
	NodeOffline    = "offline"
	NodeStandby    = "standby"
	NodePoweredOff = "powered_off"
)

// HostnamePattern is the shape of an AI node's hostname (its id): lower-case
// letters, digits, '.' and '-', 1 to 253 characters, starting and ending
// with a letter or digit. The ai_nodes table checks the same pattern.
const HostnamePattern = `^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`

var hostnameRE = regexp.MustCompile(HostnamePattern)

// ValidHostname reports whether h is a well-formed AI node hostname.
func ValidHostname(h string) bool { return hostnameRE.MatchString(h) }

// AINode is one node of the roster, as the hardware inventory describes it.
// Live values are not part of it: they come from monitoring (NodeLive).
type AINode struct {
	Hostname     string    `json:"hostname"`
	IsVirtual    bool      `json:"is_virtual"`
	GPUClass     *string   `json:"gpu_class"`
	MgmtIP       *string   `json:"mgmt_ip"`
	Site         *string   `json:"site"`
	SpecsSummary *string   `json:"specs_summary"`
	ParentHost   *string   `json:"parent_host"`
	VMID         *int      `json:"vmid"`
	Services     []string  `json:"services"`
	AgentURL     *string   `json:"agent_url"` // the node agent's base URL; nil: no agent enrolled
	ImportedAt   time.Time `json:"imported_at"`
}

// AINodeFilter narrows the roster; filters are exact and combine. Hostnames,
// when not nil, keeps only those nodes (an empty, non-nil list keeps none):
// the API sets it from live data for its live filters.
type AINodeFilter struct {
	Site      string   `json:"site,omitempty"`
	GPUClass  string   `json:"gpu_class,omitempty"`
	Hostnames []string `json:"-"`
}

// AINodes reads the AI node roster, in hostname order. The roster changes
// only through an inventory import (see Inventory).
type AINodes interface {
	ListAINodes(ctx context.Context, f AINodeFilter, q PageQuery) (Page[AINode], error)
	GetAINode(ctx context.Context, hostname string) (*AINode, error)
}
