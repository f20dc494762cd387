resource "platformapi_customer" "wayne" {
  short_name            = "WAYNE"
  long_name             = "Wayne Enterprises"
  vcs_group             = "wayne"
  primary_contact_email = "lucius@wayne.example"
  primary_contact_name  = "Lucius Fox"
}

# A second tenant of the customer (the first, "wayne", comes with it).
resource "platformapi_tenant" "labs" {
  customer_id = platformapi_customer.wayne.id
  slug        = "wayne-labs" # a change replaces the tenant
  name        = "Wayne Labs"
}
