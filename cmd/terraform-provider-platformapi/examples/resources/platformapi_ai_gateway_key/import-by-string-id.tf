import {
  to = platformapi_ai_gateway_key.ci
  id = "5"
}
