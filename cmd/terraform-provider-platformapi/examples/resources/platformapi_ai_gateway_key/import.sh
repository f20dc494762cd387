# A gateway key is imported by its id. The value is never read back: set
# return_value = true afterwards to rotate the key and keep the new value.
terraform import platformapi_ai_gateway_key.ci 5
