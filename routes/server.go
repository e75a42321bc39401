package routes

import (
	"io"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
)

// NewApp returns the fiber application with the settings every route relies on: the
// 5 MiB body limit, envelope errors, no HTML error pages and no panic escaping.
func NewApp(log *slog.Logger) *fiber.App {
	app := fiber.New(fiber.Config{
		// Bodies are streamed and capped by readBody, so an oversized request is
		// answered with an envelope instead of a reset connection.
		BodyLimit:         MaxBodyBytes,
		StreamRequestBody: true,
		// Room for large cookies and tokens; fasthttp's 4 KiB default answers 431.
		ReadBufferSize:        16 << 10,
		DisableStartupMessage: true,
		ErrorHandler:          ErrorHandler(log),
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           120 * time.Second,
		// Executors post with any Content-Type; bodies are read raw.
		StrictRouting: false,
	})
	app.Use(recoverer(log))
	return app
}

// recoverer turns a panic in a handler into a logged 500 (an envelope on /api paths)
// instead of a dropped connection.
func recoverer(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("handler panic", "path", c.Path(), "panic", r)
				err = fiber.NewError(fiber.StatusInternalServerError, "internal error")
			}
		}()
		return c.Next()
	}
}

// drainLimit bounds how much of an oversized body is read and discarded so that the
// client still receives the answer; beyond it the connection is simply closed.
const drainLimit = 64 << 20

// readBody returns the request body, or ok=false when it is larger than limit.
func readBody(c *fiber.Ctx, limit int) ([]byte, bool) {
	req := &c.Context().Request
	if !req.IsBodyStream() {
		b := c.Body()
		return b, len(b) <= limit
	}
	stream := req.BodyStream()
	b, err := io.ReadAll(io.LimitReader(stream, int64(limit)+1))
	if err != nil || len(b) > limit {
		_, _ = io.CopyN(io.Discard, stream, drainLimit)
		return nil, false
	}
	return b, true
}
