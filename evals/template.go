package evals

import (
	"fmt"
	"strings"
)

// vars are the values captured so far in one run of a suite.
type vars map[string]any

// text renders {{var}} templates in s; strings are inserted as they are,
// other values as JSON.
func (v vars) text(s string) (string, error) {
	var missing []string
	out := templateRE.ReplaceAllStringFunc(s, func(m string) string {
		name := templateRE.FindStringSubmatch(m)[1]
		val, ok := v[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		if str, isStr := val.(string); isStr {
			return str
		}
		return strings.TrimSpace(brief(val))
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("nothing was captured as %v", missing)
	}
	return out, nil
}

// value renders templates at any depth; a string that is exactly one
// {{var}} becomes the captured value itself (keeping numbers numbers).
func (v vars) value(x any) (any, error) {
	switch t := x.(type) {
	case string:
		if m := templateRE.FindStringSubmatch(t); m != nil && m[0] == strings.TrimSpace(t) {
			if val, ok := v[m[1]]; ok {
				return val, nil
			}
		}
		return v.text(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			r, err := v.value(e)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := v.value(e)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return x, nil
}

// capture stores the values the JSONPaths select from doc: the single match
// of a singular path, the first match of any other (a filter such as
// $.items[?(@.short_name=='SHOP')].id); a path that selects nothing is a
// failure.
func (v vars) capture(m map[string]string, doc any) []string {
	var fails []string
	for _, name := range sortedKeys(m) {
		x, err := compilePath(m[name])
		if err != nil {
			fails = append(fails, err.Error())
			continue
		}
		val, found := selectPath(x, doc)
		if !found {
			fails = append(fails, fmt.Sprintf("capture %s: %s selects nothing", name, m[name]))
			continue
		}
		if arr, ok := val.([]any); ok && !singular(x) {
			val = arr[0]
		}
		v[name] = val
	}
	return fails
}
