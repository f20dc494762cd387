data "platformapi_customer" "wayne" {
  short_name = "WAYNE"
}

# Create waits until the project is provisioned (a background operation).
resource "platformapi_project" "store" {
  customer_id = data.platformapi_customer.wayne.id # frozen
  short_name  = "STORE"                            # frozen, unique forever
  name        = "Web store"
  kind        = "cluster" # frozen: cluster or vm
  components  = ["app-api", "www"]
  domain      = "store.wayne.example"

  timeouts {
    create = "5m" # default 10m
  }
}
