// Command clientgen writes the provider's API client: it builds the
// server's own OpenAPI document in-process and runs oapi-codegen (the
// version pinned in go.mod) on it. Run through go generate:
//
//	go generate ./cmd/terraform-provider-platformapi/...
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "client.gen.go", "file to write the generated client to")
	spec := flag.String("spec", "", "also write the OpenAPI 3.0 document used to this file")
	flag.Parse()
	if err := run(*out, *spec); err != nil {
		fmt.Fprintln(os.Stderr, "clientgen:", err)
		os.Exit(1)
	}
}

func run(out, spec string) error {
	doc, err := Document()
	if err != nil {
		return err
	}
	if spec != "" {
		if err := os.WriteFile(spec, doc, 0o644); err != nil {
			return err
		}
	}
	code, err := Generate(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(out, code, 0o644)
}
