package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"

	"platformapi/cmd/terraform-provider-platformapi/platformclient"
)

// gatewayKeyKind is platformapi_ai_gateway_key. The API has no change of
// name or tier, so either replaces the key (revoke, a destroy, then
// create). The value is fetched only when return_value is true: the create
// carries the Idempotency-Key (and so must not ask for the value, 422
// return_value_not_idempotent), then a rotation without a key returns the
// value, which is kept in state as a sensitive attribute only.
var gatewayKeyKind = &kind{
	name: "ai_gateway_key", noun: "AI gateway key", verb: "revoke", label: "name",
	schema: schema.Schema{
		Description: "A key of the AI gateway. Destroy revokes it (needs allow_destroy); a change of " +
			"name or tier replaces it. With return_value = true its value is stored (sensitive) in state.",
		Attributes: map[string]schema.Attribute{
			"id":   idAttr(),
			"name": required("Name; a change replaces the key."),
			"tier": optional("Serving tier the key is meant for (recorded only); a change replaces the key."),
			"return_value": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				Description: "Obtain the key's value and keep it in state (sensitive). Turning it on for an " +
					"existing key rotates the key; turning it off drops the value from state."},
			"value": schema.StringAttribute{Computed: true, Sensitive: true,
				Description: "The key's value, only with return_value = true; never shown in plans."},
			"status":     computed("active or revoked."),
			"created_by": stable("Who created it."),
			"created_at": stable("When it was created."),
			"rotated_at": computed("Last rotation; null when never rotated."),
			"revoked_at": computed("When it was revoked."),
		},
	},
	createType: platformclient.GatewayKeyCreate{},
	replace:    []string{"name", "tier"},
	local:      []string{"return_value", "value"},
	gone:       func(r record) bool { return r["status"] == "revoked" },
	create:     createGatewayKey,
	read:       readGatewayKey,
	update: func(ctx context.Context, c *Client, id string, _ record, ch change) (record, error) {
		want := toJSON(ch.plan["return_value"]) == true
		if want && toJSON(ch.state["return_value"]) != true {
			return rotateGatewayKey(ctx, c, id)
		}
		rec, err := readGatewayKey(ctx, c, id)
		if err == nil && !want {
			rec["value"] = nil
		}
		return rec, err
	},
	remove: func(ctx context.Context, c *Client, id string) error {
		res, err := c.api.RevokeAiGatewayKeyWithResponse(ctx, id)
		if err != nil {
			return err
		}
		return noContent(res.HTTPResponse, res.Body, nil)
	},
}

func createGatewayKey(ctx context.Context, c *Client, body record, key string) (record, bool, error) {
	want := body["return_value"] == true
	delete(body, "return_value")
	in, err := typed[platformclient.GatewayKeyCreate](body)
	if err != nil {
		return nil, false, err
	}
	params := &platformclient.CreateAiGatewayKeyParams{IdempotencyKey: &key}
	res, err := c.api.CreateAiGatewayKeyWithResponse(ctx, params, in)
	if err != nil {
		return nil, false, err
	}
	rec, err := recordOf(res.HTTPResponse, res.Body, res.JSON201)
	if err != nil || !want {
		return rec, replayed(res.HTTPResponse), err
	}
	rec, err = rotateGatewayKey(ctx, c, rec["id"].(string))
	return rec, replayed(res.HTTPResponse), err
}

// rotateGatewayKey gives the key a new value and returns it (no
// Idempotency-Key: a stored answer would hold the value).
func rotateGatewayKey(ctx context.Context, c *Client, id string) (record, error) {
	yes := true
	res, err := c.api.RotateAiGatewayKeyWithResponse(ctx, id, &platformclient.RotateAiGatewayKeyParams{},
		platformclient.GatewayKeyRotate{ReturnValue: &yes})
	if err != nil {
		return nil, err
	}
	return recordOf(res.HTTPResponse, res.Body, res.JSON200)
}

func readGatewayKey(ctx context.Context, c *Client, id string) (record, error) {
	res, err := c.api.GetAiGatewayKeyWithResponse(ctx, id)
	if err != nil {
		return nil, err
	}
	return recordOf(res.HTTPResponse, res.Body, res.JSON200)
}
