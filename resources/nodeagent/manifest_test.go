package nodeagent

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"platformapi/resources"
)

func TestParseManifest_Sha256sumFormats_Entries(t *testing.T) {
	a, b := strings.Repeat("ab", 32), strings.Repeat("0F", 32)
	cases := []struct {
		name, text string
		want       []entry
	}{
		{"text mode", a + "  w.bin\n", []entry{{Path: "w.bin", SHA256: a}}},
		{"binary mode, upper-case digest", b + " *dir/w.bin\n",
			[]entry{{Path: "dir/w.bin", SHA256: strings.ToLower(b)}}},
		{"leading ./ and CRLF", a + "  ./w.bin\r\n", []entry{{Path: "w.bin", SHA256: a}}},
		{"escaped name", `\` + a + `  new\nline\\x` + "\n", []entry{{Path: "new\nline\\x", SHA256: a}}},
		{"blank lines, its own line skipped", "\n" + a + "  SHA256SUMS\n" + b + "  w.bin\n\n",
			[]entry{{Path: "w.bin", SHA256: strings.ToLower(b)}}},
		{"name with spaces", a + "  my model.bin", []entry{{Path: "my model.bin", SHA256: a}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseManifest(strings.NewReader(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseManifest_Malformed_CentralCopyInvalid(t *testing.T) {
	a := strings.Repeat("ab", 32)
	for name, text := range map[string]string{
		"empty":                "",
		"short digest":         a[:63] + "  w.bin\n",
		"not hex":              strings.Repeat("zz", 32) + "  w.bin\n",
		"one space":            a + " w.bin\n",
		"absolute path":        a + "  /etc/passwd\n",
		"climbs":               a + "  ../w.bin\n",
		"climbs inside":        a + "  d/../../w.bin\n",
		"not clean":            a + "  d//w.bin\n",
		"listed twice":         a + "  w.bin\n" + a + "  ./w.bin\n",
		"file and directory":   a + "  d\n" + a + "  d/w.bin\n",
		"the agent's own name": a + "  .platformapi-cache.json\n",
		"only a dot":           a + "  .\n",
		"BSD tag format":       "SHA256 (w.bin) = " + a + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseManifest(strings.NewReader(text))
			if e, ok := resources.AsError(err); !ok || e.Code != resources.CodeCentralCopyInvalid {
				t.Fatalf("err %v", err)
			}
		})
	}
}
