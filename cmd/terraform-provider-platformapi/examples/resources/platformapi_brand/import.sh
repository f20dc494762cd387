# There is one brand per installation: its import id is always "brand".
terraform import platformapi_brand.this brand
