package deploycheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// ImageSpec is what the final stage of a Containerfile says about the image:
// the instructions an image built without a daemon must reproduce.
type ImageSpec struct {
	Base       string            // FROM of the final stage
	Entrypoint []string          // ENTRYPOINT, exec form
	Cmd        []string          // CMD, exec form
	User       string            // USER
	Ports      []string          // EXPOSE, each with its protocol (8080/tcp)
	Labels     map[string]string // LABEL, ${ARG} references left as written
	Files      []string          // COPY destinations, absolute
}

var labelPair = regexp.MustCompile(`([A-Za-z0-9._-]+)="([^"]*)"`)

// ParseContainerfile reads the final stage of the Containerfile at path.
// Only the exec (JSON) form of ENTRYPOINT and CMD is accepted: the shell
// form needs a shell the image does not have.
func ParseContainerfile(path string) (ImageSpec, error) {
	lines, err := instructions(path)
	if err != nil {
		return ImageSpec{}, err
	}
	var spec ImageSpec
	for _, line := range lines {
		op, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		switch strings.ToUpper(op) {
		case "FROM":
			spec = ImageSpec{Base: strings.Fields(arg)[0], Labels: map[string]string{}}
		case "ENTRYPOINT":
			err = json.Unmarshal([]byte(arg), &spec.Entrypoint)
		case "CMD":
			err = json.Unmarshal([]byte(arg), &spec.Cmd)
		case "USER":
			spec.User = arg
		case "EXPOSE":
			for _, p := range strings.Fields(arg) {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				spec.Ports = append(spec.Ports, p)
			}
		case "LABEL":
			for _, m := range labelPair.FindAllStringSubmatch(arg, -1) {
				spec.Labels[m[1]] = m[2]
			}
		case "COPY":
			f := strings.Fields(arg)
			spec.Files = append(spec.Files, f[len(f)-1])
		}
		if err != nil {
			return spec, fmt.Errorf("%s: %s: %w (exec form required)", path, line, err)
		}
	}
	return spec, nil
}

// instructions reads the Containerfile's instructions, continuation lines
// joined, comments and blank lines left out.
func instructions(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read containerfile: %w", err)
	}
	defer f.Close()
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if s, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out, sc.Err()
}
