package deploycheck

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one file of the image's only layer.
type File struct {
	Path string // absolute path in the image
	Mode int64  // permission bits
	Data []byte
}

// BuildBinary builds the static platformapi binary from the repository at
// root into out, as the Containerfile's build stage does.
func BuildBinary(root, out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/platformapi")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, b)
	}
	return nil
}

// BuildImage layers files onto an empty OCI image with the entrypoint,
// command, user, ports and labels of spec (${VERSION} in a label becomes
// version). No base image, registry or daemon is involved.
func BuildImage(files []File, spec ImageSpec, version string) (v1.Image, error) {
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		b, err := layerTar(files)
		return io.NopCloser(bytes.NewReader(b)), err
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config = v1.Config{Entrypoint: spec.Entrypoint, Cmd: spec.Cmd, User: spec.User,
		ExposedPorts: map[string]struct{}{}, Labels: map[string]string{}}
	for _, p := range spec.Ports {
		cf.Config.ExposedPorts[p] = struct{}{}
	}
	for k, v := range spec.Labels {
		cf.Config.Labels[k] = strings.ReplaceAll(v, "${VERSION}", version)
	}
	return mutate.ConfigFile(img, cf)
}

// layerTar is the layer's tar: the files' parent directories, then the
// files, owned by root, at a fixed time (the same files give the same digest).
func layerTar(files []File) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(strings.TrimPrefix(f.Path, "/")); d != "."; d = path.Dir(d) {
			dirs[d+"/"] = true
		}
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(f.Path, "/"), Mode: f.Mode,
			Size: int64(len(f.Data)), ModTime: epoch}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil { // the last file's padding and the end-of-archive blocks
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteLayout writes img as an OCI image layout in dir, tagged ref.
func WriteLayout(dir, ref string, img v1.Image) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("oci layout %s: %w", dir, err)
	}
	ann := map[string]string{"org.opencontainers.image.ref.name": ref}
	if err := p.AppendImage(img, layout.WithAnnotations(ann)); err != nil {
		return fmt.Errorf("oci layout %s: %w", dir, err)
	}
	return nil
}

// WriteTarball writes img as a tarball `podman load` and `docker load` read.
func WriteTarball(file, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %s: %w", ref, err)
	}
	if err := tarball.WriteToFile(file, tag, img); err != nil {
		return fmt.Errorf("image tarball %s: %w", file, err)
	}
	return nil
}

// ReadLayout reads back the only image of the OCI layout in dir.
func ReadLayout(dir string) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("read oci layout %s: %w", dir, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read oci layout %s: %w", dir, err)
	}
	if len(im.Manifests) != 1 {
		return nil, fmt.Errorf("oci layout %s: %d images, want 1", dir, len(im.Manifests))
	}
	return idx.Image(im.Manifests[0].Digest)
}

// Containerfile is the image definition, relative to the repository root.
const Containerfile = "deploy/container/Containerfile"

// BuildServerImage builds the binary of the repository at root into work
// and the server image from it and the CA bundle at ca, configured from
// the repository's Containerfile.
func BuildServerImage(root, work, ca, version string) (v1.Image, error) {
	spec, err := ParseContainerfile(path.Join(root, Containerfile))
	if err != nil {
		return nil, err
	}
	bin := path.Join(work, "platformapi")
	if err := BuildBinary(root, bin); err != nil {
		return nil, err
	}
	files := []File{{Path: "/etc/ssl/certs/ca-certificates.crt", Mode: 0o644}, {Path: "/platformapi", Mode: 0o755}}
	for i, src := range []string{ca, bin} {
		if files[i].Data, err = os.ReadFile(src); err != nil {
			return nil, fmt.Errorf("image file: %w", err)
		}
	}
	return BuildImage(files, spec, version)
}
