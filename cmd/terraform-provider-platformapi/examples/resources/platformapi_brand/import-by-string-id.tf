import {
  to = platformapi_brand.this
  id = "brand"
}
