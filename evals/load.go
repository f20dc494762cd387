package evals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"
)

// FileError is a fault in a suite file: the file, the line and the member
// (a path such as turns[0].calls[1].expect) it concerns.
type FileError struct {
	File   string
	Line   int
	Member string
	Msg    string
}

// Error reads "file:line: member: message".
func (e *FileError) Error() string {
	member := e.Member
	if member == "" {
		member = "(file)"
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, member, e.Msg)
}

// SuiteFile is a parsed, checked suite and the file it came from.
type SuiteFile struct {
	Path  string
	Suite Suite
	root  *yaml.Node
}

// LoadFiles reads and checks every file; all faults are returned joined.
// Two files with the same suite name are refused.
func LoadFiles(paths []string) ([]*SuiteFile, error) {
	var out []*SuiteFile
	var errs []error
	seen := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f, err := Parse(p, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, dup := seen[f.Suite.Name]; dup {
			errs = append(errs, f.fault([]string{"name"}, "suite name %q is also used by %s", f.Suite.Name, first))
			continue
		}
		seen[f.Suite.Name] = p
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

// Parse reads one suite (YAML, or JSON which is YAML too), validates it
// against the schema (unknown members refused) and then checks what the
// schema cannot: JSONPaths, regular expressions, templates, trajectories.
// Every fault is a *FileError (several are joined).
func Parse(name string, data []byte) (*SuiteFile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &FileError{File: name, Line: yamlErrLine(err), Msg: err.Error()}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &FileError{File: name, Line: 1, Msg: "the file must hold one YAML document"}
	}
	f := &SuiteFile{Path: name, root: doc.Content[0]}
	raw, err := f.toJSON()
	if err != nil {
		return nil, err
	}
	if err := f.validate(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.Suite); err != nil {
		return nil, &FileError{File: name, Line: f.root.Line, Msg: err.Error()}
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// toJSON converts the YAML tree to JSON; mapping keys must be strings.
func (f *SuiteFile) toJSON() ([]byte, error) {
	var v any
	if err := f.root.Decode(&v); err != nil {
		return nil, &FileError{File: f.Path, Line: yamlErrLine(err), Msg: strings.ReplaceAll(err.Error(), "\n ", "")}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &FileError{File: f.Path, Line: f.root.Line, Msg: "not representable as JSON: " + err.Error()}
	}
	return b, nil
}

// validate checks the JSON against the suite schema and reports each
// failing leaf with its position.
func (f *SuiteFile) validate(raw []byte) error {
	schema, err := compiledSchema()
	if err != nil {
		return err
	}
	inst, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &FileError{File: f.Path, Line: 1, Msg: err.Error()}
	}
	verr := schema.Validate(inst)
	var ve *sjs.ValidationError
	if verr == nil || !errors.As(verr, &ve) {
		return verr
	}
	p := message.NewPrinter(language.English)
	var errs []error
	for _, leaf := range leaves(ve) {
		loc := leaf.InstanceLocation
		if ap, ok := leaf.ErrorKind.(*kind.AdditionalProperties); ok {
			for _, prop := range ap.Properties {
				errs = append(errs, f.fault(append(loc[:len(loc):len(loc)], prop), "unknown member"))
			}
			continue
		}
		errs = append(errs, f.fault(loc, "%s", leaf.ErrorKind.LocalizedString(p)))
	}
	return errors.Join(errs...)
}

// leaves flattens a validation error to the errors that have no causes.
func leaves(e *sjs.ValidationError) []*sjs.ValidationError {
	if len(e.Causes) == 0 {
		return []*sjs.ValidationError{e}
	}
	var out []*sjs.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// fault builds a FileError for the member at loc (path segments as in a
// JSON pointer), with the line of the deepest node found.
func (f *SuiteFile) fault(loc []string, format string, args ...any) *FileError {
	member, line := locate(f.root, loc)
	return &FileError{File: f.Path, Line: line, Member: member, Msg: fmt.Sprintf(format, args...)}
}

// line is the line in the file of the member at loc (keys and indexes,
// e.g. "turns", 0, "calls", 1, "expect"): of the deepest of them present,
// so a member left out gives the line of the one holding it (1: the file).
func (f *SuiteFile) line(loc ...any) int {
	segs := make([]string, len(loc))
	for i, s := range loc {
		segs[i] = fmt.Sprint(s)
	}
	_, line := locate(f.root, segs)
	return line
}

// atLine is an error that ends a run, with the suite file's line it
// concerns (the step, call or member that broke).
type atLine struct {
	line int
	err  error
}

func (e *atLine) Error() string { return e.err.Error() }
func (e *atLine) Unwrap() error { return e.err }

// lineOf is the line an error carries (atLine), else def.
func lineOf(err error, def int) int {
	var at *atLine
	if errors.As(err, &at) {
		return at.line
	}
	return def
}

// locate walks loc through the YAML tree: the member path in dotted form
// (turns[0].calls[1]) and the line of the key or item found last.
func locate(n *yaml.Node, loc []string) (string, int) {
	var b strings.Builder
	line := n.Line
	for _, seg := range loc {
		next, at := child(n, seg)
		if n != nil && n.Kind == yaml.SequenceNode {
			fmt.Fprintf(&b, "[%s]", seg)
		} else {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		}
		if next != nil {
			line = at
		}
		n = next
	}
	return b.String(), line
}

// child finds seg in a mapping (by key) or sequence (by index): the value
// node and the line of its key or item.
func child(n *yaml.Node, seg string) (*yaml.Node, int) {
	if n == nil {
		return nil, 0
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				return n.Content[i+1], n.Content[i].Line
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i], n.Content[i].Line
		}
	}
	return nil, 0
}

// yamlErrLine digs the line out of a yaml.v3 error ("yaml: line 7: …").
func yamlErrLine(err error) int {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+5:]
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(rest)
		}
		if n, err := strconv.Atoi(rest[:end]); err == nil {
			return n
		}
	}
	return 1
}
