package evals

import (
	"fmt"
	"strings"
)

// vars are the values captured so far in one run of a suite.
type vars map[string]any

// lookup resolves a template's reference: a variable, or a member of an
// object variable (node.hostname, page.owner.email).
func (v vars) lookup(ref string) (any, error) {
	names := strings.Split(ref, ".")
	val, ok := v[names[0]]
	if !ok {
		return nil, fmt.Errorf("nothing was captured as %s", names[0])
	}
	for i, name := range names[1:] {
		obj, isObj := val.(map[string]any)
		if !isObj {
			return nil, fmt.Errorf("{{%s}}: %s is %s, not an object", ref,
				strings.Join(names[:i+1], "."), brief(val))
		}
		if val, ok = obj[name]; !ok {
			return nil, fmt.Errorf("{{%s}}: %s has no member %s", ref, strings.Join(names[:i+1], "."), name)
		}
	}
	return val, nil
}

// text renders {{var}} templates in s; strings are inserted as they are,
// other values as JSON.
func (v vars) text(s string) (string, error) {
	var errs []string
	out := templateRE.ReplaceAllStringFunc(s, func(m string) string {
		val, err := v.lookup(templateRE.FindStringSubmatch(m)[1])
		if err != nil {
			errs = append(errs, err.Error())
			return m
		}
		if str, isStr := val.(string); isStr {
			return str
		}
		return strings.TrimSpace(brief(val))
	})
	if len(errs) > 0 {
		return "", fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

// value renders templates at any depth; a string that is exactly one
// {{var}} becomes the captured value itself (keeping numbers numbers).
func (v vars) value(x any) (any, error) {
	switch t := x.(type) {
	case string:
		if ref, exact := onlyTemplate(t); exact {
			return v.lookup(ref)
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

// onlyTemplate reports whether s is exactly one {{ref}} (spaces around
// allowed), and its reference.
func onlyTemplate(s string) (string, bool) {
	m := templateRE.FindStringSubmatch(s)
	if m == nil || m[0] != strings.TrimSpace(s) {
		return "", false
	}
	return m[1], true
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
