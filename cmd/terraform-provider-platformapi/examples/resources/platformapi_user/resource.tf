# An invited person. Destroy deactivates (needs allow_destroy).
resource "platformapi_user" "sam" {
  email        = "sam@example.com" # frozen
  display_name = "Sam Doe"
  # Role names of the installation; each must carry only keys the token holds.
  roles = ["operator"]
}
