package forwarded

import (
	"net/netip"
	"strings"
)

// hop is what one element of a Forwarded header (RFC 7239) says
// about the node it was written for: its address when usable. An element
// is unusable when its for= names no address (unknown, an obfuscated
// identifier such as _hidden, a host name), when it has no for= or more
// than one, or when it does not parse; the walk over the hops stops at
// such an element, since whatever lies left of it cannot be tied to the
// proxy that reported it.
type hop struct {
	addr netip.Addr
	ok   bool
}

// appendHops appends the hops of one Forwarded header line to dst,
// left to right as the elements stand. Empty elements are skipped, as HTTP
// lists allow them. Commas and semicolons inside quoted strings belong to
// their value, so an element cannot be split by a value someone chose; an
// unterminated quoted string makes the rest of the line one unusable
// element.
func appendHops(dst []hop, line string) []hop {
	for line != "" {
		end, closed := listItemEnd(line, ',')
		elem := strings.TrimSpace(line[:end])
		if end < len(line) {
			line = line[end+1:]
		} else {
			line = ""
		}
		if elem == "" {
			continue
		}
		if !closed {
			dst = append(dst, hop{})
			break
		}
		dst = append(dst, parseForwardedElement(elem))
	}
	return dst
}

// listItemEnd is the index in s of the first sep outside a quoted string,
// or len(s), and whether every quoted string before it was closed.
func listItemEnd(s string, sep byte) (int, bool) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			return i, true
		}
	}
	return len(s), !quoted
}

// parseForwardedElement reads one forwarded-element, pairs separated by
// semicolons (for=…;proto=…;by=…), and returns its for= node. Parameter
// names are case-insensitive (RFC 7239 §4); a parameter given twice makes
// the element malformed (§4: it MUST NOT occur more than once).
func parseForwardedElement(elem string) hop {
	var node string
	var seen []string
	found := false
	for elem != "" {
		end, _ := listItemEnd(elem, ';')
		pair := strings.TrimSpace(elem[:end])
		if end < len(elem) {
			elem = elem[end+1:]
		} else {
			elem = ""
		}
		if pair == "" {
			continue
		}
		name, value, ok := strings.Cut(pair, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || !isToken(name) {
			return hop{}
		}
		for _, s := range seen {
			if s == name {
				return hop{}
			}
		}
		seen = append(seen, name)
		v, ok := forwardedValue(strings.TrimSpace(value))
		if !ok {
			return hop{}
		}
		if name == "for" {
			node, found = v, true
		}
	}
	if !found {
		return hop{}
	}
	a, ok := parseForwardedNode(node)
	return hop{addr: a, ok: ok}
}

// forwardedValue is a parameter's value: a quoted string without its
// quotes and escapes, or a bare one. RFC 7239 wants a token there, whose
// characters exclude ':' and '[', so an address with a port or an IPv6
// address must be quoted; proxies that leave them bare are still read,
// since the value is the proxy's and whom to believe is the trust walk's
// decision, not the quoting's.
func forwardedValue(v string) (string, bool) {
	if v == "" {
		return "", false
	}
	if v[0] != '"' {
		for i := 0; i < len(v); i++ {
			if c := v[i]; !isTokenChar(c) && c != ':' && c != '[' && c != ']' {
				return "", false
			}
		}
		return v, true
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			if i+1 >= len(v) {
				return "", false
			}
			i++
			b.WriteByte(v[i])
		case '"':
			// The closing quote must end the value.
			return b.String(), i == len(v)-1
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

// parseForwardedNode reads a node (RFC 7239 §6): an IPv4 address or a
// bracketed IPv6 address, each with an optional port, decimal or
// obfuscated (_abc). unknown and obfuscated identifiers (_hidden) name no
// address and are not usable; neither is a host name, which §6 does not
// allow. A bare IPv6 address without brackets is read when it parses
// whole, as some proxies write it so.
func parseForwardedNode(v string) (netip.Addr, bool) {
	host, port := v, ""
	bracketed := false
	if strings.HasPrefix(v, "[") {
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return netip.Addr{}, false
		}
		host, bracketed = v[1:end], true
		if rest := v[end+1:]; rest != "" {
			if rest[0] != ':' {
				return netip.Addr{}, false
			}
			port = rest[1:]
			if !validNodePort(port) {
				return netip.Addr{}, false
			}
		}
	} else if strings.Count(v, ":") == 1 {
		host, port, _ = strings.Cut(v, ":")
		if !validNodePort(port) {
			return netip.Addr{}, false
		}
	}
	a, err := netip.ParseAddr(host)
	if err != nil || (bracketed && !a.Is6()) || (port != "" && !bracketed && !a.Is4()) {
		return netip.Addr{}, false
	}
	return a.WithZone(""), true
}

// validNodePort is RFC 7239's node-port: 1 to 5 digits (at most 65535),
// or an obfuscated port, "_" followed by letters, digits, ".", "_", "-".
func validNodePort(p string) bool {
	if p == "" {
		return false
	}
	if p[0] == '_' {
		if len(p) == 1 {
			return false
		}
		for i := 1; i < len(p); i++ {
			if c := p[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
				return false
			}
		}
		return true
	}
	if len(p) > 5 {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		n = n*10 + int(p[i]-'0')
	}
	return n <= 65535
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isTokenChar is RFC 9110's tchar.
func isTokenChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}
