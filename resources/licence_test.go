package resources

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLicenceStateAt_Boundaries(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := LicencePayload{ValidFrom: from, ValidUntil: from.AddDate(1, 0, 0), GraceDays: 10}
	got := map[string]string{}
	for name, at := range map[string]time.Time{
		"before valid_from":   from.Add(-time.Second),
		"at valid_from":       from,
		"last valid second":   p.ValidUntil.Add(-time.Second),
		"at valid_until":      p.ValidUntil,
		"last grace second":   p.GraceEnds().Add(-time.Second),
		"at the end of grace": p.GraceEnds(),
	} {
		got[name] = p.StateAt(at)
	}
	want := map[string]string{"before valid_from": LicenceInvalid, "at valid_from": LicenceValid,
		"last valid second": LicenceValid, "at valid_until": LicenceGrace, "last grace second": LicenceGrace,
		"at the end of grace": LicenceExpired}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("states (-want +got):\n%s", diff)
	}
}

func TestMaskSerial_KeepsOnlyTheLastGroup(t *testing.T) {
	got := []string{MaskSerial("ABCD-EFGH-IJKL-MNOP"), MaskSerial("x"), MaskSerial("")}
	if diff := cmp.Diff([]string{"****-****-****-MNOP", "****", "****"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestParseIfMatch_StrongTagsListsStarWeakNeverMatches(t *testing.T) {
	b := Brand{Version: 3}
	for h, stale := range map[string]bool{
		"": false, `"3"`: false, `3`: false, `"1", "3"`: false, `*`: false,
		`"2"`: true, `W/"3"`: true, `abc`: true, `"1","2"`: true,
	} {
		err := b.Preconditions(BrandReplace{IfMatch: ParseIfMatch(h)})
		if (err != nil) != stale {
			t.Errorf("If-Match %q: %v, want stale %v", h, err, stale)
		}
	}
}

// TestParseIfMatch_StarInAList_IsNoWildcard: If-Match is either "*" or a
// list of entity tags (RFC 9110, section 13.1.1), so a "*" inside a list
// (or on one of several lines, which combine into one list) matches no
// version: only the list's real tags can make the PUT proceed.
func TestParseIfMatch_StarInAList_IsNoWildcard(t *testing.T) {
	b := Brand{Version: 3}
	for h, stale := range map[string]bool{
		`"9", *`: true, `*, "9"`: true, `*,*`: true, ` * `: false, `*, "3"`: false,
	} {
		err := b.Preconditions(BrandReplace{IfMatch: ParseIfMatch(h)})
		if (err != nil) != stale {
			t.Errorf("If-Match %q: %v, want stale %v", h, err, stale)
		}
	}
}
