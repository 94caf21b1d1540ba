//go:build vitals_probe

package kinds

// The probe build's dependency kinds: their names and schemes, so that
// vitals probe and vitals wait say where their targets are, and no builder,
// so that the build links none of their clients (pgx, go-redis, amqp091-go,
// nats.go), which an exec probe would pay for at every start. postgres.go,
// redis.go, amqp.go and nats.go are the full build's.
var (
	Postgres = Kind{Name: "postgres", CLI: &CLI{Schemes: []string{"postgres", "postgresql"}}}
	Redis    = Kind{Name: "redis", CLI: &CLI{Schemes: []string{"redis", "rediss"}}}
	AMQP     = Kind{Name: "amqp", CLI: &CLI{Schemes: []string{"amqp", "amqps"}}}
	NATS     = Kind{Name: "nats", CLI: &CLI{Schemes: []string{"nats"}}}
)
