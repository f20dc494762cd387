package resources

import (
	"strings"
	"testing"
	"time"
)

func strp(s string) *string { return &s }

func TestAIModel_Repo_PatternPartsDotsAndLength(t *testing.T) {
	good := []string{"Qwen/Qwen3-8B", "a/b", "0rg/n.a_m-e", "org./name.", "a.b/c.d.e", "org/" + strings.Repeat("n", 92)}
	for _, r := range good {
		if err := ValidateRepo(r); err != nil {
			t.Errorf("%q refused: %v", r, err)
		}
	}
	bad := []string{"", "org", "org/", "/name", "org/name/x", ".org/name", "org/-name", "org/_n", "org/na..me",
		"or..g/name", "org./.name", "org/na me", "org/naïve", "org/name!", "org/" + strings.Repeat("n", 93)}
	for _, r := range bad {
		e, ok := AsError(ValidateRepo(r))
		if !ok || e.Field != "repo" || e.Code != CodeValidationFailed {
			t.Errorf("%q: %v", r, e)
		}
	}
}

func TestAIModel_New_DefaultsPlannedDisplayNameNoCaches(t *testing.T) {
	m, err := NewAIModel(AIModelCreate{Repo: "meta-llama/Llama-3.1-8B"})
	if err != nil {
		t.Fatal(err)
	}
	if m.DisplayName != "Llama-3.1-8B" || m.Status != AIModelPlanned || m.Location != nil || m.OfflineReady ||
		m.Gated || m.NodeCaches == nil || len(m.NodeCaches) != 0 {
		t.Fatalf("%+v", m)
	}
	gated := true
	m, _ = NewAIModel(AIModelCreate{Repo: "a/b", DisplayName: strp("Named"), Gated: &gated})
	if m.DisplayName != "Named" || !m.Gated {
		t.Fatalf("%+v", m)
	}
	if _, err := NewAIModel(AIModelCreate{Repo: "a/b", DisplayName: strp("")}); err == nil {
		t.Fatal("empty display_name accepted")
	}
}

func TestAIModel_Meta_EveryTextLimitAtAndPastTheBound(t *testing.T) {
	for name, limit := range AIModelTextLimits {
		for _, n := range []int{limit, limit + 1} {
			var p AIModelMetaPatch
			setTextPatch(&p, name, strings.Repeat("é", n)) // characters, not bytes, count
			err := AIModelMeta{}.apply(p).Validate()
			if e, _ := AsError(err); (n > limit) != (err != nil) || (err != nil && e.Field != name) {
				t.Errorf("%s length %d: %v", name, n, err)
			}
		}
	}
}

func TestAIModel_Meta_NumbersAndBenchmarks(t *testing.T) {
	num := func(v float64) *float64 { return &v }
	cases := map[string]struct {
		meta  AIModelMeta
		field string
	}{
		"params max":     {AIModelMeta{ParamCountB: num(MaxParamCountB)}, ""},
		"params over":    {AIModelMeta{ParamCountB: num(MaxParamCountB + 0.5)}, "param_count_b"},
		"params neg":     {AIModelMeta{ParamCountB: num(-0.1)}, "param_count_b"},
		"size max":       {AIModelMeta{SizeGB: num(MaxSizeGB)}, ""},
		"size over":      {AIModelMeta{SizeGB: num(MaxSizeGB + 1)}, "size_gb"},
		"bench kinds":    {AIModelMeta{Benchmarks: Benchmarks{"a": 1.5, "b": "90%", "c": 3}}, ""},
		"bench bool":     {AIModelMeta{Benchmarks: Benchmarks{"ok": 1.0, "x": true}}, "benchmarks.x"},
		"bench object":   {AIModelMeta{Benchmarks: Benchmarks{"x": map[string]any{}}}, "benchmarks.x"},
		"bench null":     {AIModelMeta{Benchmarks: Benchmarks{"x": nil}}, "benchmarks.x"},
		"bench 100":      {AIModelMeta{Benchmarks: benchmarks(MaxBenchmarks)}, ""},
		"bench 101":      {AIModelMeta{Benchmarks: benchmarks(MaxBenchmarks + 1)}, "benchmarks"},
		"empty is valid": {AIModelMeta{Benchmarks: Benchmarks{}}, ""},
	}
	for name, c := range cases {
		err := c.meta.Validate()
		e, _ := AsError(err)
		if (c.field == "") != (err == nil) || (err != nil && e.Field != c.field) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func benchmarks(n int) Benchmarks {
	b := Benchmarks{}
	for i := range n {
		b[strings.Repeat("b", i+1)] = float64(i)
	}
	return b
}

func setTextPatch(p *AIModelMetaPatch, name, v string) {
	set := Patch[string]{Set: true, Value: v}
	fields := map[string]*Patch[string]{
		"architecture": &p.Architecture, "category": &p.Category, "context_window": &p.ContextWindow,
		"description": &p.Description, "frontier_equiv": &p.FrontierEquiv, "gateway_tier": &p.GatewayTier,
		"license": &p.License, "min_target": &p.MinTarget, "model_card_url": &p.ModelCardURL, "notes": &p.Notes,
		"org": &p.Org, "params": &p.Params, "published": &p.Published, "quant": &p.Quant,
		"serving_node": &p.ServingNode, "strong_axis": &p.StrongAxis, "summary": &p.Summary, "vendor": &p.Vendor,
		"vendor_country": &p.VendorCountry,
	}
	*fields[name] = set
}

func TestAIModel_Apply_FrozenReadOnlyAndNullable(t *testing.T) {
	nas := "models"
	m := AIModel{ID: 1, Repo: "a/b", DisplayName: "b", Status: AIModelOwned, NASVolume: &nas,
		AIModelMeta: AIModelMeta{Notes: strp("n"), Benchmarks: Benchmarks{"x": 1.0}}}
	same := AIModelPatch{Repo: Patch[string]{Set: true, Value: "a/b"}, Status: Patch[string]{Set: true, Value: AIModelOwned},
		Location: Patch[string]{Set: true, Null: true}, NASVolume: Patch[string]{Set: true, Value: "models"},
		OfflineReady: Patch[bool]{Set: true}}
	if got, err := m.Apply(same); err != nil || got.Repo != "a/b" {
		t.Fatalf("current values refused: %v", err)
	}
	for field, p := range map[string]AIModelPatch{
		"repo":          {Repo: Patch[string]{Set: true, Value: "a/c"}},
		"status":        {Status: Patch[string]{Set: true, Value: AIModelServing}},
		"location":      {Location: Patch[string]{Set: true, Value: "nas"}},
		"nas_volume":    {NASVolume: Patch[string]{Set: true, Null: true}},
		"offline_ready": {OfflineReady: Patch[bool]{Set: true, Value: true}},
	} {
		_, err := m.Apply(p)
		e, _ := AsError(err)
		want := CodeReadOnlyField
		if field == "repo" {
			want = CodeImmutableField
		}
		if e == nil || e.Field != field || e.Code != want {
			t.Errorf("%s: %v", field, err)
		}
	}
	got, err := m.Apply(AIModelPatch{DisplayName: Patch[string]{Set: true, Value: "B"},
		Meta: AIModelMetaPatch{Notes: Patch[string]{Set: true, Null: true}, Benchmarks: Patch[Benchmarks]{Set: true, Null: true},
			Org: Patch[string]{Set: true, Value: ""}}})
	if err != nil || got.DisplayName != "B" || got.Notes != nil || got.Benchmarks != nil || got.Org == nil || *got.Org != "" {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestAIModel_Delete_OnlyPlannedWithoutCaches(t *testing.T) {
	if err := CheckAIModelDelete(AIModel{Status: AIModelPlanned}, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		status string
		caches int
	}{{AIModelPlanned, 1}, {AIModelOwned, 0}, {"archived-upstream", 0}} {
		e, _ := AsError(CheckAIModelDelete(AIModel{Status: c.status}, c.caches))
		if e == nil || e.Code != CodeAIModelHasWeights || e.Kind != KindConflict || e.Blockers["node_caches"] != c.caches {
			t.Errorf("%+v: %v", c, e)
		}
	}
}

func TestGatewayKey_ValueShapeAndStatus(t *testing.T) {
	v := NewGatewayKeyValue()
	if !strings.HasPrefix(v, "sk-gw-") || len(v) != 46 || !GatewayKeyShaped(v) || v == NewGatewayKeyValue() {
		t.Fatalf("%q", v)
	}
	for _, bad := range []string{"", "sk-gw-", v[:45], v + "x", "sk-gx-" + v[6:], v[:45] + "!"} {
		if GatewayKeyShaped(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestGatewayKey_Status_RevokedWinsExpiryIsTheFirstRefusedInstant(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Second), now.Add(-time.Second)
	for _, c := range []struct {
		name string
		key  GatewayKey
		want string
	}{
		{"no expiry, not revoked", GatewayKey{}, GatewayKeyActive},
		{"expires later", GatewayKey{ExpiresAt: &later}, GatewayKeyActive},
		{"expires now", GatewayKey{ExpiresAt: &now}, GatewayKeyExpired},
		{"expired earlier", GatewayKey{ExpiresAt: &earlier}, GatewayKeyExpired},
		{"revoked", GatewayKey{RevokedAt: &earlier}, GatewayKeyRevoked},
		{"revoked and expired", GatewayKey{RevokedAt: &earlier, ExpiresAt: &earlier}, GatewayKeyRevoked},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.key.Status(now); got != c.want {
				t.Fatalf("status %q, want %q", got, c.want)
			}
		})
	}
}

func TestCheckGatewayKeyExpiry_FutureOrNull_Else422(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Second), now.Add(-time.Second)
	for _, at := range []*time.Time{nil, &later} {
		if err := CheckGatewayKeyExpiry(at, now); err != nil {
			t.Errorf("%v refused: %v", at, err)
		}
	}
	for _, at := range []*time.Time{&now, &earlier} {
		e, _ := AsError(CheckGatewayKeyExpiry(at, now))
		if e == nil || e.Kind != KindInvalid || e.Code != CodeValidationFailed || e.Field != "expires_at" {
			t.Errorf("%v: %v", at, e)
		}
	}
}
