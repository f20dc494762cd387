// Command buildimage builds the platformapi server image without a registry,
// a base image or a container daemon: it builds the static binary and layers
// it, with the host's CA bundle, onto an empty OCI image configured as
// deploy/container/Containerfile says. Run it from .ci/deploycheck:
//
//	go run ./cmd/buildimage -version 1.0.0 -tar /tmp/platformapi.tar   # podman load -i …
//	go run ./cmd/buildimage -layout /tmp/platformapi-oci               # skopeo copy oci:… docker://…
package main

import (
	"flag"
	"fmt"
	"os"

	"platformapi/ci/deploycheck"
)

func main() {
	root := flag.String("root", "../..", "the platformapi repository")
	version := flag.String("version", "dev", "image version: the tag and the version label")
	ca := flag.String("ca", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to put into the image")
	dir := flag.String("layout", "", "write an OCI image layout into this directory")
	tar := flag.String("tar", "", "write a docker/podman-loadable tarball to this file")
	flag.Parse()
	if *dir == "" && *tar == "" {
		fmt.Fprintln(os.Stderr, "buildimage: give -layout DIR and/or -tar FILE")
		os.Exit(2)
	}
	if err := run(*root, *version, *ca, *dir, *tar); err != nil {
		fmt.Fprintln(os.Stderr, "buildimage:", err)
		os.Exit(1)
	}
}

func run(root, version, ca, dir, tar string) error {
	tmp, err := os.MkdirTemp("", "buildimage")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	img, err := deploycheck.BuildServerImage(root, tmp, ca, version)
	if err != nil {
		return err
	}
	ref := "platformapi:" + version
	if dir != "" {
		if err := deploycheck.WriteLayout(dir, ref, img); err != nil {
			return err
		}
	}
	if tar != "" {
		if err := deploycheck.WriteTarball(tar, ref, img); err != nil {
			return err
		}
	}
	d, err := img.Digest()
	fmt.Println(ref, d)
	return err
}
