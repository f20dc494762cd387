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
	"unicode"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// jsonFrame is one open object or array while a body is walked.
type jsonFrame struct {
	array   bool
	index   int      // array: the next item's index
	key     string   // object: the member being read
	keys    []string // object: the member names read so far
	wantKey bool     // object: the next string is a member name
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
// name or value) that is not UTF-8, holds NUL or an unpaired UTF-16
// surrogate escape, a member name given twice in one object, and a number
// beyond float64's range, naming where it is. encoding/json would silently
// turn invalid UTF-8 and unpaired surrogates into U+FFFD, and keep the last
// of two members.
func checkJSONStrings(body []byte) error {
	if !json.Valid(body) {
		return malformedBody()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // a number no float64 holds is named, not a decoding error
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
			return newProblem(http.StatusUnprocessableEntity, msgValidationFailed,
				&huma.ErrorDetail{Location: w.location(), Message: msg})
		}
	}
}

// step moves the walk over one token; raw is the token's text (with any
// separator before it). It returns what is wrong with a string or a
// number, or "".
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
		msg := stringTokenProblem(t, raw)
		if top != nil && !top.array && top.wantKey {
			return top.memberName(t, msg)
		}
		if msg != "" {
			return msg // the walk stops at this value: its location names it
		}
	case json.Number:
		if _, err := strconv.ParseFloat(string(t), 64); err != nil {
			return msgNumberRange
		}
	}
	w.valueDone()
	return ""
}

// memberName records the name of the object's next member; msg is what is
// wrong with the name as a string. A name given twice is refused.
func (f *jsonFrame) memberName(name, msg string) string {
	f.key, f.wantKey = name, false
	if msg != "" {
		f.key = strconv.Quote(strings.ToValidUTF8(name, "\uFFFD"))
		return msg
	}
	if slices.Contains(f.keys, name) {
		return msgMemberTwice
	}
	f.keys = append(f.keys, name)
	return ""
}

// stringTokenProblem says what is wrong with a string token s read from
// raw (its text as sent), or "".
func stringTokenProblem(s string, raw []byte) string {
	switch {
	case !utf8.Valid(raw):
		return msgUTF8
	case strings.IndexByte(s, 0) >= 0:
		return msgNUL
	case bytes.Contains(raw, []byte(`\u`)) && !surrogatesPaired(raw):
		return msgSurrogate
	}
	return ""
}

// surrogatesPaired reports whether every \uD800–\uDFFF escape in the JSON
// string text raw is a high surrogate followed at once by a low one.
func surrogatesPaired(raw []byte) bool {
	wantLow := false
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			if wantLow {
				return false
			}
			continue
		}
		i++
		if i >= len(raw) || raw[i] != 'u' || i+4 >= len(raw) {
			if wantLow {
				return false
			}
			continue
		}
		r, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 16)
		i += 4
		switch {
		case err != nil:
			return false
		case r >= 0xD800 && r < 0xDC00: // high
			if wantLow {
				return false
			}
			wantLow = true
		case r >= 0xDC00 && r < 0xE000: // low
			if !wantLow {
				return false
			}
			wantLow = false
		case wantLow:
			return false
		}
	}
	return !wantLow
}

// checkValues walks body along the operation's schema and refuses, 422
// validation_failed naming the member, what Huma's validation lets through
// but the handler cannot take: null in a member that is not nullable (Huma
// skips null in optional members), a number with a fraction or exponent
// where an integer is wanted (JSON Schema counts 2.0 as an integer; Go
// cannot decode it into one), and an object or array item inside an array
// of unique values (Huma compares unique items as map keys, which panics on
// such an item). And one rule Huma's keywords cannot state within v1's
// schemas (a new pattern would be a breaking change): a string whose schema
// sets a minimum length must hold a character other than white space (a
// name of spaces names nothing).
func checkValues(reg huma.Registry, schema *huma.Schema, body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil // Huma reports it
	}
	if loc, msg := valueProblem(reg, schema, v, "body"); loc != "" {
		return newProblem(http.StatusUnprocessableEntity, msgValidationFailed,
			&huma.ErrorDetail{Location: loc, Message: msg})
	}
	return nil
}

// valueProblem walks v along s and returns the location of the first value
// checkValues refuses, with what is wrong with it.
func valueProblem(reg huma.Registry, s *huma.Schema, v any, loc string) (string, string) {
	if s != nil && s.Ref != "" {
		s = reg.SchemaFromRef(s.Ref)
	}
	if s == nil || len(s.OneOf)+len(s.AnyOf) > 0 {
		return "", ""
	}
	switch val := v.(type) {
	case nil:
		if loc != "body" && !s.Nullable && s.Type != "" && s.Type != "null" {
			return loc, "expected a value, not null"
		}
	case json.Number:
		if s.Type == huma.TypeInteger && strings.ContainsAny(string(val), ".eE") {
			return loc, "expected integer: a whole number written without a fraction or exponent"
		}
	case string:
		if s.MinLength != nil && *s.MinLength > 0 && val != "" &&
			strings.TrimFunc(val, unicode.IsSpace) == "" {
			return loc, "expected text: not only white space"
		}
	case map[string]any:
		for _, name := range slices.Sorted(maps.Keys(val)) {
			sub := s.Properties[name]
			if sub == nil {
				sub, _ = s.AdditionalProperties.(*huma.Schema)
			}
			if l, msg := valueProblem(reg, sub, val[name], loc+"."+name); l != "" {
				return l, msg
			}
		}
	case []any:
		return itemsProblem(reg, s, val, loc)
	}
	return "", ""
}

// itemsProblem is valueProblem of an array's items.
func itemsProblem(reg huma.Registry, s *huma.Schema, items []any, loc string) (string, string) {
	for i, item := range items {
		at := loc + "[" + strconv.Itoa(i) + "]"
		switch item.(type) {
		case map[string]any, []any:
			if s.UniqueItems {
				return at, "expected " + itemType(reg, s.Items)
			}
		}
		if l, msg := valueProblem(reg, s.Items, item, at); l != "" {
			return l, msg
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
