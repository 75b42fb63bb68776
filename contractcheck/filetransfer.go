package contractcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP file-transfer draft (SEP-2631) adds two methods a server may
// offer: files/authorizeUpload hands a client where to upload a file for a
// tool's x-mcp-file input, files/authorizeDownload where to fetch a file a
// tool produced. This point asks whether the server answers them; what they
// answer is checked once the draft settles.
const (
	methodAuthorizeUpload   = "files/authorizeUpload"
	methodAuthorizeDownload = "files/authorizeDownload"
)

// transferParams are the (empty) params the probe sends.
type transferParams struct {
	mcp.ParamsBase
}

// transferResult keeps whatever a server answers.
type transferResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

// UnmarshalJSON keeps the answer as it came.
func (r *transferResult) UnmarshalJSON(b []byte) error {
	r.raw = append(json.RawMessage(nil), b...)
	return nil
}

// registerFileTransfer lets a client send the draft's methods.
func registerFileTransfer(c *mcp.Client) {
	for _, m := range []string{methodAuthorizeUpload, methodAuthorizeDownload} {
		_ = mcp.AddSendingCustomMethod[*transferParams, *transferResult](c, m)
	}
}

// fileTransfer asks the server for each of the draft's methods. It runs
// last: a server that answers an unknown method with a plain HTTP error
// (rather than JSON-RPC's "method not found") may end the session.
func (c *checker) fileTransfer(ctx context.Context) {
	var offered, not []string
	for _, m := range []string{methodAuthorizeUpload, methodAuthorizeDownload} {
		cctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
		res, err := mcp.CallCustomMethod[*transferParams, *transferResult](cctx, c.s, m, &transferParams{})
		cancel()
		var rpc *jsonrpc.Error
		switch {
		case err == nil:
			offered = append(offered, fmt.Sprintf("%s: answered %s", m, clip(string(res.raw), 200)))
		case errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound, unknownMethod(err):
			not = append(not, m)
		case errors.As(err, &rpc):
			// Offered: it read the (empty) request and said what it lacks.
			offered = append(offered, fmt.Sprintf("%s: offered (an empty request answered %d %s)", m, rpc.Code, rpc.Message))
		default:
			c.r.add(PointFileTransfer, Skip, "%s: %v", m, err)
			return
		}
	}
	if len(offered) == 0 {
		c.r.add(PointFileTransfer, NotOffered, "%s: method not found (optional: the draft's way to hand out upload and download URLs)", strings.Join(not, ", "))
		return
	}
	detail := strings.Join(offered, "\n")
	if len(not) > 0 {
		detail += "\nnot offered: " + strings.Join(not, ", ")
	}
	c.r.add(PointFileTransfer, Pass, "%s", detail)
}

// unknownMethod reports whether err is a server's plain refusal of a method
// it does not know.
func unknownMethod(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "method not found") || strings.Contains(s, "unsupported method") || strings.Contains(s, "unknown method")
}
