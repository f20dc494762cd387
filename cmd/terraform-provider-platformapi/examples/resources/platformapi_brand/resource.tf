# The installation's one brand: creating the resource adopts it. Asset ids
# name uploads at /api/v1/brand/assets; left out, the built-in ones are used.
# Removing this block only forgets the brand.
resource "platformapi_brand" "this" {
  brand_color = "#0F766E" # stored lower-case; no change is planned for the case
}
