package tools

import (
	"context"
	"crypto/rand"
	"net/http"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// tokenSession is the mcp-go client session of the POST /mcp messages this
// package hands to MCPServer.HandleMessage itself (plain tool calls and
// cancellations). The server is stateless, so mcp-go's own sessions all
// have the id "" and it keys a call's cancellation by request id alone: any
// client's notifications/cancelled for id 1 would cancel every call with
// id 1 in flight. Keyed by token, a notification cancels only calls of the
// token that sent it. The session takes no notifications.
type tokenSession struct{ id string }

// sessionFor is the session of the calls and cancellations of o's token.
// Its id starts with the process's random sessionPrefix, so a client cannot
// name it in an Mcp-Session-Id header of a message the transport serves.
func (m *MCP) sessionFor(o outerRequest) tokenSession {
	return tokenSession{id: m.sessionPrefix + strconv.FormatInt(o.cred.Token.ID, 10)}
}

// Initialize implements server.ClientSession; nothing to do.
func (tokenSession) Initialize() {}

// Initialized implements server.ClientSession: false, so mcp-go sends the
// session no notifications (a POST answered here has no stream for them).
func (tokenSession) Initialized() bool { return false }

// NotificationChannel implements server.ClientSession: none.
func (tokenSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }

// SessionID implements server.ClientSession.
func (s tokenSession) SessionID() string { return s.id }

// withSession is ctx carrying o's token session for mcp-go.
func (m *MCP) withSession(ctx context.Context, o outerRequest) context.Context {
	return m.mcp.WithContext(ctx, m.sessionFor(o))
}

// cancelCall hands a notifications/cancelled to mcp-go under the sender's
// token session (r's context carries it, see withSession) and accepts it (202, as the transport answers a
// notification). Only a plain call of the same token with that request id
// is cancelled; a call served by the transport never is (a client cancels
// it by hanging up).
func (m *MCP) cancelCall(w http.ResponseWriter, r *http.Request, body []byte) {
	_ = m.mcp.HandleMessage(r.Context(), body) // a notification has no answer
	w.WriteHeader(http.StatusAccepted)
}

// isCancellation reports whether msg is a notifications/cancelled: that
// method without an id, or with a null one (mcp-go takes both for a
// notification).
func (msg rpcMessage) isCancellation() bool {
	return msg.Method == string(mcp.MethodNotificationCancelled) &&
		(len(msg.ID) == 0 || string(msg.ID) == "null")
}

// newSessionPrefix is a random prefix for the token sessions of one process.
func newSessionPrefix() string {
	return "token-" + rand.Text()[:16] + "-"
}
