package api

import (
	"context"
	"encoding/json"
	"net/http"

	"platformapi/resources"
)

// NodeCluster is the serving cluster a node belongs to (live).
type NodeCluster struct {
	Name string  `json:"name" example:"fra1-inference"`
	Role *string `json:"role" nullable:"true" doc:"e.g. head, worker"`
}

// NodeModel is a model loaded on a node (live).
type NodeModel struct {
	Model     string   `json:"model" example:"qwen3-coder-30b" doc:"Served model name"`
	Repo      *string  `json:"repo" nullable:"true" doc:"Repo, when known"`
	State     *string  `json:"state" nullable:"true" doc:"e.g. serving, loading, idle"`
	VRAMBytes *float64 `json:"vram_bytes" nullable:"true" doc:"VRAM it holds"`
}

// AINode is an AI node: roster fields from the hardware inventory, live
// fields from monitoring (null when monitoring cannot be read).
type AINode struct {
	Hostname            string                `json:"hostname" example:"gpu-fra1-01" doc:"The node's id"`
	IsVirtual           bool                  `json:"is_virtual" doc:"A GPU VM on a hybrid host"`
	MonitoringReachable bool                  `json:"monitoring_reachable" doc:"false: its live fields are null"`
	Health              string                `json:"health" enum:"ok,degraded,offline,unreachable,stale" doc:"Derived: degraded is up with a warning sign; unreachable: no monitoring data or agent silent; stale: collector silent"`
	HealthReason        *string               `json:"health_reason" nullable:"true" doc:"Why, in a sentence; null when ok"`
	GPUClass            *string               `json:"gpu_class" nullable:"true"`
	MgmtIP              *string               `json:"mgmt_ip" nullable:"true" doc:"Management address"`
	Site                *string               `json:"site" nullable:"true"`
	SpecsSummary        *string               `json:"specs_summary" nullable:"true" doc:"CPU, GPUs, memory in one line"`
	ParentHost          *string               `json:"parent_host" nullable:"true" doc:"Host of a virtual node"`
	VMID                *int                  `json:"vmid" nullable:"true" doc:"VM id on parent_host"`
	Services            []string              `json:"services" doc:"Other user-facing services the node hosts"`
	AgentURL            *string               `json:"agent_url" nullable:"true" doc:"Node agent URL"`
	CacheFSTotalBytes   *int64                `json:"cache_fs_total_bytes" nullable:"true" doc:"Live (agent): cache file system size"`
	CacheFSFreeBytes    *int64                `json:"cache_fs_free_bytes" nullable:"true" doc:"Live (agent): free there"`
	CacheMaxBytes       *int64                `json:"cache_max_bytes" nullable:"true" doc:"Live (agent): its cap; null: none"`
	CacheUsedBytes      *int64                `json:"cache_used_bytes" nullable:"true" doc:"Live (agent): held"`
	CacheFreeBytes      *int64                `json:"cache_free_bytes" nullable:"true" doc:"Live (agent): copies may still use (less under a cap)"`
	Cluster             Nullable[NodeCluster] `json:"cluster" doc:"Live"`
	CollectorStale      *bool                 `json:"collector_stale" nullable:"true" doc:"Live: collector silent over 30 s"`
	CPUUtilPct          *float64              `json:"cpu_util_pct" nullable:"true" minimum:"0" maximum:"100" doc:"Live: last minute"`
	DiskUsedPct         *float64              `json:"disk_used_pct" nullable:"true" minimum:"0" maximum:"100" doc:"Live: root file system"`
	GPUCount            *int                  `json:"gpu_count" nullable:"true" doc:"Live: GPUs reporting"`
	GPUTempMaxC         *float64              `json:"gpu_temp_max_c" nullable:"true" doc:"Live: hottest GPU, degrees Celsius"`
	GPUUtilAvgPct       *float64              `json:"gpu_util_avg_pct" nullable:"true" minimum:"0" maximum:"100" doc:"Live"`
	Load1               *float64              `json:"load1" nullable:"true" doc:"Live: one-minute load average"`
	MemUsedPct          *float64              `json:"mem_used_pct" nullable:"true" minimum:"0" maximum:"100" doc:"Live"`
	Models              []NodeModel           `json:"models" nullable:"true" doc:"Live: loaded models"`
	Online              *bool                 `json:"online" nullable:"true" doc:"Live"`
	Role                *string               `json:"role" nullable:"true" doc:"Live: role label"`
	Status              *string               `json:"status" nullable:"true" doc:"Live: serving, loaded_idle, idle, offline, standby, powered_off, …"`
	ThrottleActive      *bool                 `json:"throttle_active" nullable:"true" doc:"Live: a GPU throttles its clock"`
	UptimeSeconds       *float64              `json:"uptime_seconds" nullable:"true" doc:"Live: seconds since boot"`
	VRAMTotalBytes      *float64              `json:"vram_total_bytes" nullable:"true" doc:"Live: summed over GPUs"`
	VRAMUsedBytes       *float64              `json:"vram_used_bytes" nullable:"true" doc:"Live: summed over GPUs"`
	VRAMFreeBytes       *float64              `json:"vram_free_bytes" nullable:"true" doc:"Live: total less used"`
}

// listKey is the key a member selection always keeps: the hostname.
func (AINode) listKey() []string { return []string{"hostname"} }

// GPUClassTotals sums the nodes of one gpu_class (resources.SumGPUClasses).
type GPUClassTotals struct {
	GPUClass         *string  `json:"gpu_class" nullable:"true" doc:"null: nodes without one"`
	Nodes            int      `json:"nodes"`
	GPUs             *int     `json:"gpus" nullable:"true"`
	GPUsUnknownNodes int      `json:"gpus_unknown_nodes" doc:"Nodes with gpu_count null, not in gpus"`
	VRAMTotalBytes   *float64 `json:"vram_total_bytes" nullable:"true"`
	VRAMUsedBytes    *float64 `json:"vram_used_bytes" nullable:"true"`
	VRAMFreeBytes    *float64 `json:"vram_free_bytes" nullable:"true"`
	VRAMUnknownNodes int      `json:"vram_unknown_nodes" doc:"Nodes with VRAM total or used null, not in the vram sums"`
}

// AINodePage is a page of AI nodes.
type AINodePage struct {
	Items               []AINode         `json:"items"`
	MonitoringReachable bool             `json:"monitoring_reachable" doc:"false: monitoring unread, live fields null"`
	GPUClasses          []GPUClassTotals `json:"gpu_classes" doc:"Totals per gpu_class over every node the filters match on all pages, not just this one; a sum covers the nodes reporting it, null if none"`
	NextCursor          *string          `json:"next_cursor" nullable:"true" doc:"Send back as cursor for the next page; null at the end."`

	encoded []json.RawMessage // the items as sent (fields applied)
}

// MarshalJSON writes the page with its items as listPage encoded them.
func (p AINodePage) MarshalJSON() ([]byte, error) {
	extra := []pageMember{{"monitoring_reachable", p.MonitoringReachable}, {"gpu_classes", p.GPUClasses}}
	return marshalPage(p.encoded, p.Items, extra, p.NextCursor)
}

// Inputs and outputs of the AI node operations.
type (
	ListAINodesInput struct {
		ListParams
		Site     string   `query:"site" maxLength:"80" doc:"Exact site"`
		GPUClass string   `query:"gpu_class" maxLength:"80" doc:"Exact GPU class"`
		Status   []string `query:"status" maxItems:"20" pattern:"^[a-z_]{1,40}$" doc:"Live statuses, any of them (serving, loaded_idle, idle, offline, standby, powered_off, …); a node whose status is unknown never matches"`
		Model    string   `query:"model" minLength:"1" maxLength:"200" doc:"Only nodes serving this model live or holding a node cache of it: a catalogue id, a repo (org/name) or a served name (models[].model)"`
		Health   []string `query:"health" enum:"ok,degraded,offline,unreachable,stale" doc:"Only nodes of this health"`
	}
	AINodeInput struct {
		Hostname string `path:"hostname" maxLength:"253" doc:"The node's hostname"`
	}
	AINodeListOutput struct{ Body AINodePage }
	AINodeOutput     struct{ Body AINode }
)

// nodeListKey binds a roster cursor to every filter, the live one included.
type nodeListKey struct {
	resources.AINodeFilter
	Status []string `json:"status,omitempty"`
	Model  string   `json:"model,omitempty"`
	Health []string `json:"health,omitempty"`
}

var (
	aiNodeReaders = []string{resources.PermAIRead, resources.PermAIWrite}
	aiNodeWriters = []string{resources.PermAIWrite}
)

func (s *Server) registerAINodes() {
	tags := []string{"AI"}
	Register(s.api, Op{ID: "list-ai-nodes", Toolset: ToolsetAI, OpenWorld: true, Method: http.MethodGet, Path: "/ai/nodes", Tags: tags,
		Summary: "List AI nodes", Permissions: aiNodeReaders, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Nodes in hostname order with live values from monitoring and node agents; what " +
			"does not answer within 2 s is null (monitoring_reachable false), never an error. status: the live " +
			"status; model (catalogue id, repo or served name): nodes serving or caching it.",
		Notes: "roster + live monitoring; filters `site`, `gpu_class`, `status`, `model` (a " +
			"catalogue id, repo or served name: nodes serving it live or holding a node cache of it; 404 " +
			"`ai_model_not_found` for an unknown id), `health`; page carries `monitoring_reachable` " +
			"and `gpu_classes` (nodes, GPUs, VRAM per class over every matching node)",
	}, s.listAINodes)
	Register(s.api, Op{ID: "get-ai-node", Toolset: ToolsetAI, OpenWorld: true, Method: http.MethodGet, Path: "/ai/nodes/{hostname}", Tags: tags,
		Summary: "Read an AI node", Permissions: aiNodeReaders, Errors: []int{http.StatusBadRequest, http.StatusNotFound},
		Description: "Roster and live values (monitoring, node agent); live fields are null when those do not " +
			"answer, never an error. 404 ai_node_not_found.",
		Notes: "live fields null when monitoring cannot be read; never fails because of it; " +
			"derived `health` and `health_reason`",
	}, s.getAINode)
}

func (s *Server) listAINodes(ctx context.Context, in *ListAINodesInput) (*AINodeListOutput, error) {
	fleet, err := s.readFleet(ctx, nil)
	if err != nil {
		return nil, err
	}
	f, err := s.nodeFilter(ctx, in, fleet)
	if err != nil {
		return nil, err
	}
	totals, err := s.gpuClassTotals(ctx, f, fleet)
	if err != nil {
		return nil, err
	}
	args := in.page()
	if args.Reserve, err = encodedSize(totals); err != nil {
		return nil, err
	}
	page, err := listPage(ctx, s, "ai-nodes", nodeListKey{f, in.Status, in.Model, in.Health}, args,
		func(q resources.PageQuery) (resources.Page[resources.AINode], error) {
			return s.svc.AINodes.ListAINodes(ctx, f, q)
		}, fleet.view)
	if err != nil {
		return nil, err
	}
	return &AINodeListOutput{Body: AINodePage{Items: page.Body.Items,
		MonitoringReachable: fleet.live.reachable, GPUClasses: totals, NextCursor: page.Body.NextCursor,
		encoded: page.Body.encoded}}, nil
}

// nodeFilter turns the list's filters into a roster filter: the live ones
// (status, health, model) as the hostnames they keep.
func (s *Server) nodeFilter(ctx context.Context, in *ListAINodesInput,
	fleet nodeFleet) (resources.AINodeFilter, error) {
	f := resources.AINodeFilter{Site: in.Site, GPUClass: in.GPUClass}
	if len(in.Status) > 0 {
		f.Hostnames = hostsWithStatus(fleet.live.snap, in.Status)
	}
	if len(in.Health) > 0 {
		f.Hostnames = intersectHosts(f.Hostnames, fleet.hostsWithHealth(in.Health))
	}
	if in.Model != "" {
		hosts, err := s.hostsWithModel(ctx, fleet.live.snap, in.Model)
		if err != nil {
			return f, err
		}
		f.Hostnames = intersectHosts(f.Hostnames, hosts)
	}
	return f, nil
}

func (s *Server) getAINode(ctx context.Context, in *AINodeInput) (*AINodeOutput, error) {
	n, err := s.svc.AINodes.GetAINode(ctx, in.Hostname)
	if err != nil {
		return nil, err
	}
	fleet, err := s.readFleet(ctx, []string{n.Hostname})
	if err != nil {
		return nil, err
	}
	return &AINodeOutput{Body: fleet.view(*n)}, nil
}
