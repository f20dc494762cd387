import {
  to = platformapi_customer.wayne
  id = "12"
}
