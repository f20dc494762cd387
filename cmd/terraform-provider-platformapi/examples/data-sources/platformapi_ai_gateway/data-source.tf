# The OpenAI-compatible address of the AI gateway, for clients' settings.
data "platformapi_ai_gateway" "gw" {}

output "openai_base_url" {
  value = data.platformapi_ai_gateway.gw.base_url
}

output "gateway_tiers" {
  value = data.platformapi_ai_gateway.gw.tiers
}
