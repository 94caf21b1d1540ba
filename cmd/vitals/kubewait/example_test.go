package kubewait_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"k8s.io/client-go/rest"

	"github.com/vitals-dev/vitals/cmd/vitals/kubewait"
)

// An operator waits for the Deployment it made to roll out, and for its one
// pod, whose name it needs: Gefyra's operator and its Stowaway, without a
// polling loop or a count of iterations for a timeout. A rollout past its
// progress deadline ends the wait at once, with its reason.
func Example() {
	config, err := rest.InClusterConfig() // or controller-runtime's ctrl.GetConfigOrDie()
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ready, err := kubewait.Wait(ctx, config,
		kubewait.Target{Resource: "deployment", Namespace: "gefyra", Name: "gefyra-stowaway"},
		kubewait.Target{Resource: "pods", Namespace: "gefyra", Selector: "app=stowaway", Count: 1})
	if err != nil {
		log.Fatalf("Stowaway is not ready: %v", err) // which target, and why
	}
	log.Printf("Stowaway ready: pod %s", ready[1].Names[0])
}

// A target of any resource, by its condition, as vitals wait takes it.
func ExampleParse() {
	t, err := kubewait.Parse("k8s://certificates.cert-manager.io/web?condition=Ready")
	if err != nil {
		log.Fatal(err)
	}
	t.Namespace = "shop"
	fmt.Println(t)
	// Output: k8s certificates.cert-manager.io/web -n shop --for=condition=Ready
}

// Watch says what it finds at each change, for a log.
func ExampleWatch() {
	config, err := rest.InClusterConfig()
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	target := kubewait.Target{Resource: "job", Namespace: "shop", Name: "migrate"}
	_, err = kubewait.Watch(ctx, config, target, func(r kubewait.Result) {
		log.Printf("%s: %s", target, r.Message) // Waiting for job "migrate" to complete: 0 of 1 succeeded, 1 active, 0 failed...
	})
	if err != nil {
		log.Fatal(err)
	}
}
