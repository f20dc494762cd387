package resources

import (
	"cmp"
	"slices"
)

// VRAMFree is a node's free VRAM: total less used, never below zero; nil
// when either is unknown.
func VRAMFree(total, used *float64) *float64 {
	if total == nil || used == nil {
		return nil
	}
	free := max(*total-*used, 0)
	return &free
}

// NodeGPUs is one node's part of the fleet totals: its roster class and its
// live GPU count and VRAM (nil: unknown).
type NodeGPUs struct {
	GPUClass       *string
	GPUCount       *int
	VRAMTotalBytes *float64
	VRAMUsedBytes  *float64
}

// GPUClassTotals sums the nodes of one gpu_class. An unknown value is never
// counted as zero: GPUs sums the nodes whose GPU count is known and
// GPUsUnknownNodes counts the others; the VRAM sums cover the nodes whose
// total and used are both known (so free is total less used) and
// VRAMUnknownNodes counts the others. A sum no node contributes to is nil.
type GPUClassTotals struct {
	GPUClass         *string // nil: the nodes without a gpu_class
	Nodes            int
	GPUs             *int
	GPUsUnknownNodes int
	VRAMTotalBytes   *float64
	VRAMUsedBytes    *float64
	VRAMFreeBytes    *float64
	VRAMUnknownNodes int
}

// SumGPUClasses totals nodes by gpu_class, in class order (compared as
// written) with the nodes without a class last.
func SumGPUClasses(nodes []NodeGPUs) []GPUClassTotals {
	byClass := map[string]*GPUClassTotals{}
	var out []*GPUClassTotals
	for _, n := range nodes {
		key := "\x00" // no class: a key no label can be
		if n.GPUClass != nil {
			key = *n.GPUClass
		}
		t := byClass[key]
		if t == nil {
			t = &GPUClassTotals{GPUClass: n.GPUClass}
			byClass[key] = t
			out = append(out, t)
		}
		t.add(n)
	}
	slices.SortFunc(out, func(a, b *GPUClassTotals) int {
		if a.GPUClass == nil || b.GPUClass == nil { // the classless group last
			return cmp.Compare(boolRank(a.GPUClass == nil), boolRank(b.GPUClass == nil))
		}
		return cmp.Compare(*a.GPUClass, *b.GPUClass)
	})
	totals := make([]GPUClassTotals, len(out))
	for i, t := range out {
		totals[i] = *t
	}
	return totals
}

// add counts one node into t.
func (t *GPUClassTotals) add(n NodeGPUs) {
	t.Nodes++
	if n.GPUCount == nil {
		t.GPUsUnknownNodes++
	} else {
		t.GPUs = addTo(t.GPUs, *n.GPUCount)
	}
	free := VRAMFree(n.VRAMTotalBytes, n.VRAMUsedBytes)
	if free == nil {
		t.VRAMUnknownNodes++
		return
	}
	t.VRAMTotalBytes = addTo(t.VRAMTotalBytes, *n.VRAMTotalBytes)
	t.VRAMUsedBytes = addTo(t.VRAMUsedBytes, *n.VRAMUsedBytes)
	t.VRAMFreeBytes = addTo(t.VRAMFreeBytes, *free)
}

func addTo[N int | float64](sum *N, v N) *N {
	if sum == nil {
		return &v
	}
	s := *sum + v
	return &s
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
