#!/usr/bin/env bash
# Vendors Stoplight Elements (the docs page's renderer) at the version given,
# from the npm registry, and prints the integrity hashes to put in
# api/docs.go (elementsVersion, elementsJSIntegrity, elementsCSSIntegrity).
# Usage: api/docsui/update.sh 9.0.25
set -euo pipefail
version=${1:?usage: $0 VERSION}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@stoplight/elements@$version" >/dev/null && tar xzf ./*.tgz)
for f in web-components.min.js styles.min.css LICENSE web-components.min.js.LICENSE.txt; do
  cp "$tmp/package/$f" "$here/elements/$f"
done
for f in web-components.min.js styles.min.css; do
  echo "$f sha384-$(openssl dgst -sha384 -binary "$here/elements/$f" | openssl base64 -A)"
done
