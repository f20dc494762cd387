# A PROD data lock is imported by its project's id.
terraform import platformapi_prod_lock.store 3
