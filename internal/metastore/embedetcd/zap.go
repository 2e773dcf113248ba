package embedetcd

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/soheilhy/cmux"
	etcderr "go.etcd.io/etcd/server/v3/etcdserver/errors"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
)

// newZap returns a zap logger that forwards warnings and errors to lg
// (nil: a no-op logger), and etcd's Info entries at Debug when lg logs
// at Debug. Once closing is set, those carrying the error of
// a closed listener or server, or of a request the stop cancelled, are how
// etcd's goroutines end, not trouble: they go to lg at Debug (etcd logs
// them at Error and Warn).
func newZap(lg *slog.Logger, closing *atomic.Bool) *zap.Logger {
	if lg == nil {
		return zap.NewNop()
	}
	return zap.New(&slogCore{lg: lg.With("component", "etcd"), closing: closing})
}

// slogCore is a zapcore.Core writing to slog.
type slogCore struct {
	lg      *slog.Logger
	closing *atomic.Bool
	fields  []zapcore.Field
}

// advice are etcd's warnings that are advice for its own deployments
// and not about an embedded store: logged at Info.
var advice = map[string]bool{
	// Samsa's store clients speak gRPC only; etcd's HTTP endpoints share
	// the client port unused.
	"Running http and grpc server on single port. This is not recommended for production.": true,
}

// closedError reports whether fields carry the error of a closed
// listener or server, or of a request the server's stop cancelled (as the
// cluster version update that a member closed right after it started
// still has in flight: "failed to update cluster version", context
// canceled or etcdserver: request cancelled).
func closedError(fields []zapcore.Field) bool {
	for _, f := range fields {
		if err, ok := f.Interface.(error); ok && f.Type == zapcore.ErrorType &&
			(errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) ||
				errors.Is(err, grpc.ErrServerStopped) || errors.Is(err, cmux.ErrListenerClosed) || errors.Is(err, cmux.ErrServerClosed) ||
				errors.Is(err, context.Canceled) || errors.Is(err, etcderr.ErrCanceled) || errors.Is(err, etcderr.ErrStopped)) {
			return true
		}
	}
	return false
}

// Enabled passes etcd's warnings and errors, and its Info entries (raft
// elections and term changes, members joining and leaving, leases
// revoked) when lg logs at Debug: they are what explains a store stall
// after the fact.
func (c *slogCore) Enabled(l zapcore.Level) bool {
	return l >= zapcore.WarnLevel || l == zapcore.InfoLevel && c.lg.Enabled(context.Background(), slog.LevelDebug)
}

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{lg: c.lg, closing: c.closing, fields: append(append([]zapcore.Field(nil), c.fields...), fields...)}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fields {
		f.AddTo(enc)
	}
	attrs := make([]slog.Attr, 0, len(enc.Fields)+1)
	if e.LoggerName != "" {
		attrs = append(attrs, slog.String("logger", e.LoggerName))
	}
	for k, v := range enc.Fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	level := slog.LevelWarn
	switch {
	case e.Level < zapcore.WarnLevel:
		level = slog.LevelDebug
	case c.closing.Load() && (closedError(fields) || closedError(c.fields)):
		level = slog.LevelDebug
	case advice[e.Message]:
		level = slog.LevelInfo
	case e.Level >= zapcore.ErrorLevel:
		level = slog.LevelError
	}
	c.lg.LogAttrs(context.Background(), level, e.Message, attrs...)
	return nil
}

func (c *slogCore) Sync() error { return nil }
