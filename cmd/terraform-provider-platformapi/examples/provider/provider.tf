terraform {
  required_providers {
    platformapi = {
      source  = "registry.terraform.io/platform/platformapi"
      version = "~> 1.0"
    }
  }
}

# base_url and token may be left out: they default to $PLATFORMAPI_BASE_URL
# and $PLATFORMAPI_TOKEN. Keep the token out of the configuration.
provider "platformapi" {
  base_url = "https://portal.example.internal"

  # The default: every plan that archives, deletes, deactivates, retires or
  # revokes fails at plan time. Set true (with a token that has Allow
  # destroy) only for a run meant to destroy.
  allow_destroy = false
}
