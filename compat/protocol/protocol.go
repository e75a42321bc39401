// Package protocol holds the JSON types of the XXL-JOB admin ⇄ executor wire protocol
// (wire-protocol.md), with tolerant decoders for every executor generation and fast encoders.
package protocol

import "errors"

// Envelope and callback codes (wire-protocol.md §2.2).
const (
	// CodeSuccess is the only code any consumer treats as success.
	CodeSuccess = 200
	// CodeFail is every failure: validation, token, routing, remote error.
	CodeFail = 500
	// CodeTimeout appears only as a callback handleCode: the execution timed out.
	CodeTimeout = 502
)

// Header names, spelled as the Java clients send them (wire-protocol.md §1).
const (
	HeaderAccessToken = "XXL-JOB-ACCESS-TOKEN"
	// HeaderAppName is sent and required by P3 (3.5.0-SNAPSHOT) only.
	HeaderAppName = "XXL-JOB-APPNAME"
)

// Messages both sides answer with; executor-originated texts end up in trigger_msg, so
// they are kept exactly as upstream spells them (wire-protocol.md §4.1, §5, §7).
const (
	MsgMethodNotSupported    = "invalid request, HttpMethod not support."
	MsgURIEmpty              = "invalid request, uri-mapping empty."
	MsgBodyEmpty             = "invalid request, requestBody empty."
	MsgTokenWrong            = "The access token is wrong."
	MsgIllegalArgument       = "Illegal Argument."
	MsgTokenOrAppNameEmpty   = "invalid request, accessToken or appname is empty."
	MsgTokenOrAppNameInvalid = "invalid request, accessToken or appname invalid."
)

// MsgURINotFound is the answer to an unknown method name under /api/ (or an unknown
// executor path).
func MsgURINotFound(uri string) string {
	return "invalid request, uri-mapping(" + uri + ") not found."
}

// ErrIllegalArgument is returned by DecodeRegistry when a field is null or blank; its
// text is the message upstream answers.
var ErrIllegalArgument = errors.New(MsgIllegalArgument)
