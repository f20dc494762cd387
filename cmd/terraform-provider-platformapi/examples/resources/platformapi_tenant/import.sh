# A tenant is imported by its id.
terraform import platformapi_tenant.labs 40
