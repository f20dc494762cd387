package tools

import (
	"slices"
	"strings"
)

// linkListers finds, for every required path argument of every tool, the
// list tool whose items that argument names (see listerOf), for the tool
// errors of a missing or invalid argument to point to (next_tool).
func linkListers(specs []toolSpec) {
	for i, s := range specs {
		for _, p := range s.params {
			if !p.required || p.in != "path" {
				continue
			}
			if l := listerOf(specs, s, p.name); l != "" {
				if specs[i].listers == nil {
					specs[i].listers = map[string]string{}
				}
				specs[i].listers[p.name] = l
			}
		}
	}
}

// listerOf is the list tool whose items the path argument arg of s names:
// one whose items' key is arg itself (hostname) or id (for an argument
// X_id), at the collection path before the argument (/projects for
// /projects/{project_id}/release-state), else the single one whose path
// ends in that collection (/projects/{project_id}/release-operations for
// /release-operations/{release_operation_id}); "" when there is none.
func listerOf(specs []toolSpec, s toolSpec, arg string) string {
	collection, _, ok := strings.Cut(s.path, "/{"+arg+"}")
	if !ok || collection == "" {
		return ""
	}
	segment := collection[strings.LastIndex(collection, "/"):]
	var exact, same []string
	for _, l := range specs {
		if !l.list || l.tool.Name == s.tool.Name || !keyedBy(l.itemKey, arg) {
			continue
		}
		switch {
		case l.path == collection:
			exact = append(exact, l.tool.Name)
		case strings.HasSuffix(l.path, segment):
			same = append(same, l.tool.Name)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0]
	case len(exact) == 0 && len(same) == 1:
		return same[0]
	}
	return ""
}

// keyedBy reports whether a list whose items' key is key lists the values
// of the argument arg: the key is arg, or id for an argument named X_id.
func keyedBy(key []string, arg string) bool {
	return slices.Equal(key, []string{arg}) ||
		strings.HasSuffix(arg, "_id") && slices.Equal(key, []string{"id"})
}
