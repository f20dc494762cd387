# A key of the AI gateway; its value is kept in state (sensitive) only with
# return_value = true. Destroy revokes it (needs allow_destroy).
resource "platformapi_ai_gateway_key" "ci" {
  name         = "ci-runner" # a change replaces the key
  tier         = "standard"  # a change replaces the key
  return_value = true
}

output "gateway_key" {
  value     = platformapi_ai_gateway_key.ci.value
  sensitive = true
}
