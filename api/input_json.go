package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// jsonFrame is one open object or array while a body is walked.
type jsonFrame struct {
	array   bool
	index   int    // array: the next item's index
	key     string // object: the member being read
	wantKey bool   // object: the next string is a member name
}

// jsonWalk tracks the location of each token of a JSON text.
type jsonWalk struct{ stack []*jsonFrame }

// location is Huma's spelling of the current member: body.a.b[2].
func (w *jsonWalk) location() string {
	var b strings.Builder
	b.WriteString("body")
	for _, f := range w.stack {
		if f.array {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		} else {
			b.WriteString("." + f.key)
		}
	}
	return b.String()
}

// valueDone advances the enclosing container past one value.
func (w *jsonWalk) valueDone() {
	if len(w.stack) == 0 {
		return
	}
	if top := w.stack[len(w.stack)-1]; top.array {
		top.index++
	} else {
		top.wantKey = true
	}
}

// checkJSONStrings reads body as one JSON value and refuses a string (member
// name or value) that is not UTF-8 or holds NUL, naming where it is.
// encoding/json would silently turn invalid UTF-8 into U+FFFD.
func checkJSONStrings(body []byte) error {
	if !json.Valid(body) {
		return malformedBody()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	w := &jsonWalk{}
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return malformedBody()
		}
		if msg := w.step(tok, body[start:dec.InputOffset()]); msg != "" {
			return newProblem(http.StatusUnprocessableEntity, "validation failed",
				&huma.ErrorDetail{Location: w.location(), Message: msg})
		}
	}
}

// step moves the walk over one token; raw is the token's text (with any
// separator before it). It returns what is wrong with a string, or "".
func (w *jsonWalk) step(tok json.Token, raw []byte) string {
	var top *jsonFrame
	if len(w.stack) > 0 {
		top = w.stack[len(w.stack)-1]
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' || t == '[' {
			w.stack = append(w.stack, &jsonFrame{array: t == '[', wantKey: t == '{'})
			return ""
		}
		w.stack = w.stack[:len(w.stack)-1]
		w.valueDone()
		return ""
	case string:
		msg := ""
		if !utf8.Valid(raw) {
			msg = msgUTF8
		} else if strings.IndexByte(t, 0) >= 0 {
			msg = msgNUL
		}
		if top != nil && !top.array && top.wantKey {
			top.key, top.wantKey = t, false
			if msg != "" {
				top.key = strconv.Quote(strings.ToValidUTF8(t, "\uFFFD"))
			}
			return msg
		}
		w.valueDone()
		return msg
	}
	w.valueDone()
	return ""
}

// uniqueItemsOfValues refuses an object or array item inside an array whose
// schema asks for unique items of another type. Huma compares unique items
// as map keys, which panics on such an item; this answers 422 first.
func uniqueItemsOfValues(reg huma.Registry, schema *huma.Schema, body []byte) error {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil // Huma reports it
	}
	if loc, want := findUnhashable(reg, schema, v, "body"); loc != "" {
		return newProblem(http.StatusUnprocessableEntity, "validation failed",
			&huma.ErrorDetail{Location: loc, Message: "expected " + want})
	}
	return nil
}

// findUnhashable walks v along schema and returns the location of the first
// object or array item of a unique-items array, with the type wanted.
func findUnhashable(reg huma.Registry, s *huma.Schema, v any, loc string) (string, string) {
	if s == nil {
		return "", ""
	}
	if s.Ref != "" {
		if s = reg.SchemaFromRef(s.Ref); s == nil {
			return "", ""
		}
	}
	switch val := v.(type) {
	case map[string]any:
		for _, name := range slices.Sorted(maps.Keys(val)) {
			member := val[name]
			sub := s.Properties[name]
			if sub == nil {
				sub, _ = s.AdditionalProperties.(*huma.Schema)
			}
			if l, want := findUnhashable(reg, sub, member, loc+"."+name); l != "" {
				return l, want
			}
		}
	case []any:
		return arrayUnhashable(reg, s, val, loc)
	}
	return "", ""
}

func arrayUnhashable(reg huma.Registry, s *huma.Schema, items []any, loc string) (string, string) {
	for i, item := range items {
		at := loc + "[" + strconv.Itoa(i) + "]"
		switch item.(type) {
		case map[string]any, []any:
			if s.UniqueItems {
				return at, itemType(reg, s.Items)
			}
		}
		if l, want := findUnhashable(reg, s.Items, item, at); l != "" {
			return l, want
		}
	}
	return "", ""
}

func itemType(reg huma.Registry, s *huma.Schema) string {
	if s != nil && s.Ref != "" {
		s = reg.SchemaFromRef(s.Ref)
	}
	if s == nil || s.Type == "" {
		return "a value"
	}
	return s.Type
}
