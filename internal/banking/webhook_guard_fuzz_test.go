package banking

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// FuzzWebhookURLAddress holds the set-time webhook check to net/netip's
// judgement (PrivateWebhookAddr) of the address a URL's host names,
// whichever way the host writes it: an IPv4 address as one to four
// decimal, octal or hexadecimal numbers (the forms browsers and inet_aton
// read and Go's parser refuses), with or without a trailing dot; an IPv6
// address compressed, expanded, in upper case or with an IPv4 tail
// (::ffff:a.b.c.d); with or without a port. A URL with userinfo is
// refused whatever its host.
func FuzzWebhookURLAddress(f *testing.F) {
	f.Add(uint32(0x7f000001), []byte(nil), uint16(0), uint16(0), false)
	f.Add(uint32(0x5db8d822), []byte(nil), uint16(0b1_10_01_00_11), uint16(8443), false)
	f.Add(uint32(0xa9fea9fe), []byte(nil), uint16(0b11_11_11_11_00), uint16(0), true)
	f.Add(uint32(0), []byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x7f\x00\x00\x01"), uint16(1<<12|1<<13), uint16(80), false)
	f.Add(uint32(0), []byte("\x20\x02\x7f\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"), uint16(1<<12), uint16(0), false)
	f.Add(uint32(0), []byte("\x26\x06\x47\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x11\x11"), uint16(1<<12|1<<14), uint16(443), false)
	f.Fuzz(func(t *testing.T, v4 uint32, v6 []byte, form, port uint16, userinfo bool) {
		var a netip.Addr
		var host string
		if form&(1<<12) != 0 && len(v6) >= 16 {
			a = netip.AddrFrom16([16]byte(v6[:16]))
			switch {
			case form&(1<<13) != 0:
				b := a.As16()
				host = "::ffff:" + netip.AddrFrom4([4]byte(b[12:])).String()
				a = netip.AddrFrom16([16]byte(append([]byte("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff"), b[12:]...)))
			case form&(1<<14) != 0:
				host = a.StringExpanded()
			default:
				host = a.String()
			}
			if form&(1<<15) != 0 {
				host = strings.ToUpper(host)
			}
			host = "[" + host + "]"
		} else {
			a = netip.AddrFrom4([4]byte{byte(v4 >> 24), byte(v4 >> 16), byte(v4 >> 8), byte(v4)})
			host = ipv4Form(v4, form)
		}
		raw := "https://"
		if userinfo {
			raw += "user:pass@"
		}
		raw += host
		if port != 0 {
			raw += ":" + strconv.Itoa(int(port))
		}
		raw += "/hook"
		err := WebhookURLPolicy{}.Check(context.Background(), raw)
		var e *Error
		switch {
		case userinfo:
			if !errors.As(err, &e) || !strings.Contains(strings.Join(e.Checks, " "), "учётные") {
				t.Fatalf("%s: accepted with userinfo: %v", raw, err)
			}
		case PrivateWebhookAddr(a):
			if !errors.As(err, &e) || !strings.Contains(strings.Join(e.Checks, " "), "внутреннюю") {
				t.Fatalf("%s names %s, private, and is not refused as such: %v", raw, a, err)
			}
		case err != nil:
			t.Fatalf("%s names %s, public, and is refused: %v", raw, a, err)
		}
	})
}

// ipv4Form writes v as form chooses: its low two bits the number of
// parts less one, the next eight the base of each part (decimal, octal,
// 0x, 0X), bit 10 a trailing dot and bit 11 a zero-padded octal.
func ipv4Form(v uint32, form uint16) string {
	n := int(form&3) + 1
	vals := make([]uint64, n)
	for i := 0; i < n-1; i++ {
		vals[i] = uint64(v>>(8*(3-i))) & 0xff
	}
	vals[n-1] = uint64(v) & (1<<(8*(5-n)) - 1)
	parts := make([]string, n)
	for i, x := range vals {
		switch (form >> (2 + 2*i)) & 3 {
		case 0:
			parts[i] = strconv.FormatUint(x, 10)
		case 1:
			parts[i] = "0" + strconv.FormatUint(x, 8)
			if form&(1<<11) != 0 {
				parts[i] = "0" + parts[i]
			}
		case 2:
			parts[i] = "0x" + strconv.FormatUint(x, 16)
		default:
			parts[i] = "0X" + strings.ToUpper(strconv.FormatUint(x, 16))
		}
	}
	s := strings.Join(parts, ".")
	if form&(1<<10) != 0 {
		s += "."
	}
	return s
}
