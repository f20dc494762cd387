package app

import (
	"context"
	_ "embed"

	"platformapi/resources"
)

//go:embed demo_inventory.yaml
var demoInventory []byte

// demoModels are the catalogue rows of the demo world: the models the
// simulated fleet serves.
var demoModels = []resources.AIModelCreate{
	{Repo: "Qwen/Qwen3-Coder-30B-A3B-Instruct", AIModelMeta: resources.AIModelMeta{Category: ptr("coding"),
		Vendor: ptr("Qwen"), Org: ptr("Qwen"), GatewayTier: ptr("code"), ParamCountB: ptr(30.5), SizeGB: ptr(61.0),
		ServingNode: ptr("gpu-fra1-01"), Summary: ptr("Mixture-of-experts coding model served by the fra1 cluster.")}},
	{Repo: "BAAI/bge-m3", AIModelMeta: resources.AIModelMeta{Category: ptr("embedding"), Vendor: ptr("BAAI"),
		Org: ptr("BAAI"), GatewayTier: ptr("embed"), ParamCountB: ptr(0.57), SizeGB: ptr(2.3),
		ServingNode: ptr("gpu-fra1-01-vm1"), Summary: ptr("Multilingual embedding model.")}},
}

// loadDemoWorld imports the demo AI node roster (the hosts the simulated
// monitoring reports, which then follows it) and the demo catalogue rows,
// idempotently.
func (m *Main) loadDemoWorld(ctx context.Context) error {
	f, err := resources.ParseInventory("demo_inventory.yaml", demoInventory)
	if err != nil {
		return err
	}
	if _, err := m.store.ImportInventory(ctx, resources.Actor{Label: demoAdmin}, f); err != nil {
		return err
	}
	if err := m.syncSimRoster(ctx); err != nil {
		return err
	}
	for _, c := range demoModels {
		model, err := resources.NewAIModel(c)
		if err != nil {
			return err
		}
		_, err = m.store.CreateAIModel(ctx, resources.Actor{Label: demoAdmin, AuthKind: resources.AuthKindSession}, model, nil)
		if e, ok := resources.AsError(err); ok && e.Code == resources.CodeAIModelRepoTaken {
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
