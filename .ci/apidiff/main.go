// Command apidiff is CI's breaking-change gate of the /api/v1 contract: it
// compares a committed baseline OpenAPI document with the current one using
// oasdiff's backward-compatibility checker and exits 1 when the checker finds
// a breaking change (level ERR). Additions, warnings and documentation-only
// changes pass.
//
// Usage: go run . BASELINE.json CURRENT.json
//
// It is a module of its own because oasdiff needs a newer kin-openapi than
// the one oapi-codegen pins in the main module.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: apidiff BASELINE.json CURRENT.json")
		os.Exit(2)
	}
	base, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidiff: reading the baseline:", err)
		os.Exit(2)
	}
	current, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidiff: reading the current document:", err)
		os.Exit(2)
	}
	found, err := Breaking(base, current)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidiff:", err)
		os.Exit(2)
	}
	for _, line := range found {
		fmt.Println(line)
	}
	if len(found) > 0 {
		fmt.Printf("apidiff: %d breaking change(s) of /api/v1 against %s\n", len(found), os.Args[1])
		os.Exit(1)
	}
	fmt.Printf("apidiff: no breaking change of /api/v1 against %s\n", os.Args[1])
}
