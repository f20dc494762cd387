import {
  to = platformapi_prod_lock.store
  id = "3" # the project id
}
