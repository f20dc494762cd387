// Package deploycheck checks the deployment artefacts under deploy/ offline:
// the Helm chart is linted and rendered with Helm's own Go module and every
// rendered manifest is decoded strictly into the Kubernetes API types; the
// container image is built without a registry or daemon by layering the
// static binary onto an empty image, and its config is compared with
// deploy/container/Containerfile.
package deploycheck
