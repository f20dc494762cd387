package tools

import (
	"strings"
	"testing"
)

// notFilterArgs are the list arguments that page or shape, not filter.
var notFilterArgs = map[string]bool{"limit": true, "cursor": true, "fields": true, "sort": true,
	"order": true, "include": true}

// TestMCP_EveryToolHasATitleAndADescriptionOfWhatItAnswers is the floor of
// what an agent reads before choosing a tool: a title, and a description of
// at least eight words that is more than the title, which for a list names
// at least one of its filters.
func TestMCP_EveryToolHasATitleAndADescriptionOfWhatItAnswers(t *testing.T) {
	e := newEnv(t)
	for _, s := range e.mcp.specs {
		tl := s.tool
		if tl.Title == "" {
			t.Errorf("%s: no title", tl.Name)
		}
		if words := len(strings.Fields(tl.Description)); words < 8 || tl.Description == tl.Title {
			t.Errorf("%s: the description %q (%d words) does not say what the tool answers",
				tl.Name, tl.Description, words)
		}
		if !s.list {
			continue
		}
		var filters []string
		for _, p := range s.params {
			if p.in == "query" && !notFilterArgs[p.name] {
				filters = append(filters, p.name)
			}
		}
		named := len(filters) == 0
		for _, f := range filters {
			named = named || strings.Contains(tl.Description, f)
		}
		if !named {
			t.Errorf("%s: the description names none of its filters %v: %q", tl.Name, filters, tl.Description)
		}
	}
}

// TestMCP_ArrayArgumentDescriptions_DoNotAskForCommaSeparatedText: an
// array argument is sent as a JSON array; a description saying
// "comma-separated" (the query string's spelling) leads an agent to send
// one string, which a client that checks arguments against inputSchema
// refuses before the call.
func TestMCP_ArrayArgumentDescriptions_DoNotAskForCommaSeparatedText(t *testing.T) {
	e := newEnv(t)
	for _, s := range e.mcp.specs {
		for name, prop := range s.inputProps {
			desc, _ := prop["description"].(string)
			if prop["type"] == "array" && strings.Contains(desc, "comma-separated") {
				t.Errorf("%s: argument %s is an array but says %q", s.tool.Name, name, desc)
			}
		}
	}
}
