# A user is imported by its id.
terraform import platformapi_user.sam 7
