import {
  to = platformapi_project.store
  id = "3"
}
