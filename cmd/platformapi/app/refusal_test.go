package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

// TestPrintRefusal_MembersOnlyWhenSet: a command's refusal printed
// "field": "" for every refusal that names no member (an unknown node in
// portal node-key, an unknown token); it prints code and detail, and
// field, required, state and remedy only when the refusal has them. An
// error that is not a refusal is not printed.
func TestPrintRefusal_MembersOnlyWhenSet(t *testing.T) {
	forbidden := resources.Errorf(resources.KindForbidden, "forbidden", "not allowed")
	forbidden.Required, forbidden.Remedy = []string{"ai-write-global"}, "ask an administrator"
	cases := []struct {
		name    string
		err     error
		printed bool
		want    string
	}{
		{"not found", resources.NotFound(resources.CodeAINodeNotFound, "no AI node %q", "gpu-nope"), true,
			`{"error":{"code":"ai_node_not_found","detail":"no AI node \"gpu-nope\""}}`},
		{"invalid member, wrapped", fmt.Errorf("portal: %w", &resources.Error{Kind: resources.KindInvalid,
			Code: "validation_failed", Detail: "bad", Field: "email"}), true,
			`{"error":{"code":"validation_failed","detail":"bad","field":"email"}}`},
		{"forbidden", forbidden, true, `{"error":{"code":"forbidden","detail":"not allowed",` +
			`"required":["ai-write-global"],"remedy":"ask an administrator"}}`},
		{"not a refusal", errors.New("connection refused"), false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			printed := PrintRefusal(&out, c.err)
			var compact bytes.Buffer
			_ = json.Compact(&compact, out.Bytes())
			got := compact.String()
			if diff := cmp.Diff(c.want, got); printed != c.printed || diff != "" {
				t.Errorf("printed %v, want %v; output (-want +got)\n%s", printed, c.printed, diff)
			}
		})
	}
}
