package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnigraph-go/omnigraph/internal/remote"
)

// StatusMeta is the _meta key of a failed tool result that holds the HTTP
// status the backend route answered (400 for input the tool refused).
const StatusMeta = "omnigraph/status"

// inputError is tool input refused before the backend is asked: the
// arguments do not match the tool's schema.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

func badInput(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// errorBody is the ErrorOutput of a failure that did not come from the
// HTTP API itself (input refused here, a server that cannot be reached).
type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code,omitempty"`
}

// failure renders err as a tool error: the route's status and ErrorOutput
// body verbatim when the backend answered one, an ErrorOutput of the same
// shape otherwise.
func failure(err error) *sdk.CallToolResult {
	status, body, msg := failureBody(err)
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: msg}},
		StructuredContent: body,
		Meta:              sdk.Meta{StatusMeta: status},
	}
}

func failureBody(err error) (int, json.RawMessage, string) {
	var (
		re *remote.Error
		in *inputError
	)
	switch {
	case errors.As(err, &re):
		raw := bytes.TrimSpace([]byte(re.Raw))
		if re.Body != nil && json.Valid(raw) {
			return re.Status, json.RawMessage(raw), re.Error()
		}
		return re.Status, mustJSON(errorBody{Error: re.Error(), Code: statusCode(re.Status)}), re.Error()
	case errors.As(err, &in):
		return http.StatusBadRequest, mustJSON(errorBody{Error: in.msg, Code: "bad_request"}), in.msg
	}
	// Transport failures and cancellations: the route never answered.
	return http.StatusBadGateway, mustJSON(errorBody{Error: err.Error(), Code: "internal"}), err.Error()
}

// statusCode is the ErrorOutput code of a status whose body was not an
// ErrorOutput (a proxy in between, say).
func statusCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "bad_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusConflict:
		return "conflict"
	case http.StatusTooManyRequests:
		return "too_many_requests"
	}
	return "internal"
}

// success is a tool result carrying body as structured content and text
// as its rendering.
func success(body json.RawMessage, text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, StructuredContent: body}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// Only plain data types reach here.
		panic(fmt.Sprintf("mcp: encode %T: %v", v, err))
	}
	return b
}
