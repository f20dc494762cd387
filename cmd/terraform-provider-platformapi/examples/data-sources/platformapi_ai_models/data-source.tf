# Every catalogue row matching the filters (all pages).
data "platformapi_ai_models" "coding" {
  category = "coding"
  gated    = false
  sort     = "param_count_b"
  order    = "desc"
}

output "coding_models" {
  value = [for m in data.platformapi_ai_models.coding.items : m.repo]
}
