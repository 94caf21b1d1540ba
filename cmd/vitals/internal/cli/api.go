package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/api"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/apisocket"
	"github.com/vitals-dev/vitals/health"
)

// This file is what the commands that talk to a running agent (vitals run)
// through its management API share: where the agent is, how they ask it,
// and their exit codes; each command is in a file of its own (checks.go,
// check.go, health.go, events.go, beat.go, work.go, restart.go, notify.go,
// stopstart.go, hooks.go, reload.go). Where an outcome has an exit code of
// its own (health, check), it is 0 pass, 1 fail; an answer of the agent
// that says the request was wrong (an unknown check, a wrong token, a file
// it will not reload) exits 2, as bad usage does; an agent that cannot be
// reached, or asks to be asked again later (429), exits 1.

// followWait is how long one request of events --follow waits for an event
// before asking again: under the idle timeouts of proxies.
const followWait = 30 * time.Second

// newAPICommands returns checks, check, health, events, beat, work,
// restart, notify, stop, start, hooks and reload.
func newAPICommands(stdout, stderr io.Writer) []*cobra.Command {
	return []*cobra.Command{newChecks(stdout), newCheck(stdout), newHealth(stdout), newEvents(stdout, stderr), newBeat(),
		newWork(stdout, stderr), newRestart(stdout), newNotify(stdout), newStopOrStart(stdout, false), newStopOrStart(stdout, true), newHooks(stdout), newReload(stdout)}
}

// agentFlags say where the agent's API is.
type agentFlags struct{ addr, tokenFile string }

// defaultAPI is apisocket.Default, found once: every command over the API
// says it in its --api flag's help, and each command line builds them all
// (finding it looks at directories: thirteen times would be thirteen sets
// of system calls in every vitals probe, an exec probe run every period).
var defaultAPI = sync.OnceValue(apisocket.Default)

func (a *agentFlags) define(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&a.addr, "api", "", "the agent's API: a unix socket, tcp://HOST:PORT or an http:// URL (default $VITALS_API, else "+defaultAPI()+")")
	f.StringVar(&a.tokenFile, "api-token-file", "", "the file with the token of a TCP API (default: the token in $VITALS_API_TOKEN)")
	cmd.MarkFlagFilename("api-token-file")
}

// client calls the API that --api, $VITALS_API or the default names, with the
// token of --api-token-file or $VITALS_API_TOKEN.
func (a *agentFlags) client() (*client.Client, error) {
	token := os.Getenv("VITALS_API_TOKEN")
	if a.tokenFile != "" {
		var err error
		if token, err = api.ReadToken(a.tokenFile); err != nil {
			return nil, fmt.Errorf("--api-token-file: %w", err)
		}
	}
	return client.New(cmp.Or(a.addr, os.Getenv("VITALS_API"), defaultAPI()), token)
}

// connect is what every command over the API starts with: the client, and
// the command's context, which SIGINT or SIGTERM ends.
func (a *agentFlags) connect(cmd *cobra.Command) (*client.Client, context.Context, context.CancelFunc, error) {
	conn, err := a.client()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	return conn, ctx, stop, nil
}

// ask is what a command that makes one call of the API does: connect, call,
// and map the call's error to its exit code (fromAgent). call is a method
// of the client, such as (*client.Client).Hooks, or a function of one.
func ask[T any](cmd *cobra.Command, agent *agentFlags, call func(*client.Client, context.Context) (T, error)) (T, error) {
	conn, ctx, stop, err := agent.connect(cmd)
	if err != nil {
		var zero T
		return zero, err
	}
	defer stop()
	v, err := call(conn, ctx)
	if err != nil {
		return v, fromAgent(cmd, err)
	}
	return v, nil
}

// fromAgent maps an API call's error to its exit code: the agent's 4xx answer
// (an unknown check, a check that is no heartbeat or no watchdog, a wrong
// token, a file it refuses to reload) is bad usage, 2; no answer, a 5xx,
// or a 429 (beyond its limits: try again) is a failure, 1.
func fromAgent(cmd *cobra.Command, err error) error {
	var e *client.Error
	switch {
	case errors.As(err, &e) && e.Status == http.StatusUnauthorized:
		return fmt.Errorf("%s (give the agent's token with --api-token-file or $VITALS_API_TOKEN)", e.Message)
	case errors.As(err, &e) && e.Status == http.StatusTooManyRequests:
		return failed{fmt.Sprintf("%s: %s", cmd.CommandPath(), e.Message)} // a moment's refusal: try again, not bad usage
	case errors.As(err, &e) && e.Status < 500:
		return errors.New(e.Message)
	}
	return failed{fmt.Sprintf("%s: %v", cmd.CommandPath(), err)}
}

// levelFlag reads --level; "" is 0 (every level).
func levelFlag(s string) (health.Level, error) {
	if s == "" {
		return 0, nil
	}
	l, err := health.ParseLevel(s)
	if err != nil {
		return 0, fmt.Errorf("--level: %v", err)
	}
	return l, nil
}

// complete offers the values of a flag that has a fixed set.
func complete(cmd *cobra.Command, flag string, values ...string) {
	cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}
