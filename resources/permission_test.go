package resources_test

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

func TestCanonicalKeys_CatalogueKeysShareOneStringOthersKept(t *testing.T) {
	read := strings.Clone(resources.PermAIRead) // as a database read makes it: its own copy
	in := []string{read, "custom-key"}
	got := resources.CanonicalKeys(in)
	if diff := cmp.Diff([]string{resources.PermAIRead, "custom-key"}, got); diff != "" {
		t.Fatalf("CanonicalKeys (-want +got):\n%s", diff)
	}
	if unsafe.StringData(got[0]) != unsafe.StringData(resources.PermAIRead) {
		t.Error("a catalogue key is still its own copy")
	}
	if unsafe.StringData(in[0]) != unsafe.StringData(read) {
		t.Error("the input was changed; want a copy")
	}
	if got := resources.CanonicalKeys(nil); got == nil || len(got) != 0 {
		t.Errorf("CanonicalKeys(nil) = %#v, want an empty, non-nil set", got)
	}
}
