package chatgrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"

	"partnerapi/internal/assistant"
	pb "partnerapi/internal/assistant/gigachatpb"
)

// float turns a proto float32 into the float64 the domain uses via its
// shortest decimal form, so 0.87f is 0.87 and not 0.8700000047683716 when
// range checks and samplers compare it.
func float(v *float32) *float64 {
	if v == nil {
		return nil
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(*v), 'g', -1, 32), 64)
	return &f
}

// jsonText checks a text field that must hold JSON (the proto carries REST's
// objects as strings) and returns it raw; empty stays absent.
func jsonText(field, s string, object bool) (json.RawMessage, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if object {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
			return nil, badArgument(fmt.Sprintf("Invalid params: %s must be a JSON object", field))
		}
	} else if !json.Valid([]byte(s)) {
		return nil, badArgument(fmt.Sprintf("Invalid params: %s must be JSON", field))
	}
	return json.RawMessage(s), nil
}

// functionChoice maps the proto's FunctionCallPolicy to the domain's
// function_call as REST's JSON maps to it (reference assistant-grpc.md §3):
// auto and none are REST's strings, forced with its name is {"name": ...},
// and undefined or absent is no function_call at all, which the service
// reads as auto. Validation is left to the service so that both transports
// refuse the same requests with the same messages: forced without a name, or
// naming a function not offered, is refused there like REST's {"name": ""},
// and a mode number this build does not know is passed on as its number,
// which the service refuses like an unknown REST string.
func functionChoice(p *pb.FunctionCallPolicy) assistant.FunctionChoice {
	switch p.GetMode() {
	case pb.FunctionCallPolicy_undefined:
		return assistant.FunctionChoice{}
	case pb.FunctionCallPolicy_auto:
		return assistant.FunctionChoice{Mode: assistant.FunctionCallAuto}
	case pb.FunctionCallPolicy_none:
		return assistant.FunctionChoice{Mode: assistant.FunctionCallNone}
	case pb.FunctionCallPolicy_forced:
		return assistant.FunctionChoice{Mode: assistant.FunctionCallName, Name: p.GetName()}
	default:
		return assistant.FunctionChoice{Mode: strconv.Itoa(int(p.GetMode()))}
	}
}

// decodeChat converts a ChatRequest to the domain's request. The
// function-call policy, the functions and the calls and state ids of earlier
// assistant messages mean what they mean in REST; fields the domain has no
// use for (flags, few-shot examples, return parameters) are accepted and
// ignored, as the reference asks; attachments name uploaded files, as in
// REST.
func decodeChat(req *pb.ChatRequest) (assistant.ChatRequest, error) {
	o := req.GetOptions()
	out := assistant.ChatRequest{
		Model: req.GetModel(),
	}
	if o != nil {
		out.Temperature, out.TopP, out.RepetitionPenalty = float(o.Temperature), float(o.TopP), float(o.RepetitionPenalty)
	}
	if o != nil && o.MaxTokens != nil {
		v := int(*o.MaxTokens)
		out.MaxTokens = &v
	}
	if o != nil {
		if v := float(o.UpdateInterval); v != nil {
			out.UpdateInterval = *v
		}
	}
	for i, m := range req.GetMessages() {
		if m.GetRole() == "" {
			return out, badArgument(fmt.Sprintf("messages[%d].role is required", i))
		}
		msg := assistant.Message{Role: m.GetRole(), Content: m.GetContent(), Name: m.GetFunctionName(),
			FunctionsStateID: m.GetFunctionsStateId(), Attachments: m.GetAttachments()}
		if fc := m.GetFunctionCall(); fc != nil {
			args, err := jsonText(fmt.Sprintf("messages[%d].function_call.arguments", i), fc.GetArguments(), true)
			if err != nil {
				return out, err
			}
			msg.FunctionCall = &assistant.FunctionCall{Name: fc.GetName(), Arguments: args}
		}
		out.Messages = append(out.Messages, msg)
	}
	for i, f := range o.GetFunctions() {
		params, err := jsonText(fmt.Sprintf("functions[%d].parameters", i), f.GetParameters(), true)
		if err != nil {
			return out, err
		}
		out.Functions = append(out.Functions, assistant.Function{Name: f.GetName(), Description: f.GetDescription(), Parameters: params})
	}
	out.FunctionCall = functionChoice(o.GetFunctionCall())
	return out, nil
}

// putFunctionCall puts a choice's call on an outgoing message: the arguments
// object goes out as JSON text (the proto's string where REST has an
// object), compacted as REST's encoder compacts it, so both transports send
// the same bytes; with the call goes the state id a client passes back with
// the function's result.
func putFunctionCall(msg *pb.Message, ch assistant.Choice) {
	if ch.FunctionCall == nil {
		return
	}
	args := string(ch.FunctionCall.Arguments)
	var compact bytes.Buffer
	if json.Compact(&compact, ch.FunctionCall.Arguments) == nil {
		args = compact.String()
	}
	msg.FunctionCall = &pb.FunctionCall{Name: ch.FunctionCall.Name, Arguments: args}
	if ch.FunctionsStateID != "" {
		msg.FunctionsStateId = &ch.FunctionsStateID
	}
}

// usage is REST's usage without precached_prompt_tokens, which the proto
// has no field for: prompt_tokens leaves out the tokens reused from the
// cache there too, so that total_tokens is what the client is billed.
func usage(u assistant.Usage) *pb.Usage {
	prompt := u.UncachedPromptTokens()
	return &pb.Usage{
		PromptTokens:     int32(prompt),
		CompletionTokens: int32(u.CompletionTokens),
		TotalTokens:      int32(prompt + u.CompletionTokens),
	}
}

// start validates, resolves and takes a concurrency slot, in REST's order;
// every refusal happens here, before a stream message is sent.
func (s *Server) start(ctx context.Context, req *pb.ChatRequest) (assistant.Chat, float64, func(), error) {
	r, err := decodeChat(req)
	if err != nil {
		return assistant.Chat{}, 0, nil, err
	}
	p := principal(ctx)
	c, err := s.svc.PrepareChat(ctx, p, r)
	if err != nil {
		return c, 0, nil, s.statusError(ctx, err)
	}
	release, err := s.svc.Acquire(ctx, p)
	if err != nil {
		return c, 0, nil, s.statusError(ctx, err)
	}
	return c, r.UpdateInterval, release, nil
}

func response(c assistant.Chat, created int64, alt *pb.Alternative, u *pb.Usage) *pb.ChatResponse {
	return &pb.ChatResponse{
		Alternatives: []*pb.Alternative{alt},
		Usage:        u,
		ModelInfo:    &pb.ModelInfo{Name: c.Model.Name, Version: c.Model.Version},
		Timestamp:    created,
	}
}

// Chat is POST /chat/completions without streaming; gRPC has no n, so there
// is one alternative.
func (s *Server) Chat(ctx context.Context, req *pb.ChatRequest) (*pb.ChatResponse, error) {
	c, _, release, err := s.start(ctx, req)
	if err != nil {
		return nil, err
	}
	defer release()
	created := time.Now().Unix()
	res, err := s.svc.Run(ctx, c, nil)
	if err != nil {
		return nil, s.statusError(ctx, err)
	}
	alt := &pb.Alternative{Message: &pb.Message{Role: "assistant"}}
	if len(res.Choices) > 0 {
		alt.Message.Content = res.Choices[0].Text
		alt.FinishReason = res.Choices[0].FinishReason
		putFunctionCall(alt.Message, res.Choices[0])
	}
	return response(c, created, alt, usage(res.Usage)), nil
}

// ChatStream sends one message per delta (or per update_interval), then a
// final message with empty content carrying finish_reason and usage: some
// clients drop an alternative whose finish_reason is "stop", so the last text
// never rides on it (reference §4). A function call rides on that final
// message with its state id, as the reference asks; the service holds the
// call's text back from the deltas, so it is sent once, whole.
func (s *Server) ChatStream(req *pb.ChatRequest, stream grpc.ServerStreamingServer[pb.ChatResponse]) error {
	ctx := stream.Context()
	c, interval, release, err := s.start(ctx, req)
	if err != nil {
		return err
	}
	// Cancellation or a deadline ends ctx, the engine stops, and the slot
	// comes back here.
	defer release()
	created := time.Now().Unix()
	every := assistant.UpdateEvery(interval)
	var pending strings.Builder
	var last time.Time
	flush := func() error {
		if pending.Len() == 0 {
			return nil
		}
		alt := &pb.Alternative{Message: &pb.Message{Role: "assistant", Content: pending.String()}}
		pending.Reset()
		last = time.Now()
		return stream.Send(response(c, created, alt, nil))
	}
	res, err := s.svc.Run(ctx, c, func(d assistant.Delta) error {
		if d.Index != 0 || d.Text == "" {
			return nil
		}
		pending.WriteString(d.Text)
		if every > 0 && time.Since(last) < every {
			return nil
		}
		return flush()
	})
	if err != nil {
		// Before the first message this is the call's only answer; after it,
		// the status rides in the trailers, after the text update_interval
		// held back, which was generated before the failure and would have
		// gone out without the interval. A client that is gone gets none.
		if ctx.Err() == nil {
			_ = flush()
		}
		return s.statusError(ctx, err)
	}
	if err := flush(); err != nil {
		return err
	}
	alt := &pb.Alternative{Message: &pb.Message{Role: "assistant"}}
	if len(res.Choices) > 0 {
		alt.FinishReason = res.Choices[0].FinishReason
		putFunctionCall(alt.Message, res.Choices[0])
	}
	return stream.Send(response(c, created, alt, usage(res.Usage)))
}
