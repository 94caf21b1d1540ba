package kubewait

import (
	"strings"
	"testing"
)

func TestATargetNamesAnObjectOrTheObjectsOfASelector(t *testing.T) {
	tests := []struct {
		target string
		want   Target
		kind   string // the kind of the table it judges by; "" for none
	}{
		{"k8s://deployment/stowaway", Target{Resource: "deployment", Name: "stowaway"}, "deployment"},
		{"k8s://deploy/stowaway", Target{Resource: "deploy", Name: "stowaway"}, "deployment"},
		{"k8s://Deployments/stowaway", Target{Resource: "Deployments", Name: "stowaway"}, "deployment"},
		{"k8s://deployments.apps/stowaway", Target{Resource: "deployments.apps", Name: "stowaway"}, "deployment"},
		{"k8s://statefulset/db", Target{Resource: "statefulset", Name: "db"}, "statefulset"},
		{"k8s://sts/db", Target{Resource: "sts", Name: "db"}, "statefulset"},
		{"k8s://daemonset/node-agent", Target{Resource: "daemonset", Name: "node-agent"}, "daemonset"},
		{"k8s://ds/node-agent", Target{Resource: "ds", Name: "node-agent"}, "daemonset"},
		{"k8s://job/migrate.v2", Target{Resource: "job", Name: "migrate.v2"}, "job"},
		{"k8s://jobs.batch/migrate", Target{Resource: "jobs.batch", Name: "migrate"}, "job"},
		{"k8s://pod/web-0", Target{Resource: "pod", Name: "web-0"}, "pod"},
		{"k8s://pods?selector=app%3Dstowaway", Target{Resource: "pods", Selector: "app=stowaway"}, "pod"},
		{"k8s://pods?selector=app=stowaway", Target{Resource: "pods", Selector: "app=stowaway"}, "pod"},
		{"k8s://pods?selector=app%3Dstowaway&count=1", Target{Resource: "pods", Selector: "app=stowaway", Count: 1}, "pod"},
		{"k8s://pods?selector=app%3Dweb%2Ctier%21%3Dcache", Target{Resource: "pods", Selector: "app=web,tier!=cache"}, "pod"},
		{"K8S://pod?selector=app%20in%20(a%2Cb)", Target{Resource: "pod", Selector: "app in (a,b)"}, "pod"},
		{"k8s://certificates.cert-manager.io/web?condition=Ready", Target{Resource: "certificates.cert-manager.io", Name: "web", Condition: "Ready"}, ""},
		{"k8s://deployments.apps/api?condition=Available", Target{Resource: "deployments.apps", Name: "api", Condition: "Available"}, "deployment"},
		{"k8s://nodes/worker-1?condition=Ready=False", Target{Resource: "nodes", Name: "worker-1", Condition: "Ready=False"}, ""},
		{"k8s://certificates.cert-manager.io?selector=app%3Dweb&condition=Ready%3Dtrue&count=2",
			Target{Resource: "certificates.cert-manager.io", Selector: "app=web", Condition: "Ready=true", Count: 2}, ""},
	}
	for _, tt := range tests {
		got, err := Parse(tt.target)
		if err != nil {
			t.Errorf("%s: %v", tt.target, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.target, got, tt.want)
		}
		c, err := got.check()
		kind := ""
		if c.kind != nil {
			kind = c.kind.name
		}
		if err != nil || kind != tt.kind {
			t.Errorf("%s: judged as kind %q, want %q (%v)", tt.target, kind, tt.kind, err)
		}
	}
}

func TestABadTargetSaysWhatIsWrongAndHowToWriteIt(t *testing.T) {
	for target, want := range map[string]string{
		"k8s://deploymnt/api":         `target "k8s://deploymnt/api": unknown kind "deploymnt": use deployment, statefulset, daemonset, job or pod (k8s://KIND/NAME), or k8s://pods?selector=SELECTOR; any other resource with a condition (k8s://RESOURCE.GROUP/NAME?condition=Ready)`,
		"k8s://service/api":           `unknown kind "service"`,
		"k8s://deployments.batch/api": `unknown kind "deployments.batch"`,
		"k8s:///api":                  `target "k8s:///api" names no kind: write k8s://KIND/NAME`,
		"k8s://deployment":            `target "k8s://deployment" names no deployment: write k8s://deployment/NAME`,
		"k8s://job/":                  `target "k8s://job/" names no job: write k8s://job/NAME`,
		"k8s://pods":                  `target "k8s://pods" names no pod: write k8s://pod/NAME, or k8s://pods?selector=SELECTOR`,
		"k8s://certificates.cert-manager.io?condition=Ready": `target "k8s://certificates.cert-manager.io?condition=Ready" names no certificates.cert-manager.io: write k8s://certificates.cert-manager.io/NAME`,
		"k8s://deployment/shop/api":                          `target "k8s://deployment/shop/api": write k8s://deployment/NAME; the namespace is --namespace (-n)`,
		"k8s://deploy/shop/api":                              `target "k8s://deploy/shop/api": write k8s://deployment/NAME; the namespace is --namespace (-n)`,
		"k8s://deployment/Api_1":                             `target "k8s://deployment/Api_1": name "Api_1": a lowercase RFC 1123 subdomain must consist of`,
		"k8s://deployment:8080/api":                          `target "k8s://deployment:8080/api": write k8s://KIND/NAME`,
		"k8s://deployment/api?selector=app%3Dapi":            `a selector selects pods (k8s://pods?selector=SELECTOR), or the objects of any resource with a condition (k8s://deployment?selector=SELECTOR&condition=TYPE)`,
		"k8s://pod/web-0?selector=app%3Dweb":                 `give a pod's name or a selector, not both`,
		"k8s://nodes/a?selector=app%3Dweb&condition=Ready":   `give a name or a selector, not both`,
		"k8s://pods?selector=":                               `the selector is empty; it would match every pod`,
		"k8s://pods?selector=a%3Db&selector=c":               `give one selector; join requirements with a comma`,
		"k8s://pods?label=app%3Dweb":                         `unknown parameter "label": the parameters are selector, count and condition`,
		"k8s://pods?selector=app%3D%3D%3Dweb":                `target "k8s://pods?selector=app%3D%3D%3Dweb": selector "app===web": `,
		"k8s://pods?selector=app%20in%20(a":                  `selector "app in (a": `,
		"k8s://pods?selector=app%3Dweb&count=0":              `count "0": give a whole number of objects, 1 or more`,
		"k8s://pods?selector=app%3Dweb&count=one":            `count "one": give a whole number of objects, 1 or more`,
		"k8s://pod/web-0?count=1":                            `a count applies to a selector: k8s://pods?selector=SELECTOR&count=1`,
		"k8s://pod/web-0?condition=":                         `the condition is empty: give its type, as condition=Ready`,
		"k8s://pod/web-0?condition=%3DTrue":                  `condition "=True" names no type: write TYPE or TYPE=STATUS, as Ready or Ready=False`,
		"k8s://pod/web-0?condition=Ready=":                   `condition "Ready=" has no status after '='`,
		"k8s://pod/web-0?condition=a&condition=b":            `give one condition`,
		"k8s://cert_ificates.x.io/a?condition=Ready":         `resource "cert_ificates.x.io": write RESOURCE.GROUP, as certificates.cert-manager.io, or a resource of the core group, as nodes`,
	} {
		_, err := Parse(target)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant an error with %q", target, err, want)
		}
	}
}

// A target built as a struct is checked as a parsed one is, its namespace
// too.
func TestATargetBuiltAsAStructIsCheckedAlike(t *testing.T) {
	for _, tt := range []struct {
		target Target
		want   string
	}{
		{Target{Resource: "deployment", Name: "api", Namespace: "Shop_1"}, `: namespace "Shop_1": a lowercase RFC 1123 label`},
		{Target{Name: "api"}, " names no kind: give a resource, such as deployment"},
		{Target{Resource: "pods", Selector: "app=web", Count: -1}, ": count -1: give a whole number of objects, 1 or more"},
		{Target{Resource: "certificates.cert-manager.io", Name: "web"}, `: unknown kind "certificates.cert-manager.io"`},
	} {
		if _, err := tt.target.check(); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q…", tt.target, err, tt.want)
		}
	}
	if _, err := (Target{Resource: "pods", Selector: "app=web", Count: 1, Namespace: "gefyra"}).check(); err != nil {
		t.Errorf("a valid target: %v", err)
	}
}

func TestATargetSaysItselfAsKubectlWouldBeTold(t *testing.T) {
	for target, want := range map[string]string{
		"k8s://deploy/api":                                                       "k8s deployment/api -n shop",
		"k8s://pods?selector=app%3Dapi":                                          "k8s pods -l app=api -n shop",
		"k8s://pod?selector=app%3Dapi&count=1":                                   "k8s pods -l app=api -n shop (exactly 1)",
		"k8s://certificates.cert-manager.io/web?condition=Ready":                 "k8s certificates.cert-manager.io/web -n shop --for=condition=Ready",
		"k8s://deployments.apps?selector=tier%3Dfront&condition=Available=False": "k8s deployments -l tier=front -n shop --for=condition=Available=False",
	} {
		tg, err := Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		tg.Namespace = "shop"
		if got := tg.String(); got != want {
			t.Errorf("%s: %q, want %q", target, got, want)
		}
	}
	if got := (Target{Resource: "job", Name: "migrate"}).String(); got != "k8s job/migrate -n default" {
		t.Errorf("without a namespace: %q, want the default namespace", got)
	}
}
