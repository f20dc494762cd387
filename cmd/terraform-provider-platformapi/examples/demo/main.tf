terraform {
  required_providers {
    platformapi = {
      source  = "registry.terraform.io/platform/platformapi"
      version = "~> 1.0"
    }
  }
}

# base_url and token come from PLATFORMAPI_BASE_URL and PLATFORMAPI_TOKEN.
provider "platformapi" {
  allow_destroy = false # plans that archive, delete, deactivate, retire or revoke fail
}

# The demo world already has ACME, GLOBEX, INITECH, UMBRELLA and HOOLI.
resource "platformapi_customer" "wayne" {
  short_name            = "WAYNE"
  long_name             = "Wayne Enterprises"
  vcs_group             = "wayne"
  primary_contact_email = "lucius@wayne.example"
  primary_contact_name  = "Lucius Fox"
  billing_tier          = "PAYING"
}

resource "platformapi_project" "store" {
  customer_id = platformapi_customer.wayne.id
  short_name  = "STORE"
  name        = "Web store"
  kind        = "cluster"
  components  = ["app-api", "www"]

  timeouts {
    create = "5m"
  }
}

resource "platformapi_prod_lock" "store" {
  project_id = platformapi_project.store.id
  locked     = true
}

resource "platformapi_ai_model" "coder" {
  repo         = "acme-labs/coder-7b"
  gateway_tier = "standard"
  summary      = "Small coding model"
  benchmarks   = jsonencode({ humaneval = 71.3 })
}

resource "platformapi_ai_gateway_key" "ci" {
  name         = "ci-runner"
  tier         = "standard"
  return_value = true
}

# The installation's one brand: creating the resource adopts it. Upper-case
# is fine (the API stores lower-case; no change is planned for it). Asset ids
# name uploads at /api/v1/brand/assets; left out, the built-in ones are used.
# Removing this block only forgets the brand.
resource "platformapi_brand" "this" {
  brand_color = "#0F766E"
}

data "platformapi_whoami" "me" {}

data "platformapi_ai_gateway" "gw" {}

output "gateway_base_url" {
  value = data.platformapi_ai_gateway.gw.base_url
}

output "customer_id" {
  value = platformapi_customer.wayne.id
}
