# A catalogue row: metadata only, the API never pulls weights.
resource "platformapi_ai_model" "coder" {
  repo          = "acme-labs/coder-7b" # a change replaces the row
  display_name  = "Coder 7B"
  summary       = "Small coding model"
  category      = "coding"
  vendor        = "Acme Labs"
  license       = "apache-2.0"
  architecture  = "dense"
  param_count_b = 7
  size_gb       = 15.2
  gateway_tier  = "standard"
  benchmarks    = jsonencode({ humaneval = 71.3 })
}
