package routes

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
)

// NewApp returns the fiber application with the settings every route relies on: the
// 5 MiB body limit, envelope errors, no HTML error pages and no panic escaping.
func NewApp(log *slog.Logger) *fiber.App {
	app := fiber.New(fiber.Config{
		BodyLimit:             MaxBodyBytes,
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
