package adminapp

import (
	"context"
	"database/sql"
	"time"

	"github.com/gofiber/fiber/v2"
)

// The Kubernetes probes, at Spring Boot's paths for them (its health groups
// "liveness" and "readiness"). They differ from /actuator/health on purpose:
//
//   - Liveness answers whether the process should be restarted: UP while it serves
//     HTTP at all, also while the database is down or the admin is stopping.
//     Restarting admins during a database outage would only add cold starts to it.
//   - Readiness answers whether traffic (console, executor callbacks and
//     registrations, OpenAPI) should be sent here: OUT_OF_SERVICE with 503 while the
//     admin is starting, stopping (from SIGTERM on, so that Kubernetes takes it out of
//     the Service while it hands its work over), or its database does not answer a
//     ping within 1 s. A stalled scan alone does not take it out: the console and
//     the executor API still work, and /actuator/health names the stall.
//
// Like /actuator/health they name states, never data or error texts: they need no
// login.

// mountProbes serves the liveness and readiness probes under prefix.
func (a *Admin) mountProbes(r fiber.Router, prefix string, db *sql.DB) {
	r.Get(prefix+"/actuator/health/liveness", func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"status": "UP"})
	})
	r.Get(prefix+"/actuator/health/readiness", func(c *fiber.Ctx) error {
		reason := a.notReady(c.UserContext(), db)
		if reason == "" {
			return c.JSON(fiber.Map{"status": "UP"})
		}
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "OUT_OF_SERVICE", "details": fiber.Map{"reason": reason}})
	})
}

// notReady names why the admin should get no traffic ("starting", "stopping",
// "database"); empty when it is ready.
func (a *Admin) notReady(ctx context.Context, db *sql.DB) string {
	switch {
	case a.stopping.Load() || a.Scheduler.Stopping():
		return "stopping"
	case !a.started.Load() || !a.Scheduler.Started():
		return "starting"
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		return "database"
	}
	return ""
}
