resource "platformapi_customer" "wayne" {
  short_name            = "WAYNE" # frozen
  long_name             = "Wayne Enterprises"
  vcs_group             = "wayne" # frozen; also the primary tenant's slug
  primary_contact_email = "lucius@wayne.example"
  primary_contact_name  = "Lucius Fox"
  billing_tier          = "PAYING"
  notes                 = "Managed by Terraform."
}
