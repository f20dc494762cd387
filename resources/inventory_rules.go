package resources

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// inventoryFaults collects the problems of a file, each naming its entry.
type inventoryFaults struct {
	field string // the first offending member, e.g. "nodes[2].vmid"
	list  []string
}

func (fs *inventoryFaults) add(i int, n *InventoryNode, member, format string, args ...any) {
	if fs.field == "" {
		fs.field = fmt.Sprintf("nodes[%d].%s", i, member)
	}
	entry := fmt.Sprintf("nodes[%d]", i)
	if n.Hostname != "" {
		entry += " (" + n.Hostname + ")"
	}
	fs.list = append(fs.list, entry+": "+fmt.Sprintf(format, args...))
}

func (fs *inventoryFaults) err() error {
	if len(fs.list) == 0 {
		return nil
	}
	shown := fs.list[:min(len(fs.list), maxInventoryFaults)]
	detail := strings.Join(shown, "; ")
	if more := len(fs.list) - len(shown); more > 0 {
		detail += fmt.Sprintf("; and %d more", more)
	}
	return inventoryFault(fs.field, "%d problem(s): %s", len(fs.list), detail)
}

// Validate normalises the entries (trimmed text, "" as absent, canonical
// addresses) and checks every rule: hostname pattern, unique hostnames,
// parent_host and vmid only on virtual nodes, field limits. The error lists
// every problem (up to 20), each naming its entry.
func (f *InventoryFile) Validate() error {
	var fs inventoryFaults
	seen := map[string]int{}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		n.normalise()
		if first, dup := seen[n.Hostname]; dup && n.Hostname != "" {
			fs.add(i, n, "hostname", "hostname repeats nodes[%d]", first)
		} else {
			seen[n.Hostname] = i
		}
		n.check(&fs, i)
	}
	return fs.err()
}

func (n *InventoryNode) normalise() {
	n.Hostname = strings.TrimSpace(n.Hostname)
	for _, p := range []**string{&n.GPUClass, &n.MgmtIP, &n.Site, &n.SpecsSummary, &n.ParentHost, &n.AgentURL} {
		if *p != nil {
			if v := strings.TrimSpace(**p); v == "" {
				*p = nil
			} else {
				*p = &v
			}
		}
	}
	for i, s := range n.Services {
		n.Services[i] = strings.TrimSpace(s)
	}
	if n.Services == nil {
		n.Services = []string{}
	}
}

func (n *InventoryNode) check(fs *inventoryFaults, i int) {
	if !ValidHostname(n.Hostname) {
		fs.add(i, n, "hostname", "hostname %q must match %s (lower-case letters, digits, '.', '-')", n.Hostname, HostnamePattern)
	}
	for member, v := range map[string]*string{"gpu_class": n.GPUClass, "site": n.Site} {
		if v != nil && len(*v) > maxInventoryLabel {
			fs.add(i, n, member, "%s is longer than %d characters", member, maxInventoryLabel)
		}
	}
	if n.SpecsSummary != nil && len(*n.SpecsSummary) > maxInventoryText {
		fs.add(i, n, "specs_summary", "specs_summary is longer than %d characters", maxInventoryText)
	}
	if n.MgmtIP != nil {
		if a, err := netip.ParseAddr(*n.MgmtIP); err != nil {
			fs.add(i, n, "mgmt_ip", "mgmt_ip %q is not an IP address", *n.MgmtIP)
		} else {
			canonical := a.String()
			n.MgmtIP = &canonical
		}
	}
	n.checkVirtual(fs, i)
	n.checkServices(fs, i)
	n.checkAgentURL(fs, i)
}

// checkAgentURL accepts an http or https URL with a host, an optional port
// and an optional path, and nothing else (no user, query or fragment); a
// trailing '/' is dropped.
func (n *InventoryNode) checkAgentURL(fs *inventoryFaults, i int) {
	if n.AgentURL == nil {
		return
	}
	raw := *n.AgentURL
	u, err := url.Parse(raw)
	switch {
	case len(raw) > maxAgentURL:
		fs.add(i, n, "agent_url", "agent_url is longer than %d characters", maxAgentURL)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "":
		fs.add(i, n, "agent_url", "agent_url %q must be an http or https URL with a host, e.g. https://10.0.0.5:9441", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(raw, "?") || strings.Contains(raw, "#"):
		fs.add(i, n, "agent_url", "agent_url %q must not carry a user, a query or a fragment", raw)
	default:
		clean := strings.TrimSuffix(u.String(), "/")
		n.AgentURL = &clean
	}
}

func (n *InventoryNode) checkVirtual(fs *inventoryFaults, i int) {
	if !n.IsVirtual && (n.ParentHost != nil || n.VMID != nil) {
		fs.add(i, n, "is_virtual", "parent_host and vmid are only for virtual nodes (is_virtual: true)")
	}
	if p := n.ParentHost; p != nil && (!ValidHostname(*p) || *p == n.Hostname) {
		fs.add(i, n, "parent_host", "parent_host %q must be another host's name matching %s", *p, HostnamePattern)
	}
	if n.VMID != nil && (*n.VMID < 1 || *n.VMID > maxVMID) {
		fs.add(i, n, "vmid", "vmid %d is outside 1 to %d", *n.VMID, maxVMID)
	}
}

func (n *InventoryNode) checkServices(fs *inventoryFaults, i int) {
	seen := map[string]bool{}
	for _, s := range n.Services {
		switch {
		case s == "" || len(s) > maxInventoryLabel:
			fs.add(i, n, "services", "each service must be 1 to %d characters", maxInventoryLabel)
		case seen[s]:
			fs.add(i, n, "services", "service %q is listed twice", s)
		}
		seen[s] = true
	}
}
