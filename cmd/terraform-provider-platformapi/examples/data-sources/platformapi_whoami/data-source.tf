# Who the provider's token belongs to, and what it may do.
data "platformapi_whoami" "me" {}

output "caller" {
  value = data.platformapi_whoami.me.principal.name
}

output "token_may_destroy" {
  value = data.platformapi_whoami.me.token.allow_destroy
}
