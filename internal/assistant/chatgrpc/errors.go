package chatgrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"partnerapi/internal/assistant"
	"partnerapi/internal/sqldb"
)

// statusError maps the assistant's domain errors to gRPC statuses: the one
// place that does (reference assistant-grpc.md §5). Messages are the REST
// envelope's texts so both transports say the same thing.
func (s *Server) statusError(ctx context.Context, err error) error {
	if _, ok := status.FromError(err); ok {
		// Already a status (a transport-level refusal made in this package).
		return err
	}
	var inv *assistant.InvalidParams
	var te *assistant.TemplateError
	switch {
	case errors.As(err, &inv):
		return status.Error(codes.InvalidArgument, inv.Message)
	case errors.As(err, &te):
		// REST's 422 for a conversation the chat template refuses; the
		// reference maps 422 to INVALID_ARGUMENT, which clients do not retry.
		return status.Error(codes.InvalidArgument, "Invalid params: "+te.Reason)
	case errors.Is(err, assistant.ErrUnauthorized):
		return status.Error(s.cfg.AuthCode, "Unauthorized")
	case errors.Is(err, assistant.ErrTokenExpired):
		return status.Error(s.cfg.AuthCode, "Token has expired")
	case errors.Is(err, assistant.ErrPermissionDenied):
		return status.Error(codes.PermissionDenied, "Permission denied")
	case errors.Is(err, assistant.ErrPaymentRequired):
		return status.Error(codes.ResourceExhausted, "Payment Required")
	case errors.Is(err, assistant.ErrTooManyRequests), errors.Is(err, assistant.ErrEngineBusy):
		return status.Error(codes.ResourceExhausted, "Too Many Requests")
	case errors.Is(err, assistant.ErrNoSuchModel):
		return status.Error(codes.NotFound, "No such model")
	case errors.Is(err, assistant.ErrContextWindow):
		return status.Error(codes.InvalidArgument, "Payload too large")
	case errors.Is(err, assistant.ErrNoFunctions):
		return status.Error(codes.InvalidArgument, "Requested model does not support functions")
	case errors.Is(err, assistant.ErrUnavailable):
		// No server of the model can be reached: REST's 503 "Service
		// Unavailable". The reference's table (assistant-grpc.md §5) maps
		// "500 and any other" REST status to 13 INTERNAL and names no 14
		// UNAVAILABLE, so the code follows the provider's and the message
		// is REST's, as for every other status. It is not logged as an
		// internal error: the pool logs the replica leaving and rejoining
		// rotation, and a line for each request refused meanwhile would
		// only repeat that (REST writes none either).
		return status.Error(codes.Internal, "Service Unavailable")
	case assistant.FromStore(err) && sqldb.Unavailable(err):
		// The database is down, restarting or busy: REST answers its 503
		// "Service Unavailable", so this is the same status as a model
		// that cannot be reached, 13 INTERNAL with REST's message, by the
		// reference's table (only the store's errors are asked: an
		// upstream's stream cut short breaks a connection in the same
		// words and stays "Internal Server Error"). Nothing else logs a
		// database outage, so each refused call does, at error level for
		// operators to see; the error's text names the database's user
		// and name, never the URL's password.
		if s.log != nil {
			s.log.ErrorContext(ctx, "assistant grpc: database unavailable", "err", err, "request_id", requestID(ctx))
		}
		return status.Error(codes.Internal, "Service Unavailable")
	case errors.Is(err, context.DeadlineExceeded):
		// The spec's 408: the client's grpc-timeout ran out.
		return status.Error(codes.DeadlineExceeded, "Request timeout")
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "Request cancelled")
	default:
		if s.log != nil {
			s.log.ErrorContext(ctx, "assistant grpc: internal error", "err", err, "request_id", requestID(ctx))
		}
		return status.Error(codes.Internal, "Internal Server Error")
	}
}

// badArgument is a request this transport refuses before the domain sees it
// (text fields that must hold JSON).
func badArgument(msg string) error { return status.Error(codes.InvalidArgument, msg) }
