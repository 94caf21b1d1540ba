package kubewait

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/kube/kubetest"
	"github.com/vitals-dev/vitals/internal/kubeenv"
)

// A custom resource by its condition: the wait goes on while the condition
// is absent and while it is False, and ends when it is True.
func TestWatchACustomResourceUntilItsConditionIsTrue(t *testing.T) {
	f := newFixture(t, kubeenv.SharedFor(t))
	kubetest.InstallCertificates(t, f.env.Kubeconfig)
	kubetest.CreateCertificate(t, f.env.Kubeconfig, f.namespace, "web")
	w := startWatch(t, f.target(t, "k8s://certificates.cert-manager.io/web?condition=Ready"))
	r := w.next(t, `Waiting for certificate "web" condition Ready=True: no Ready condition yet`)
	want := Result{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Namespace: f.namespace, Name: "web",
		Message: `Waiting for certificate "web" condition Ready=True: no Ready condition yet`}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("report %+v, want %+v", r, want)
	}
	kubetest.CertificateReady(t, f.env.Kubeconfig, f.namespace, "web", "False", "DoesNotExist", "Issuing certificate as Secret does not exist")
	w.next(t, `Waiting for certificate "web" condition Ready=True: it is False (DoesNotExist: Issuing certificate as Secret does not exist)`)
	if w.ended.Load() {
		t.Fatal("the watch ended with the condition False")
	}
	kubetest.CertificateReady(t, f.env.Kubeconfig, f.namespace, "web", "True", "Ready", "Certificate is up to date and has not expired")
	if err := w.end(t); err != nil {
		t.Fatalf("the watch returned %v, want nil", err)
	}
	want.Ready, want.Message = true, `certificate "web" condition met: Ready=True (Ready: Certificate is up to date and has not expired)`
	if !reflect.DeepEqual(w.result, want) {
		t.Fatalf("the watch returned %+v, want %+v", w.result, want)
	}
}

// A cluster-scoped resource found through discovery, named by its kind:
// its Result has no namespace. (Its CRD is Established by the API server
// itself.)
func TestWaitForAClusterScopedObjectByItsCondition(t *testing.T) {
	f := newFixture(t, kubeenv.SharedFor(t))
	kubetest.InstallCertificates(t, f.env.Kubeconfig)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a guard only
	defer cancel()
	got, err := Wait(ctx, f.config(t), Target{Resource: "CustomResourceDefinition.apiextensions.k8s.io", Name: "certificates.cert-manager.io",
		Namespace: f.namespace, Condition: "established"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "certificates.cert-manager.io", Ready: true,
		Message: `customresourcedefinition "certificates.cert-manager.io" condition met: Established=True (InitialNamesAccepted: the initial names have been accepted)`}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Wait returned %+v\nwant %+v", got, want)
	}
}

// A resource that the API server does not serve ends the wait at once,
// saying what it serves instead; so does an API group it does not have.
func TestWaitForAResourceTheAPIServerDoesNotServeFailsAtOnce(t *testing.T) {
	f := newFixture(t, kubeenv.SharedFor(t))
	kubetest.InstallCertificates(t, f.env.Kubeconfig)
	config := f.config(t)
	for target, want := range map[string]string{
		"k8s://certificatess.cert-manager.io/web?condition=Ready": `the API server has no resource "certificatess" in API group "cert-manager.io", which has certificates`,
		"k8s://widgets.example.com/a?condition=Ready":             `the API server has no API group "example.com": is its CustomResourceDefinition installed?`,
		"k8s://widgets/a?condition=Ready":                         `the API server has no resource "widgets" in the core API group (v1), which has bindings, componentstatuses, configmaps,`,
	} {
		tg, err := Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		tg.Namespace = f.namespace
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a guard only
		_, err = Wait(ctx, config, tg)
		if !errors.Is(err, ErrUnknownResource) || ctx.Err() != nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant at once an error with %q", target, err, want)
		}
		cancel()
		if _, err := Look(context.Background(), config, tg); !errors.Is(err, ErrUnknownResource) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Look: %v\nwant an error with %q", target, err, want)
		}
	}
}

// The Gefyra operator's wait: the Stowaway pod, exactly one, and its name.
// Two ready pods do not pass it (a rollout's old and new, say); once one is
// gone, the other's name is what Wait returns.
func TestWaitForExactlyOnePodReturnsItsName(t *testing.T) {
	f := newFixture(t, kubeenv.SharedFor(t))
	stowaway := map[string]string{"app": "stowaway"}
	kubetest.CreatePod(t, f.cs, f.namespace, "stowaway-a", stowaway)
	kubetest.CreatePod(t, f.cs, f.namespace, "stowaway-b", stowaway)
	kubetest.CreatePod(t, f.cs, f.namespace, "operator", map[string]string{"app": "operator"}) // not matched
	kubetest.PodReady(t, f.cs, f.namespace, "stowaway-a")
	kubetest.PodReady(t, f.cs, f.namespace, "stowaway-b")
	one := Target{Resource: "pods", Namespace: f.namespace, Selector: "app=stowaway", Count: 1}
	all := Target{Resource: "pods", Namespace: f.namespace, Selector: "app=stowaway"}

	// Every pod of the selector: both.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a guard only
	defer cancel()
	got, err := Wait(ctx, f.config(t), all)
	if err != nil || len(got) != 1 || !slices.Equal(got[0].Names, []string{"stowaway-a", "stowaway-b"}) || !got[0].Ready {
		t.Fatalf("Wait for every pod: %+v, %v; want both pods, ready", got, err)
	}

	// Exactly one: not while there are two, until the end of the wait.
	short, stop := context.WithTimeout(context.Background(), 3*time.Second)
	defer stop()
	got, err = Wait(short, f.config(t), one)
	const two = "2 pods match app=stowaway, want exactly 1: stowaway-a, stowaway-b"
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != "context deadline exceeded; not ready: k8s pods -l app=stowaway -n "+f.namespace+" (exactly 1): "+two {
		t.Fatalf("Wait for exactly one of two: %v", err)
	}
	want := Result{APIVersion: "v1", Kind: "Pod", Namespace: f.namespace, Selector: "app=stowaway", Names: []string{"stowaway-a", "stowaway-b"}, Message: two}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("Wait for exactly one of two returned %+v\nwant %+v", got, want)
	}

	w := startWatch(t, f.target(t, "k8s://pods?selector=app%3Dstowaway&count=1"))
	w.next(t, two)
	if err := f.cs.CoreV1().Pods(f.namespace).Delete(context.Background(), "stowaway-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.end(t); err != nil || !slices.Equal(w.result.Names, []string{"stowaway-b"}) || w.result.Message != "1 of 1 pods ready" {
		t.Fatalf("the watch returned %+v, %v; want stowaway-b", w.result, err)
	}
	got, err = Wait(ctx, f.config(t), one)
	if err != nil || len(got) != 1 || !slices.Equal(got[0].Names, []string{"stowaway-b"}) {
		t.Fatalf("Wait for exactly one of one: %+v, %v", got, err)
	}
}

// The Gefyra operator's wait through a rollout of its Deployment: the old
// pod is ready and alone before the rollout has finished, so the pods
// target is ready first; then the new pod comes, and two match. Wait goes
// on, although each target has been ready, until both are at the same
// time, once the old pod is gone: it returns the new pod, never the old.
func TestWaitReturnsOnceEveryTargetIsReadyAtOnceWithWhatIsThereThen(t *testing.T) {
	f := newFixture(t, kubeenv.SharedFor(t))
	stowaway := map[string]string{"app": "stowaway"}
	f.createDeployment(t, "stowaway", 1)
	f.rollout(t, "stowaway", 1, 0, 1) // the old pod's replica still serves
	kubetest.CreatePod(t, f.cs, f.namespace, "stowaway-old", stowaway)
	kubetest.PodReady(t, f.cs, f.namespace, "stowaway-old")
	w := startWatch(t, f.target(t, "k8s://deployment/stowaway"), f.target(t, "k8s://pods?selector=app%3Dstowaway&count=1"))
	w.next(t, "1 of 1 pods ready") // the old pod: the pods target is ready

	kubetest.CreatePod(t, f.cs, f.namespace, "stowaway-new", stowaway)
	kubetest.PodReady(t, f.cs, f.namespace, "stowaway-new")
	w.next(t, "2 pods match app=stowaway, want exactly 1: stowaway-new, stowaway-old")
	f.rollout(t, "stowaway", 1, 1, 1)
	w.next(t, `deployment "stowaway" successfully rolled out`)
	if w.ended.Load() {
		t.Fatalf("Wait returned while two pods match: %+v", w.results)
	}

	if err := f.cs.CoreV1().Pods(f.namespace).Delete(context.Background(), "stowaway-old", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.end(t); err != nil {
		t.Fatalf("Wait returned %v, want nil", err)
	}
	want := []Result{
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: f.namespace, Name: "stowaway", Ready: true,
			Message: `deployment "stowaway" successfully rolled out`},
		{APIVersion: "v1", Kind: "Pod", Namespace: f.namespace, Selector: "app=stowaway", Names: []string{"stowaway-new"}, Ready: true,
			Message: "1 of 1 pods ready"},
	}
	if !reflect.DeepEqual(w.results, want) {
		t.Fatalf("Wait returned %+v\nwant %+v", w.results, want)
	}
}
