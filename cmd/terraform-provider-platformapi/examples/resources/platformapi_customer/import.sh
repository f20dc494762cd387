# A customer is imported by its id (a decimal string).
terraform import platformapi_customer.wayne 12
