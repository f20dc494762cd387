package resources

import (
	"context"
	"errors"
	"time"
)

// CollectorStaleAfter is how long a node's metrics collector may stay silent
// before its live values count as stale (contract: more than 30 seconds).
const CollectorStaleAfter = 30 * time.Second

// MonitoringTimeout bounds one monitoring read: a read of the AI nodes
// never waits longer for live values (they are null instead).
const MonitoringTimeout = 2 * time.Second

// ErrMonitoringUnreachable wraps every failure of a Monitor: network,
// timeout, 5xx, an answer the adapter does not understand.
var ErrMonitoringUnreachable = errors.New("monitoring unreachable")

// NodeCluster is the serving cluster a node belongs to, from monitoring.
type NodeCluster struct {
	Name string  `json:"name"`           // cluster name
	Role *string `json:"role,omitempty"` // the node's role in it, e.g. "head" or "worker"; open list
}

// NodeModel is a model loaded on a node, from monitoring.
type NodeModel struct {
	Model     string   `json:"model"`                // the served model name
	Repo      *string  `json:"repo,omitempty"`       // its model-hub repo, when known
	State     *string  `json:"state,omitempty"`      // e.g. "serving", "loading", "idle"; open list
	VRAMBytes *float64 `json:"vram_bytes,omitempty"` // VRAM it holds
}

// NodeLive is what monitoring knows about one node now. Every member is nil
// when its value could not be read.
type NodeLive struct {
	Cluster        *NodeCluster
	CollectorStale *bool
	CPUUtilPct     *float64
	DiskUsedPct    *float64
	GPUCount       *int
	GPUTempMaxC    *float64
	GPUUtilAvgPct  *float64
	Load1          *float64
	MemUsedPct     *float64
	Models         []NodeModel // nil: unknown; empty: none loaded
	Online         *bool
	Role           *string
	Status         *string
	ThrottleActive *bool
	UptimeSeconds  *float64
	VRAMTotalBytes *float64
	VRAMUsedBytes  *float64
}

// NodeSnapshot is the live state of every node monitoring knows, by
// hostname, read in one round trip.
type NodeSnapshot map[string]NodeLive

// Monitor reads the live state of the AI nodes. NodeSnapshot answers for
// all nodes at once — one query, never one per node — and honours ctx's
// deadline; every failure wraps ErrMonitoringUnreachable. A Monitor only
// reads: it never loads or unloads a model and never powers a node.
type Monitor interface {
	NodeSnapshot(ctx context.Context) (NodeSnapshot, error)
}

// CollectorStale reports whether a collector silent for age is stale.
func CollectorStale(age time.Duration) bool { return age > CollectorStaleAfter }
