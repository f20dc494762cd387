package resources

// MergePatch applies an RFC 7396 JSON Merge Patch to a decoded JSON value
// (map[string]any for objects) and returns the result: an object patch is
// merged member by member, recursively, a null member removes that member,
// and any other patch replaces the target. target is not changed.
func MergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, _ := target.(map[string]any)
	return MergeObject(t, p)
}

// MergeObject merges an object patch into a copy of target (nil: {}).
func MergeObject(target, patch map[string]any) map[string]any {
	out := make(map[string]any, len(target)+len(patch))
	for k, v := range target {
		out[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = MergePatch(out[k], v)
	}
	return out
}
