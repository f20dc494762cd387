import {
  to = platformapi_user.sam
  id = "7"
}
