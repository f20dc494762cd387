package app

import (
	"context"
	"net/http"
	"time"
)

// demoMoreModels are the catalogue rows Li adds two weeks back.
var demoMoreModels = []map[string]any{
	{"repo": "meta-llama/Llama-3.3-70B-Instruct", "category": "chat", "vendor": "Meta", "org": "meta-llama",
		"gateway_tier": "chat", "param_count_b": 70.6, "size_gb": 141.0, "serving_node": "gpu-fra1-02",
		"summary": "General chat model for the customer assistants.", "license": "llama3.3"},
	{"repo": "mistralai/Mistral-Small-3.1-24B-Instruct-2503", "category": "vision", "vendor": "Mistral AI",
		"org": "mistralai", "gateway_tier": "chat", "param_count_b": 24.0, "size_gb": 48.0,
		"summary": "Small multimodal model; evaluated, not served yet.", "license": "apache-2.0"},
	{"repo": "openai/whisper-large-v3", "category": "audio", "vendor": "OpenAI", "org": "openai",
		"gateway_tier": "audio", "param_count_b": 1.55, "size_gb": 3.1,
		"summary": "Speech recognition for the call-centre transcripts.", "license": "apache-2.0"},
	{"repo": "google/gemma-3-27b-it", "gated": true, "category": "chat", "vendor": "Google", "org": "google",
		"param_count_b": 27.0, "size_gb": 54.0, "summary": "Gated; licence review pending.", "license": "gemma"},
}

// demoCentral are the models whose weights the platform holds centrally
// (what the catalogue sync records; there is no API for it).
var demoCentral = []string{"Qwen/Qwen3-Coder-30B-A3B-Instruct", "BAAI/bge-m3", "meta-llama/Llama-3.3-70B-Instruct",
	"openai/whisper-large-v3"}

// demoCaches are the node caches Li copies: host and model repo. (The copy
// of BAAI/bge-m3 onto the lab VM, which crawls, starts hours back: see
// lastDays and demoSlowAgent.)
var demoCaches = [][2]string{
	{"gpu-fra1-01", "Qwen/Qwen3-Coder-30B-A3B-Instruct"},
	{"gpu-fra1-02", "BAAI/bge-m3"},
	{"gpu-fra1-02", "meta-llama/Llama-3.3-70B-Instruct"},
	{"gpu-fra1-03", "meta-llama/Llama-3.3-70B-Instruct"},
	{"gpu-fra1-03", "openai/whisper-large-v3"},
}

// demoKeys are the gateway keys Li creates: name and tier.
var demoKeys = [][2]string{{"shop-assistant", "chat"}, {"intranet-search", "embed"}, {"ci-codegen", "code"},
	{"legacy-bot", "chat"}}

// demoTrialKey is the key Li gives a partner for a week: it expired a week
// before the clock's instant, so the gateway refuses it.
const demoTrialKey = "partner-trial"

// models: two weeks back Li adds models, the central copies arrive, Li
// copies weights onto nodes and creates gateway keys.
func (d *demoWorld) models(ctx context.Context, _ http.Handler) error {
	if err := d.m.demoAt(ctx, 14*day); err != nil {
		return err
	}
	for _, body := range demoMoreModels {
		if _, err := d.li.do(ctx, http.MethodPost, "/ai/models", body); err != nil {
			return err
		}
	}
	if _, err := d.m.db.NewRaw(`UPDATE ai_models SET status = 'owned', location = 'nas', nas_volume = 'models',
		nas_path = '/models/' || repo WHERE repo IN (?)`, bunList(demoCentral)).Exec(ctx); err != nil {
		return err
	}
	for _, c := range demoCaches {
		modelID, err := d.modelID(ctx, c[1])
		if err != nil {
			return err
		}
		op, err := d.li.do(ctx, http.MethodPut, "/node-caches/"+c[0]+"/"+modelID, nil)
		if err != nil {
			return err
		}
		if _, err := d.li.wait(ctx, id(op)); err != nil {
			return err
		}
	}
	for _, k := range demoKeys {
		made, err := d.li.do(ctx, http.MethodPost, "/ai/gateway/keys", map[string]any{"name": k[0], "tier": k[1]})
		if err != nil {
			return err
		}
		d.ids["key:"+k[0]] = id(made)
	}
	_, err := d.li.do(ctx, http.MethodPost, "/ai/gateway/keys", map[string]any{"name": demoTrialKey, "tier": "chat",
		"expires_at": d.m.now().Add(7 * day).UTC().Format(time.RFC3339)})
	return err
}

// modelID finds a catalogue id by repo.
func (d *demoWorld) modelID(ctx context.Context, repo string) (string, error) {
	var id int64
	err := d.m.db.NewRaw("SELECT id FROM ai_models WHERE repo = ?", repo).Scan(ctx, &id)
	return formatID(id), err
}
