# A catalogue row is imported by its id.
terraform import platformapi_ai_model.coder 21
