data "platformapi_customer" "wayne" {
  short_name = "WAYNE"
}

resource "platformapi_project" "store" {
  customer_id = data.platformapi_customer.wayne.id
  short_name  = "STORE"
  name        = "Web store"
  kind        = "cluster"
  components  = ["app-api", "www"]
}

# While locked, data copies into the project's PROD are refused. To release
# it, set locked = false and confirm_unlock = "STORE" (the short name).
# Removing this block leaves the lock as it is.
resource "platformapi_prod_lock" "store" {
  project_id = platformapi_project.store.id
  locked     = true
}
