package app

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// shBlock is one ```sh block of the README.
var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestREADME_ServeDemoOnADatabaseURL_GivesThePepper: a README block that
// runs serve --demo or eval on a database of its own (--database-url or
// DATABASE_URL) also gives the token pepper, since only the private cluster
// makes one and serve --demo refuses to start without it (the eval section's
// "against a running server" command did).
func TestREADME_ServeDemoOnADatabaseURL_GivesThePepper(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range shBlock.FindAllSubmatch(readme, -1) {
		block := string(m[1])
		runs := strings.Contains(block, "serve --demo") || strings.Contains(block, "platformapi eval")
		ownDB := strings.Contains(block, "--database-url") || strings.Contains(block, "DATABASE_URL=")
		pepper := strings.Contains(block, "--token-pepper-file") ||
			strings.Contains(block, "PLATFORMAPI_TOKEN_PEPPER")
		if runs && ownDB && !pepper {
			t.Errorf("this README block runs on its own database without the token pepper:\n%s", block)
		}
	}
}
