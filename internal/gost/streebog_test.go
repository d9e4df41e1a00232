package gost

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// m2 is the second RFC 6986 example message in windows-1251.
const m2Hex = "d1e520e2e5f2f0e82c20d1f2f0e8e1eee6e820e2edf3f6e82c20e2e5fef2fa20f120eceef0ff20f1f2f0e5ebe0ece820ede020f5f0e0e1f0fbff20efebfaeafb20c8e3eef0e5e2fb"

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStreebogVectors(t *testing.T) {
	tests := []struct {
		name    string
		msg     []byte
		want256 string
		want512 string
	}{
		{"empty", nil,
			"3f539a213e97c802cc229d474c6aa32a825a360b2a933a949fd925208d9ce1bb",
			"8e945da209aa869f0455928529bcae4679e9873ab707b55315f56ceb98bef0a7362f715528356ee83cda5f2aac4c6ad2ba3a715c1bcd81cb8e9f90bf4c1c1a8a"},
		{"M1", []byte("012345678901234567890123456789012345678901234567890123456789012"),
			"9d151eefd8590b89daa6ba6cb74af9275dd051026bb149a452fd84e5e57b5500",
			"1b54d01a4af5b9d5cc3d86d68d285462b19abc2475222f35c085122be4ba1ffa00ad30f8767b3a82384c6574f024c311e2a481332b08ef7f41797891c1646f48"},
		{"M2", mustHex(t, m2Hex),
			"9dd2fe4e90409e5da87f53976d7405b0c0cac628fc669a741d50063c557e8f50",
			"1e88e62226bfca6f9994f1f2d51569e0daf8475a3b0fe61a5300eee46d961376035fe83549ada2b8620fcd7c496ce5b33f0cb9dddc2b6460143b03dabac9fb28"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got256 := Streebog256(tc.msg)
			if hex.EncodeToString(got256[:]) != tc.want256 {
				t.Errorf("Streebog-256 = %x, want %s", got256, tc.want256)
			}
			got512 := Streebog512(tc.msg)
			if hex.EncodeToString(got512[:]) != tc.want512 {
				t.Errorf("Streebog-512 = %x, want %s", got512, tc.want512)
			}
		})
	}
}

// TestStreebogIncremental checks that splitting the input across Write calls
// at every offset, and calling Sum mid-stream, gives the one-shot digest.
func TestStreebogIncremental(t *testing.T) {
	msg := make([]byte, 200)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	want := Streebog256(msg)
	for split := 0; split <= len(msg); split += 13 {
		h := NewStreebog256()
		h.Write(msg[:split])
		_ = h.Sum(nil)
		h.Write(msg[split:])
		if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Fatalf("split %d: %x, want %x", split, got, want)
		}
	}
	h := NewStreebog512()
	h.Write(msg)
	h.Reset()
	h.Write(nil)
	if got, want := h.Sum(nil), Streebog512(nil); !bytes.Equal(got, want[:]) {
		t.Fatalf("after Reset: %x, want %x", got, want)
	}
	if NewStreebog256().Size() != 32 || NewStreebog512().Size() != 64 || NewStreebog256().BlockSize() != 64 {
		t.Fatal("wrong Size/BlockSize")
	}
}

func BenchmarkStreebog256(b *testing.B) {
	buf := make([]byte, 64*1024)
	h := NewStreebog256()
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Reset()
		h.Write(buf)
		h.Sum(nil)
	}
}
