package tools

import (
	"context"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// tokenSession is the mcp-go client session of every POST /mcp message.
// mcp-go keys a call's cancellation by session id and request id; a
// stateless server has no sessions of its own, so without this every
// client's notifications/cancelled for id 1 would cancel every call with
// id 1 in flight. Keyed by token, a notification cancels only calls of the
// token that sent it. The session takes no notifications.
type tokenSession struct{ id string }

// sessionFor is the session of the messages of o's token. No message
// names a session (Mcp-Session-Id is never read), so a client cannot reach
// another token's.
func (m *MCP) sessionFor(o outerRequest) tokenSession {
	return tokenSession{id: "token:" + strconv.FormatInt(o.cred.Token.ID, 10)}
}

// Initialize implements server.ClientSession; nothing to do.
func (tokenSession) Initialize() {}

// Initialized implements server.ClientSession: true, as a stateless
// server's every message is (logging/setLevel needs it). A notification
// mcp-go sends the session is dropped: its channel is nil, and mcp-go
// never blocks on a session's channel.
func (tokenSession) Initialized() bool { return true }

// NotificationChannel implements server.ClientSession: none.
func (tokenSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }

// SessionID implements server.ClientSession.
func (s tokenSession) SessionID() string { return s.id }

// SetLogLevel implements server.SessionWithLogging: a stateless server
// keeps no level (it sends no log messages).
func (tokenSession) SetLogLevel(mcp.LoggingLevel) {}

// GetLogLevel implements server.SessionWithLogging.
func (tokenSession) GetLogLevel() mcp.LoggingLevel { return mcp.LoggingLevelError }

// withSession is ctx carrying o's token session for mcp-go.
func (m *MCP) withSession(ctx context.Context, o outerRequest) context.Context {
	return m.mcp.WithContext(ctx, m.sessionFor(o))
}
