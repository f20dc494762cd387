data "platformapi_meta" "this" {}

output "api_version" {
  value = data.platformapi_meta.this.api_version
}
