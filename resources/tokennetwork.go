package resources

import "net/netip"

// ParseAllowedNetwork reads one entry of a token's allowed networks: a
// network in CIDR form, or a bare address meaning that one address (/32 or
// /128). Anything else is 422 validation_failed naming allowed_ips.
func ParseAllowedNetwork(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, nil
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.Prefix{}, Invalid("allowed_ips", CodeValidationFailed,
		"%q is not an address or a network in CIDR form (e.g. 192.0.2.7 or 203.0.113.0/24)", s)
}
