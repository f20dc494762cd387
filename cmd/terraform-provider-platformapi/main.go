// Command terraform-provider-platformapi is the Terraform provider of the
// platform's management API (protocol 6). See provider for what it manages.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"platformapi/cmd/terraform-provider-platformapi/provider"
)

// version is the provider's own semantic version (from 1.0.0, independent
// of the API's); a release build may set it with -ldflags "-X main.version=…".
var version = "1.0.0"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version),
		providerserver.ServeOpts{Address: provider.Address, Debug: *debug, ProtocolVersion: 6})
	if err != nil {
		log.Fatal(err)
	}
}
