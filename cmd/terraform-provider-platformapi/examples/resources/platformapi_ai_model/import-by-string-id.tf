import {
  to = platformapi_ai_model.coder
  id = "21"
}
