package chatgrpc_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"partnerapi/internal/assistant"
	"partnerapi/internal/assistant/chatgrpc"
	pb "partnerapi/internal/assistant/gigachatpb"
)

// toolEngine is a text-only engine, as the local one is: shown functions, it
// calls the first of them with a Qwen-style <tool_call> block in two pieces,
// which the service parses; shown none, it answers in text; given a
// function's result, it reads the result back. It keeps the last request so
// a test sees what the service passed on.
type toolEngine struct {
	mu  sync.Mutex
	got assistant.GenerateRequest
}

// toolArgs are the arguments toolEngine calls each function with, spaced as
// a model writes them; the transport must send them compacted.
var toolArgs = map[string]string{
	"weather_forecast": `{"location": "Манжерок", "num_days": 10}`,
	"get_time":         `{"zone": "Europe/Moscow"}`,
}

func (*toolEngine) Models(context.Context) ([]assistant.ModelInfo, error) {
	return []assistant.ModelInfo{{Name: "qwen", Version: "2.5", Type: assistant.TypeChat, ContextWindow: 1000, SupportsFunctions: true}}, nil
}
func (*toolEngine) CountTokens(_ context.Context, _ string, text string) (int, error) {
	return len(strings.Fields(text)), nil
}
func (e *toolEngine) Generate(_ context.Context, req assistant.GenerateRequest, emit func(assistant.Delta) error) (assistant.Result, error) {
	e.mu.Lock()
	e.got = req
	e.mu.Unlock()
	pieces := []string{"No functions."}
	if last := req.Messages[len(req.Messages)-1]; last.Role == "function" {
		pieces = []string{"Sunny, ", last.Content}
	} else if len(req.Functions) > 0 {
		f := req.Functions[0].Name
		pieces = []string{"<tool_call>\n{\"name\": \"" + f + "\", ", "\"arguments\": " + toolArgs[f] + "}\n</tool_call>"}
	}
	for _, p := range pieces {
		if emit != nil {
			if err := emit(assistant.Delta{Text: p}); err != nil {
				return assistant.Result{}, err
			}
		}
	}
	return assistant.Result{Choices: []assistant.Choice{{Text: strings.Join(pieces, ""), FinishReason: "stop"}},
		Usage: assistant.Usage{PromptTokens: 40, CompletionTokens: 20}}, nil
}

func (e *toolEngine) last() assistant.GenerateRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.got
}

var toolFunctions = []*pb.Function{
	{Name: "weather_forecast", Description: "Forecast", Parameters: `{"type":"object","properties":{"location":{"type":"string"},"num_days":{"type":"integer"}}}`},
	{Name: "get_time", Parameters: `{"type":"object","properties":{"zone":{"type":"string"}}}`},
}

// answer is what one call returned, read the same way from Chat and from
// ChatStream: the text (the deltas' text joined, for a stream) and the
// alternative that carries finish_reason.
type answer struct {
	text  string
	final *pb.Alternative
}

func unaryAnswer(ctx context.Context, t *testing.T, c pb.ChatServiceClient, req *pb.ChatRequest) (answer, error) {
	t.Helper()
	resp, err := c.Chat(ctx, req)
	if err != nil {
		return answer{}, err
	}
	alt := resp.GetAlternatives()[0]
	return answer{text: alt.GetMessage().GetContent(), final: alt}, nil
}

// streamAnswer also checks the reference's streaming rules for calls: only
// the final message, with empty content, carries the call.
func streamAnswer(ctx context.Context, t *testing.T, c pb.ChatServiceClient, req *pb.ChatRequest) (answer, error) {
	t.Helper()
	st, err := c.ChatStream(ctx, req)
	if err != nil {
		return answer{}, err
	}
	var msgs []*pb.ChatResponse
	for {
		m, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return answer{}, err
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		t.Fatal("stream sent no message")
	}
	var a answer
	for _, m := range msgs[:len(msgs)-1] {
		alt := m.GetAlternatives()[0]
		if alt.GetMessage().FunctionCall != nil || alt.GetMessage().FunctionsStateId != nil || alt.GetFinishReason() != "" {
			t.Fatalf("delta message carries the call or its end: %v", m)
		}
		a.text += alt.GetMessage().GetContent()
	}
	a.final = msgs[len(msgs)-1].GetAlternatives()[0]
	if a.final.GetMessage().GetContent() != "" || a.final.GetMessage().GetRole() != "assistant" || msgs[len(msgs)-1].GetUsage() == nil {
		t.Fatalf("final message %v", msgs[len(msgs)-1])
	}
	return a, nil
}

var transports = []struct {
	name string
	call func(context.Context, *testing.T, pb.ChatServiceClient, *pb.ChatRequest) (answer, error)
}{{"Chat", unaryAnswer}, {"ChatStream", streamAnswer}}

// TestFunctionCalls: the call the model makes comes back as function_call
// with its arguments as JSON text and a functions_state_id, with
// finish_reason function_call, in unary and streamed answers alike; the
// policy changes what the model is offered as REST's function_call does.
func TestFunctionCalls(t *testing.T) {
	eng := &toolEngine{}
	e := start(t, eng, chatgrpc.Config{})
	ctx := authed(e.token(t, assistant.ScopeCorp))
	policy := func(mode pb.FunctionCallPolicy_Mode, name ...string) *pb.FunctionCallPolicy {
		p := &pb.FunctionCallPolicy{Mode: mode}
		if len(name) > 0 {
			p.Name = proto.String(name[0])
		}
		return p
	}
	tests := []struct {
		name    string
		policy  *pb.FunctionCallPolicy
		call    string // the function called; "" for a text answer
		args    string
		offered []string // what the engine was shown
		code    codes.Code
		message string
	}{
		{name: "no policy is auto", call: "weather_forecast", args: `{"location":"Манжерок","num_days":10}`, offered: []string{"weather_forecast", "get_time"}},
		{name: "undefined is auto", policy: policy(pb.FunctionCallPolicy_undefined), call: "weather_forecast", args: `{"location":"Манжерок","num_days":10}`, offered: []string{"weather_forecast", "get_time"}},
		{name: "auto", policy: policy(pb.FunctionCallPolicy_auto), call: "weather_forecast", args: `{"location":"Манжерок","num_days":10}`, offered: []string{"weather_forecast", "get_time"}},
		{name: "none answers in text", policy: policy(pb.FunctionCallPolicy_none), offered: nil},
		{name: "forced calls the named function", policy: policy(pb.FunctionCallPolicy_forced, "get_time"), call: "get_time", args: `{"zone":"Europe/Moscow"}`, offered: []string{"get_time"}},
		{name: "forced without a name", policy: policy(pb.FunctionCallPolicy_forced), code: codes.InvalidArgument,
			message: "Invalid params: function_call.name must name one of the functions"},
		{name: "forced naming a function not offered", policy: policy(pb.FunctionCallPolicy_forced, "nope"), code: codes.InvalidArgument,
			message: "Invalid params: function_call.name must name one of the functions"},
		{name: "unknown mode", policy: policy(pb.FunctionCallPolicy_Mode(7)), code: codes.InvalidArgument,
			message: `Invalid params: function_call must be "auto", "none" or {"name": ...}`},
	}
	for _, tr := range transports {
		for _, tt := range tests {
			t.Run(tr.name+"/"+tt.name, func(t *testing.T) {
				req := &pb.ChatRequest{Model: "qwen", Options: &pb.ChatOptions{Functions: toolFunctions, FunctionCall: tt.policy},
					Messages: []*pb.Message{{Role: "user", Content: "Погода в Манжероке на 10 дней?"}}}
				a, err := tr.call(ctx, t, e.chat, req)
				if tt.code != codes.OK {
					if st, _ := status.FromError(err); st.Code() != tt.code || st.Message() != tt.message {
						t.Fatalf("error %v, want %v %q", err, tt.code, tt.message)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var offered []string
				for _, f := range eng.last().Functions {
					offered = append(offered, f.Name)
				}
				if strings.Join(offered, ",") != strings.Join(tt.offered, ",") {
					t.Errorf("the model was offered %v, want %v", offered, tt.offered)
				}
				msg := a.final.GetMessage()
				if tt.call == "" {
					if msg.FunctionCall != nil || msg.FunctionsStateId != nil || a.final.GetFinishReason() != "stop" || a.text != "No functions." {
						t.Fatalf("text answer: %v, text %q", a.final, a.text)
					}
					return
				}
				fc := msg.GetFunctionCall()
				if fc.GetName() != tt.call || fc.GetArguments() != tt.args {
					t.Errorf("function_call %v, want %s %s", fc, tt.call, tt.args)
				}
				if a.final.GetFinishReason() != "function_call" || !assistant.IsUUID(msg.GetFunctionsStateId()) || a.text != "" {
					t.Errorf("alternative %v, text %q: want finish_reason function_call, a UUID state id and no text", a.final, a.text)
				}
			})
		}
	}
}

// TestFunctionResultRoundTrip passes a call back with its
// functions_state_id and the function's result, as a client does next: the
// engine sees the call, its id and the result, and answers in text.
func TestFunctionResultRoundTrip(t *testing.T) {
	eng := &toolEngine{}
	e := start(t, eng, chatgrpc.Config{})
	ctx := authed(e.token(t, assistant.ScopeCorp))
	user := &pb.Message{Role: "user", Content: "Погода в Манжероке на 10 дней?"}
	first, err := e.chat.Chat(ctx, &pb.ChatRequest{Model: "qwen", Options: &pb.ChatOptions{Functions: toolFunctions},
		Messages: []*pb.Message{user}})
	if err != nil {
		t.Fatal(err)
	}
	call := first.GetAlternatives()[0].GetMessage()
	id := call.GetFunctionsStateId()
	if call.GetFunctionCall() == nil || id == "" {
		t.Fatalf("no call to pass back: %v", call)
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			req := &pb.ChatRequest{Model: "qwen", Options: &pb.ChatOptions{Functions: toolFunctions}, Messages: []*pb.Message{
				user,
				{Role: "assistant", FunctionCall: call.GetFunctionCall(), FunctionsStateId: proto.String(id)},
				{Role: "function", FunctionName: proto.String("weather_forecast"), Content: `{"temperature":3}`},
			}}
			a, err := tr.call(ctx, t, e.chat, req)
			if err != nil {
				t.Fatal(err)
			}
			if a.text != `Sunny, {"temperature":3}` || a.final.GetFinishReason() != "stop" || a.final.GetMessage().FunctionCall != nil {
				t.Fatalf("answer %v, text %q", a.final, a.text)
			}
			got := eng.last().Messages
			if len(got) != 3 {
				t.Fatalf("the engine saw %d messages", len(got))
			}
			if m := got[1]; m.FunctionsStateID != id || m.FunctionCall == nil || m.FunctionCall.Name != "weather_forecast" ||
				string(m.FunctionCall.Arguments) != `{"location":"Манжерок","num_days":10}` {
				t.Errorf("the engine saw the call as %+v", m)
			}
			if m := got[2]; m.Role != "function" || m.Name != "weather_forecast" || m.Content != `{"temperature":3}` {
				t.Errorf("the engine saw the result as %+v", m)
			}
		})
	}
}
