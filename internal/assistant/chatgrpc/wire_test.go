package chatgrpc

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "partnerapi/internal/assistant/gigachatpb"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// field appends one length-delimited or varint field by its number from the
// reference (assistant-grpc.md §3), independently of the generated code.
func lenField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func varField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func fixed32Field(b []byte, num protowire.Number, v uint32) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

// TestWireNumbers builds messages by hand with the provider's field numbers
// and checks the generated code reads them, and that our encoding of a
// response matches a golden file built the same way. A renumbered field
// fails here.
func TestWireNumbers(t *testing.T) {
	// ChatRequest{options{temperature 0.5 (1), max_tokens 7 (4), flags "x" (7),
	// function_call{mode forced (1), name "f" (2)} (8), an old client's
	// max_alternatives (3)}, model (2), messages{role (1), content (2),
	// function_name (6), attachments (11)} (3)}
	var fc []byte
	fc = varField(fc, 1, 3)
	fc = lenField(fc, 2, []byte("f"))
	var opts []byte
	opts = fixed32Field(opts, 1, 0x3f000000)
	opts = varField(opts, 3, 2) // retired max_alternatives: skipped, not refused
	opts = varField(opts, 4, 7)
	opts = lenField(opts, 7, []byte("x"))
	opts = lenField(opts, 8, fc)
	var msg []byte
	msg = lenField(msg, 1, []byte("user"))
	msg = lenField(msg, 2, []byte("hi"))
	msg = lenField(msg, 6, []byte("fn"))
	msg = lenField(msg, 11, []byte("file-1"))
	var req []byte
	req = lenField(req, 1, opts)
	req = lenField(req, 2, []byte("m"))
	req = lenField(req, 3, msg)

	var got pb.ChatRequest
	if err := proto.Unmarshal(req, &got); err != nil {
		t.Fatal(err)
	}
	o := got.Options
	if o.GetTemperature() != 0.5 || o.GetMaxTokens() != 7 || len(o.Flags) != 1 || o.FunctionCall.GetMode() != pb.FunctionCallPolicy_forced ||
		o.FunctionCall.GetName() != "f" || got.Model != "m" || got.Messages[0].GetFunctionName() != "fn" || got.Messages[0].Attachments[0] != "file-1" {
		t.Fatalf("decoded %v", &got)
	}

	// ChatResponse{alternatives{message{role, content} (1), finish_reason (2),
	// index (3)} (1), usage{1, 2, 3} (2), model_info{name, version} (3),
	// timestamp (4)}
	var m []byte
	m = lenField(m, 1, []byte("assistant"))
	m = lenField(m, 2, []byte("Hello"))
	var alt []byte
	alt = lenField(alt, 1, m)
	alt = lenField(alt, 2, []byte("stop"))
	var u []byte
	u = varField(u, 1, 5)
	u = varField(u, 2, 2)
	u = varField(u, 3, 7)
	var mi []byte
	mi = lenField(mi, 1, []byte("stories260K"))
	mi = lenField(mi, 2, []byte("1.0"))
	var want []byte
	want = lenField(want, 1, alt)
	want = lenField(want, 2, u)
	want = lenField(want, 3, mi)
	want = varField(want, 4, 1700000000)

	resp := &pb.ChatResponse{
		Alternatives: []*pb.Alternative{{Message: &pb.Message{Role: "assistant", Content: "Hello"}, FinishReason: "stop"}},
		Usage:        &pb.Usage{PromptTokens: 5, CompletionTokens: 2, TotalTokens: 7},
		ModelInfo:    &pb.ModelInfo{Name: "stories260K", Version: "1.0"},
		Timestamp:    1700000000,
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(b) != hex.EncodeToString(want) {
		t.Fatalf("ChatResponse encodes as\n%x\nwant\n%x", b, want)
	}
	golden := filepath.Join("testdata", "chat_response.hex")
	if *update {
		os.WriteFile(golden, []byte(hex.EncodeToString(want)+"\n"), 0o644)
	}
	g, err := os.ReadFile(golden)
	if err != nil || strings.TrimSpace(string(g)) != hex.EncodeToString(want) {
		t.Fatalf("golden %s: %v (run with -update)", golden, err)
	}
}

// FuzzDecodeChat feeds arbitrary wire bytes through the proto decoder and
// the domain conversion: neither may panic, and a converted request keeps
// every message.
func FuzzDecodeChat(f *testing.F) {
	seed, _ := proto.Marshal(&pb.ChatRequest{Model: "m", Options: &pb.ChatOptions{Temperature: proto.Float32(0.3),
		Functions: []*pb.Function{{Name: "f", Parameters: `{"type":"object"}`}}},
		Messages: []*pb.Message{{Role: "assistant", FunctionCall: &pb.FunctionCall{Name: "f", Arguments: `{"a":1}`}}}})
	f.Add(seed)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var req pb.ChatRequest
		if proto.Unmarshal(b, &req) != nil {
			return
		}
		out, err := decodeChat(&req)
		if err == nil && len(out.Messages) != len(req.Messages) {
			t.Fatalf("%d messages became %d", len(req.Messages), len(out.Messages))
		}
	})
}

func TestFloatShortest(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want float64
	}{{0.87, 0.87}, {0, 0}, {1, 1}, {0.47, 0.47}, {2.5, 2.5}} {
		if got := *float(&c.in); got != c.want {
			t.Errorf("float(%v) = %v", c.in, got)
		}
	}
	if float(nil) != nil {
		t.Error("float(nil) != nil")
	}
}
