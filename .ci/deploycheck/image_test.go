package deploycheck

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const repoRoot = "../.."

// TestContainerfile_StaticNonRootNoShell checks the image definition: an
// empty base, a numeric non-root user, the binary as exec-form entrypoint,
// serve on 0.0.0.0:8080 and only the binary and the CA bundle copied in.
func TestContainerfile_StaticNonRootNoShell(t *testing.T) {
	spec, err := ParseContainerfile(filepath.Join(repoRoot, Containerfile))
	if err != nil {
		t.Fatal(err)
	}
	want := ImageSpec{Base: "scratch", Entrypoint: []string{"/platformapi"},
		Cmd: []string{"serve", "--addr", "0.0.0.0:8080"}, User: "65532:65532", Ports: []string{"8080/tcp"},
		Labels: map[string]string{"org.opencontainers.image.title": "platformapi",
			"org.opencontainers.image.description": "platformapi management API server",
			"org.opencontainers.image.version":     "${VERSION}"},
		Files: []string{"/etc/ssl/certs/ca-certificates.crt", "/platformapi"}}
	if d := cmp.Diff(want, spec); d != "" {
		t.Fatalf("Containerfile's final stage (-want +got):\n%s", d)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, Containerfile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CGO_ENABLED=0", "-trimpath"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("the build stage does not use %s", s)
		}
	}
}

// TestImage_BuiltWithoutDaemon_ConfigAsContainerfile builds the image by
// layering the static binary and the CA bundle onto an empty image, writes
// it as an OCI layout and a loadable tarball, reads both back and checks
// their config equals the Containerfile's, the layer holds those two files
// only (no shell), and the binary is static and runs.
func TestImage_BuiltWithoutDaemon_ConfigAsContainerfile(t *testing.T) {
	ca := "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(ca); err != nil {
		t.Fatalf("CA bundle: %v (Debian: apt-get install ca-certificates; .ci/run installs it)", err)
	}
	spec, err := ParseContainerfile(filepath.Join(repoRoot, Containerfile))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	img, err := BuildServerImage(repoRoot, work, ca, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	dir, file := filepath.Join(work, "oci"), filepath.Join(work, "image.tar")
	if err := WriteLayout(dir, "platformapi:1.2.3", img); err != nil {
		t.Fatal(err)
	}
	if err := WriteTarball(file, "platformapi:1.2.3", img); err != nil {
		t.Fatal(err)
	}
	fromLayout, err := ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	fromTar, err := tarball.ImageFromPath(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]v1.Image{"oci layout": fromLayout, "tarball": fromTar} {
		t.Run(name, func(t *testing.T) { checkImage(t, got, spec) })
	}
}

func checkImage(t *testing.T, img v1.Image, spec ImageSpec) {
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	for k, v := range spec.Labels {
		labels[k] = strings.ReplaceAll(v, "${VERSION}", "1.2.3")
	}
	want := v1.Config{Entrypoint: spec.Entrypoint, Cmd: spec.Cmd, User: spec.User,
		ExposedPorts: map[string]struct{}{"8080/tcp": {}}, Labels: labels}
	if d := cmp.Diff(want, cf.Config); d != "" {
		t.Errorf("image config (-want +got):\n%s", d)
	}
	if uid, _, _ := strings.Cut(cf.Config.User, ":"); uid == "0" || !isNumber(uid) {
		t.Errorf("user %q: want a numeric non-root uid", cf.Config.User)
	}
	if cf.OS != "linux" || len(cf.RootFS.DiffIDs) != 1 {
		t.Errorf("os %q, %d layers: want linux, 1", cf.OS, len(cf.RootFS.DiffIDs))
	}
	checkLayerEnds(t, img)
	files := layerFiles(t, img)
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if d := cmp.Diff([]string{"etc/ssl/certs/ca-certificates.crt", "platformapi"}, names); d != "" {
		t.Fatalf("regular files in the image (-want +got):\n%s", d)
	}
	checkStaticBinary(t, files["platformapi"])
}

// checkLayerEnds checks the only layer is a whole tar archive: 512-byte
// records ending in the two zero records (Go's tar reader forgives a
// missing end, GNU tar and container runtimes do not).
func checkLayerEnds(t *testing.T, img v1.Image) {
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if len(b)%512 != 0 || len(b) < 1024 || !bytes.Equal(b[len(b)-1024:], make([]byte, 1024)) {
		t.Errorf("the layer (%d bytes) does not end in the tar end-of-archive records", len(b))
	}
}

// layerFiles reads the image's flattened file system: every regular file
// with its content; a link or device fails (there is no shell to link to).
func layerFiles(t *testing.T, img v1.Image) map[string][]byte {
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
		case tar.TypeReg:
			if h.Uid != 0 || h.Mode&0o022 != 0 {
				t.Errorf("%s: uid %d mode %o: want root-owned, not writable by others", h.Name, h.Uid, h.Mode)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[h.Name] = b
		default:
			t.Errorf("%s: tar type %q in the image", h.Name, h.Typeflag)
		}
	}
}

// checkStaticBinary checks the binary has no program interpreter and no
// shared libraries, and that it runs: `platformapi version` prints JSON.
func checkStaticBinary(t *testing.T, bin []byte) {
	path := filepath.Join(t.TempDir(), "platformapi")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a program interpreter: not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	out, err := exec.Command(path, "version").Output()
	if err != nil {
		t.Fatalf("platformapi version: %v", err)
	}
	var info struct {
		API string `json:"api_version"`
	}
	if err := json.Unmarshal(out, &info); err != nil || info.API == "" {
		t.Errorf("platformapi version printed %q (%v)", out, err)
	}
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
