# By short name (or by id: id = "12"); archived customers are found too.
data "platformapi_customer" "acme" {
  short_name = "ACME"
}

output "acme_primary_tenant" {
  value = data.platformapi_customer.acme.vcs_group
}
