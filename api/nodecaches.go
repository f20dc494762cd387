package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"platformapi/resources"
)

// NodeCache is a model's weights copied onto one node's disk.
type NodeCache struct {
	Hostname    string    `json:"hostname" example:"gpu-fra1-01"`
	ModelID     string    `json:"model_id" example:"3"`
	ModelRepo   string    `json:"model_repo" example:"Qwen/Qwen3-Coder-30B-A3B-Instruct" doc:"The model's repo"`
	Status      string    `json:"status" doc:"copying, ready, removing, missing (agent no longer reports it), …"`
	Path        *string   `json:"path" nullable:"true" doc:"On the node's disk; null until ready"`
	SizeGB      *float64  `json:"size_gb" nullable:"true" doc:"Size on disk in GB; null until ready"`
	OperationID *string   `json:"operation_id" nullable:"true" doc:"Its running copy or removal"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// listKey is the key a member selection always keeps: node and model.
func (NodeCache) listKey() []string { return []string{"hostname", "model_id"} }

func nodeCacheView(c resources.NodeCache) NodeCache {
	v := NodeCache{Hostname: c.Hostname, ModelID: formatID(c.ModelID), ModelRepo: c.ModelRepo, Status: c.Status, Path: c.Path, SizeGB: c.SizeGB,
		CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
	if c.OperationID != nil {
		id := formatID(*c.OperationID)
		v.OperationID = &id
	}
	return v
}

// Inputs and outputs of the node cache operations.
type (
	ListNodeCachesInput struct {
		ListParams
		Hostname string   `query:"hostname" maxLength:"253" doc:"Only this node's caches"`
		ModelID  string   `query:"model_id" pattern:"^[1-9][0-9]{0,17}$" doc:"Only this model's caches"`
		Status   []string `query:"status" enum:"copying,ready,removing,missing" doc:"Only caches of this status"`
	}
	NodeCacheInput struct {
		Hostname string `path:"hostname" maxLength:"253" doc:"AI node hostname"`
		ModelID  string `path:"model_id" pattern:"^[1-9][0-9]{0,17}$" doc:"AI model (catalogue) id"`
	}
	// CacheCopyOutput is 202 with the copy's operation, or 200 with a
	// finished operation when the cache was already ready.
	CacheCopyOutput struct {
		Status   int
		Location string `header:"Location" doc:"/api/v1/operations/{id}"`
		Body     Operation
	}
)

const nodeCachePath = "/node-caches/{hostname}/{model_id}"

func (s *Server) registerNodeCaches() {
	tags := []string{"AI"}
	Register(s.api, Op{ID: "list-node-caches", Toolset: ToolsetAI, Method: http.MethodGet, Path: "/node-caches", Tags: tags,
		Summary: "List node caches", Permissions: aiNodeReaders, Errors: []int{http.StatusBadRequest},
		Description: "Models' weights copied onto nodes' disks, by hostname then model id; hostname, model_id " +
			"and status (copying, ready, removing, missing) filter and combine.",
		Notes: "filters `hostname`, `model_id`, `status`",
	}, s.listNodeCaches)
	Register(s.api, Op{ID: "copy-node-cache", Toolset: ToolsetAI, Method: http.MethodPut, Path: nodeCachePath, Tags: tags,
		Feature: resources.FeatureAI,
		Status:  http.StatusAccepted, Summary: "Copy a model's weights onto a node", Permissions: aiNodeWriters, Idempotent: true,
		Errors: []int{http.StatusNotFound, http.StatusConflict},
		Description: "Copies weights the platform already holds (the model's central copy) onto the node's disk " +
			"through the node's agent, which checks the free space first and verifies every file's sha256; never " +
			"pulls from a model hub, never loads a model, never powers a node. 202 with a node_cache_copy operation " +
			"(progress in bytes while it runs); when the copy already runs, 202 with that same operation; when the " +
			"cache is already ready, 200 with a finished operation (nothing copied). When it succeeds the cache is " +
			"ready and the model offline_ready; it fails with checksum_mismatch, insufficient_disk, " +
			"central_copy_invalid, node_agent_unreachable or copy_cancelled (a DELETE stopped it) and then " +
			"nothing is ready. 404 ai_node_not_found, " +
			"ai_model_not_found; 409 ai_model_not_in_store (no central copy), node_agent_not_enrolled (no agent), " +
			"node_cache_busy (a removal runs).",
		Notes: "202 operation (with `progress`); `Idempotency-Key`; the node's agent copies " +
			"the central copy onto its disk, every file verified",
	}, s.copyModelToNode)
	s.documentReadyCopy()
	Register(s.api, Op{ID: "remove-node-cache", Toolset: ToolsetAI, Method: http.MethodDelete, Path: nodeCachePath, Tags: tags,
		Feature: resources.FeatureAI,
		Status:  http.StatusAccepted, Summary: "Remove a model's weights from a node", Permissions: aiNodeWriters,
		Idempotent: true, Destroy: true, Errors: []int{http.StatusNotFound, http.StatusConflict},
		Description: "202 with a node_cache_remove operation (when a removal already runs, that same operation); " +
			"the node's agent deletes the weights. A copy that runs is stopped (it fails copy_cancelled) and what " +
			"it wrote is deleted. When it succeeds the cache is gone and the model's offline_ready " +
			"and location are recomputed; when the agent cannot be reached it fails node_agent_unreachable and the " +
			"cache keeps its status. Never unloads a model or powers a node. 404 ai_node_not_found, " +
			"ai_model_not_found, node_cache_not_found; 409 node_agent_not_enrolled.",
		Notes: "202 operation; the node's agent deletes the copy",
	}, s.removeModelFromNode)
}

// documentReadyCopy adds the 200 answer (cache already ready) to the PUT's
// contract, with the same body and header as its 202.
func (s *Server) documentReadyCopy() {
	put := s.api.OpenAPI().Paths[nodeCachePath].Put
	accepted := put.Responses["202"]
	put.Responses["200"] = &huma.Response{Description: "The cache was already ready: a finished operation, nothing copied",
		Headers: accepted.Headers, Content: accepted.Content}
}

func (s *Server) listNodeCaches(ctx context.Context, in *ListNodeCachesInput) (*ListOutput[NodeCache], error) {
	f := resources.NodeCacheFilter{Hostname: in.Hostname, ModelID: parseID(in.ModelID),
		Status: in.Status}
	return listPage(ctx, s, "node-caches", f, in.page(), func(q resources.PageQuery) (resources.Page[resources.NodeCache], error) {
		return s.svc.NodeCaches.ListNodeCaches(ctx, f, q)
	}, nodeCacheView)
}

func (s *Server) copyModelToNode(ctx context.Context, in *NodeCacheInput) (*CacheCopyOutput, error) {
	c, err := s.svc.NodeCaches.CopyToNode(ctx, ActorFrom(ctx), in.Hostname, parseID(in.ModelID), LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	out := accepted(c.Operation)
	status := http.StatusAccepted
	if !c.Started {
		status = http.StatusOK
	}
	return &CacheCopyOutput{Status: status, Location: out.Location, Body: out.Body}, nil
}

func (s *Server) removeModelFromNode(ctx context.Context, in *NodeCacheInput) (*AcceptedOutput, error) {
	op, err := s.svc.NodeCaches.RemoveFromNode(ctx, ActorFrom(ctx), in.Hostname, parseID(in.ModelID), LeaseFrom(ctx))
	if err != nil {
		return nil, err
	}
	return accepted(op), nil
}
