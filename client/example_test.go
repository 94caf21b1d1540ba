package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/vitals-dev/vitals/client"
	"github.com/vitals-dev/vitals/health"
)

// A program tells the agent that supervises it that its configuration was
// reloaded, then lists the checks that do not pass. The agent's hooks,
// Kubernetes Events and metrics get the notice as they get every event.
func Example() {
	c, err := client.New("/run/vitals/vitals.sock", "") // or tcp://HOST:PORT with its token
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := c.Notify(ctx, "example.com/config-reloaded", map[string]string{"generation": "4"})
	if err != nil {
		log.Fatal(err) // a *client.Error says why the agent refused it, and its status
	}
	fmt.Println("recorded notice", e.ID)

	checks, err := c.Checks(ctx, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, ch := range checks {
		if ch.Status == health.Pending || ch.Status == health.Fail {
			fmt.Println(ch.Name, ch.Status)
		}
	}
}

// An operator follows an agent's events, long-polling from the last id it
// has seen, and reacts to the checks that fail.
func ExampleClient_Events() {
	c, err := client.New("tcp://10.0.0.7:8559", "TOKEN")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	var after uint64
	for {
		evs, err := c.Events(ctx, after, 30*time.Second)
		if err != nil {
			log.Fatal(err)
		}
		for _, e := range evs {
			if e.Type == health.EventCheckFailed {
				fmt.Printf("%s failed: %s\n", e.Check, e.Output)
			}
			after = e.ID
		}
	}
}
