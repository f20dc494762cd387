# A project is imported by its id.
terraform import platformapi_project.store 3
