package resources

import (
	"context"
	"time"
)

// Node cache statuses: a copy is running, the weights are on the node's
// disk, or a removal is running.
const (
	NodeCacheCopying  = "copying"
	NodeCacheReady    = "ready"
	NodeCacheRemoving = "removing"
)

// Node cache problem codes (unknown nodes and models answer
// CodeAINodeNotFound and CodeAIModelNotFound).
const (
	CodeNodeCacheNotFound = "node_cache_not_found"  // 404: the node holds no cache of the model
	CodeAIModelNotInStore = "ai_model_not_in_store" // 409: the platform holds no central copy to copy from
	CodeNodeCacheBusy     = "node_cache_busy"       // 409: the other kind of operation runs on the cache
)

// Model locations (AI model `location`): the central model store, node
// caches only, both; nil is nowhere yet.
const (
	ModelLocationNAS   = "nas"
	ModelLocationLocal = "local"
	ModelLocationBoth  = "both"
)

// NodeCache is a model's weights copied onto one node's disk.
type NodeCache struct {
	Hostname  string   `json:"hostname"`
	ModelID   int64    `json:"model_id"`
	ModelRepo string   `json:"model_repo"` // the model's repo, for people and agents reading a list
	Status    string   `json:"status"`
	Path      *string  `json:"path"`
	SizeGB    *float64 `json:"size_gb"`
	// OperationID is the copy or removal still working on the cache; nil
	// when none is.
	OperationID *int64    `json:"operation_id"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// NodeCacheFilter narrows the node cache list; filters are exact and combine.
type NodeCacheFilter struct {
	Hostname string   `json:"hostname,omitempty"`
	ModelID  int64    `json:"model_id,omitempty"`
	Status   []string `json:"status,omitempty"` // any of NodeCacheStatuses
}

// NodeCacheStatuses lists every status a node cache can have (the
// node_caches table checks the same list).
var NodeCacheStatuses = []string{NodeCacheCopying, NodeCacheReady, NodeCacheRemoving, NodeCacheMissing}

// Values of AIModelFilter.Cached.
const (
	CachedReady = "ready" // at least one node cache of the model is ready
	CachedNone  = "none"  // no node holds a ready cache of the model
)

// CacheCopy is the answer to a copy request: the operation doing it (or
// already done) and whether this request started it.
type CacheCopy struct {
	Operation Operation
	Started   bool // false: the cache was already ready, Operation finished at once
}

// ModelPlacement derives a model's offline_ready and location from whether
// the platform holds a central copy and how many node caches are ready.
func ModelPlacement(central bool, readyCaches int) (offlineReady bool, location *string) {
	offlineReady = readyCaches > 0
	var loc string
	switch {
	case central && offlineReady:
		loc = ModelLocationBoth
	case central:
		loc = ModelLocationNAS
	case offlineReady:
		loc = ModelLocationLocal
	default:
		return false, nil
	}
	return offlineReady, &loc
}

// CacheTargetID is the operation target id of a node cache: "hostname/model_id".
func CacheTargetID(hostname string, modelID int64) string { return hostname + "/" + formatInt(modelID) }

// NodeCaches stores node caches and starts the operations that copy weights
// the platform already holds onto a node or remove them. They never pull
// from a model hub, never load or unload a model and never power a node.
//
// CopyToNode: unknown node or model → CodeAINodeNotFound /
// CodeAIModelNotFound; a model without a central copy →
// CodeAIModelNotInStore; a running removal → CodeNodeCacheBusy; a running
// copy → that copy's operation; a ready cache → a finished operation
// (Started false). Otherwise the cache (copying), a node_cache_copy
// operation and its job are written in one transaction.
//
// RemoveFromNode: no cache → CodeNodeCacheNotFound; a running removal →
// that removal's operation. Otherwise the cache turns removing and a
// node_cache_remove operation and its job are written in one transaction,
// which also ends a running copy of the cache failed CodeCopyCancelled; the
// removal deletes the bytes once that copy's job no longer drives the agent.
type NodeCaches interface {
	ListNodeCaches(ctx context.Context, f NodeCacheFilter, q PageQuery) (Page[NodeCache], error)
	CopyToNode(ctx context.Context, a Actor, hostname string, modelID int64, l *Lease) (CacheCopy, error)
	RemoveFromNode(ctx context.Context, a Actor, hostname string, modelID int64, l *Lease) (Operation, error)
}

// Recovery points of keyed node-cache requests.
const (
	RecoveryCacheCopyStarted   = "node_cache_copy_started"
	RecoveryCacheRemoveStarted = "node_cache_remove_started"
)
