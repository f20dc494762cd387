import {
  to = platformapi_tenant.labs
  id = "40"
}
