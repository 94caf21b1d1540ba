//go:build !vitals_probe

package kinds

import (
	"github.com/vitals-dev/vitals/cmd/vitals/internal/deps"
	"github.com/vitals-dev/vitals/health"
)

// Postgres is a query on a kept connection to a PostgreSQL server.
var Postgres = define(Kind{
	Name:          "postgres",
	Summary:       "A PostgreSQL server that answers SELECT 1 on a kept connection.",
	Example:       "{url: postgres://localhost:5432/postgres}",
	ComponentType: health.ComponentTypeDatastore, // a database the workload keeps its data in
	CLI:           postgresCLI,
}, urlBlock("Required: postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=…, as libpq reads it; what it leaves out comes from the PG* variables and ~/.pgpass, as in psql.",
	func(s *deps.PostgresSpec) *string { return &s.URL }, deps.Postgres))

var postgresCLI = urlTargets(CLI{
	Schemes: []string{"postgres", "postgresql"}, Target: "postgres://USER:PASSWORD@HOST:PORT/DB",
	Help: "a PostgreSQL login that answers SELECT 1 (postgresql:// too)", Example: "postgres://localhost:5432/postgres",
}, func(s *deps.PostgresSpec) *string { return &s.URL }, deps.Postgres)
