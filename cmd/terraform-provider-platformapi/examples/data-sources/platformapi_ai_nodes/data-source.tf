# The AI nodes with their live monitoring (null while monitoring is unreachable).
data "platformapi_ai_nodes" "serving" {
  status = "serving"
}

output "serving_nodes" {
  value = [for n in data.platformapi_ai_nodes.serving.items : n.hostname]
}
