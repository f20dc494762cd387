package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
	"platformapi/resources/licencetest"
)

func TestLicence_SerialMaskedUnlessLicenceAdmin_InLicenceAndAuditEvents(t *testing.T) {
	e, tok := licenceEnv(t)
	putLicence(e, tok, licencetest.Payload(e.InstallationID(), e.Clock.Now()))
	const masked = "****-****-****-MNOP"
	reader := e.Token(resources.PermLicenceRead, resources.PermAuditRead)
	admin := e.Token(resources.PermLicenceAdmin, resources.PermAuditRead)
	for name, tc := range map[string]struct {
		token, serial string
	}{"licence-read": {reader, masked}, "licence-admin": {admin, licencetest.Serial}} {
		t.Run(name, func(t *testing.T) {
			if got := e.Do("GET", "/api/v1/licence", tc.token, nil).JSON(t)["serial"]; got != tc.serial {
				t.Fatalf("licence serial %v, want %s", got, tc.serial)
			}
			items, _ := auditItems(t, e, tc.token, "?entity_type=licence")
			if len(items) != 1 || items[0]["entity_id"] != tc.serial {
				t.Fatalf("audit list: %v", items)
			}
			one := e.Do("GET", "/api/v1/audit-events/"+items[0]["id"].(string), tc.token, nil).JSON(t)
			if one["entity_id"] != tc.serial {
				t.Fatalf("audit event: %v", one)
			}
			if after := one["after_state"].(map[string]any); after["serial"] != masked {
				t.Fatalf("after_state serial: %v", after["serial"])
			}
			// The entity_id filter takes what the caller sees, and only that.
			seen, _ := auditItems(t, e, tc.token, "?entity_id="+url.QueryEscape(tc.serial))
			other := map[string]string{masked: licencetest.Serial, licencetest.Serial: masked}[tc.serial]
			unseen, _ := auditItems(t, e, tc.token, "?entity_type=licence&entity_id="+url.QueryEscape(other))
			if len(seen) != 1 || len(unseen) != 0 {
				t.Fatalf("filter by %s: %d events, by %s: %d", tc.serial, len(seen), other, len(unseen))
			}
		})
	}
}

// aiWrites are every write of the AI area, with a body each accepts.
var aiWrites = []struct {
	method, path string
	body         any
}{
	{"POST", "/api/v1/ai/models", map[string]any{"repo": "org/model"}},
	{"PATCH", "/api/v1/ai/models/1", map[string]any{"notes": "x"}},
	{"DELETE", "/api/v1/ai/models/1", nil},
	{"PUT", "/api/v1/node-caches/gpu-1/1", nil},
	{"DELETE", "/api/v1/node-caches/gpu-1/1", nil},
	{"POST", "/api/v1/ai/gateway/keys", map[string]any{"name": "k"}},
	{"POST", "/api/v1/ai/gateway/keys/1/rotate", nil},
	{"DELETE", "/api/v1/ai/gateway/keys/1", nil},
}

func TestLicence_WithoutFeatureAI_EveryAIWriteRestrictedReadsAndOtherWritesWork(t *testing.T) {
	e, tok := licenceEnv(t)
	p := licencetest.Payload(e.InstallationID(), e.Clock.Now())
	p.Features = []string{resources.FeatureBrand}
	putLicence(e, tok, p)
	for _, w := range aiWrites {
		t.Run(w.method+" "+w.path, func(t *testing.T) {
			m := assertLicenceRefusal(t, e.Do(w.method, w.path, tok, w.body), "licence_restricted", "valid")
			if m["detail"] != "the licence does not include the feature ai" {
				t.Fatalf("detail: %v", m["detail"])
			}
		})
	}
	if n := count(t, e, "SELECT (SELECT count(*) FROM ai_models) + (SELECT count(*) FROM ai_gateway_keys)"); n != 0 {
		t.Fatalf("%d AI rows written without the feature", n)
	}
	for _, path := range []string{"/api/v1/ai/models", "/api/v1/ai/nodes", "/api/v1/ai/gateway/keys"} {
		if r := e.Do("GET", path, tok, nil); r.Status != 200 {
			t.Fatalf("GET %s: %d", path, r.Status)
		}
	}
	createCustomer(t, e, tok, acme())
}

// TestLicence_EveryWriteDeclaresItsFeature reads the served contract: every
// write of the AI area declares the feature ai, and only the licence
// install is exempt.
func TestLicence_EveryWriteDeclaresItsFeature(t *testing.T) {
	e, _ := licenceEnv(t)
	var doc struct {
		Paths map[string]map[string]struct {
			ID      string   `json:"operationId"`
			Tags    []string `json:"tags"`
			Feature string   `json:"x-licence-feature"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(e.Do("GET", "/api/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	want, got := map[string]string{}, map[string]string{}
	for _, item := range doc.Paths {
		for method, op := range item {
			if method == "get" {
				continue
			}
			got[op.ID] = op.Feature
			want[op.ID] = map[string]string{"AI": resources.FeatureAI, "Brand": resources.FeatureBrand}[op.Tags[0]]
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("licence features of writes (-want +got):\n%s", diff)
	}
}

func TestLicence_CustomersLimit_CreateBeyondRestrictedArchivingFreesOne(t *testing.T) {
	e, tok := licenceEnv(t)
	p := licencetest.Payload(e.InstallationID(), e.Clock.Now())
	p.Limits = map[string]int{resources.LimitCustomers: 2}
	putLicence(e, tok, p)
	first := createCustomer(t, e, tok, acme())
	createCustomer(t, e, tok, acme("short_name", "BETA", "vcs_group", "beta"))
	m := assertLicenceRefusal(t, e.Do("POST", "/api/v1/customers", tok, acme("short_name", "GAMMA", "vcs_group", "gamma")),
		"licence_restricted", "valid")
	if m["detail"] != "the licence allows 2 customers and 2 exist" {
		t.Fatalf("detail: %v", m["detail"])
	}
	if r := e.Do("DELETE", "/api/v1/customers/"+first["id"].(string), tok, nil); r.Status != 204 {
		t.Fatalf("archive: %d %s", r.Status, r.Body)
	}
	createCustomer(t, e, tok, acme("short_name", "GAMMA", "vcs_group", "gamma"))
	if n := count(t, e, "SELECT count(*) FROM customers WHERE status <> 'archived'"); n != 2 {
		t.Fatalf("%d live customers under a limit of 2", n)
	}
}

func TestLicence_CustomersLimit_ConcurrentCreatesNeverPassIt(t *testing.T) {
	e, tok := licenceEnv(t)
	p := licencetest.Payload(e.InstallationID(), e.Clock.Now())
	p.Limits = map[string]int{resources.LimitCustomers: 3}
	putLicence(e, tok, p)
	const n = 10
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("C%d", i)
			statuses[i] = e.Do("POST", "/api/v1/customers", tok,
				acme("short_name", name, "vcs_group", fmt.Sprintf("c-%d", i))).Status
		})
	}
	wg.Wait()
	got := map[int]int{}
	for _, s := range statuses {
		got[s]++
	}
	if diff := cmp.Diff(map[int]int{201: 3, 403: n - 3}, got); diff != "" {
		t.Fatalf("statuses (-want +got):\n%s", diff)
	}
	if c := count(t, e, "SELECT count(*) FROM customers"); c != 3 {
		t.Fatalf("%d customers under a limit of 3", c)
	}
}
