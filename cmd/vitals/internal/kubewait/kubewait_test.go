package kubewait

import (
	"strings"
	"testing"
)

func TestATargetNamesAnObjectOrTheirSelectorsPods(t *testing.T) {
	tests := []struct {
		target, kind, name, selector string
	}{
		{"k8s://deployment/stowaway", "deployment", "stowaway", ""},
		{"k8s://deploy/stowaway", "deployment", "stowaway", ""},
		{"k8s://Deployments/stowaway", "deployment", "stowaway", ""},
		{"k8s://statefulset/db", "statefulset", "db", ""},
		{"k8s://sts/db", "statefulset", "db", ""},
		{"k8s://daemonset/node-agent", "daemonset", "node-agent", ""},
		{"k8s://ds/node-agent", "daemonset", "node-agent", ""},
		{"k8s://job/migrate.v2", "job", "migrate.v2", ""},
		{"k8s://pod/web-0", "pod", "web-0", ""},
		{"k8s://pods?selector=app%3Dstowaway", "pod", "", "app=stowaway"},
		{"k8s://pods?selector=app=stowaway", "pod", "", "app=stowaway"},
		{"k8s://pods?selector=app%3Dweb%2Ctier%21%3Dcache", "pod", "", "app=web,tier!=cache"},
		{"K8S://pod?selector=app%20in%20(a%2Cb)", "pod", "", "app in (a,b)"},
	}
	for _, tt := range tests {
		got, err := parse(tt.target)
		if err != nil {
			t.Errorf("%s: %v", tt.target, err)
			continue
		}
		if got.kind.name != tt.kind || got.name != tt.name || got.selector != tt.selector {
			t.Errorf("%s: kind %s, name %q, selector %q; want %s, %q, %q", tt.target, got.kind.name, got.name, got.selector, tt.kind, tt.name, tt.selector)
		}
	}
}

func TestABadTargetSaysWhatIsWrongAndHowToWriteIt(t *testing.T) {
	for target, want := range map[string]string{
		"k8s://deploymnt/api":                     `target "k8s://deploymnt/api": unknown kind "deploymnt": use deployment, statefulset, daemonset, job or pod (k8s://KIND/NAME), or k8s://pods?selector=SELECTOR`,
		"k8s://service/api":                       `unknown kind "service"`,
		"k8s:///api":                              `target "k8s:///api" names no kind: write k8s://KIND/NAME`,
		"k8s://deployment":                        `target "k8s://deployment" names no deployment: write k8s://deployment/NAME`,
		"k8s://job/":                              `target "k8s://job/" names no job: write k8s://job/NAME`,
		"k8s://pods":                              `target "k8s://pods" names no pod: write k8s://pod/NAME, or k8s://pods?selector=SELECTOR`,
		"k8s://deployment/shop/api":               `target "k8s://deployment/shop/api": write k8s://deployment/NAME; the namespace is --namespace (-n)`,
		"k8s://deployment/Api_1":                  `target "k8s://deployment/Api_1": name "Api_1": a lowercase RFC 1123 subdomain must consist of`,
		"k8s://deployment:8080/api":               `target "k8s://deployment:8080/api": write k8s://KIND/NAME`,
		"k8s://deployment/api?selector=app%3Dapi": `a selector selects pods: k8s://pods?selector=SELECTOR`,
		"k8s://pod/web-0?selector=app%3Dweb":      `give a pod's name or a selector, not both`,
		"k8s://pods?selector=":                    `the selector is empty; it would match every pod`,
		"k8s://pods?selector=a%3Db&selector=c":    `give one selector; join requirements with a comma`,
		"k8s://pods?label=app%3Dweb":              `unknown parameter "label": the one parameter is selector`,
		"k8s://pods?selector=app%3D%3D%3Dweb":     `target "k8s://pods?selector=app%3D%3D%3Dweb": selector "app===web": `,
		"k8s://pods?selector=app%20in%20(a":       `selector "app in (a": `,
	} {
		_, err := parse(target)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant an error with %q", target, err, want)
		}
	}
}

func TestATargetSaysItselfAsKubectlWouldBeTold(t *testing.T) {
	for target, want := range map[string]string{
		"k8s://deploy/api":              "k8s deployment/api -n shop",
		"k8s://pods?selector=app%3Dapi": "k8s pods -l app=api -n shop",
	} {
		tg, err := parse(target)
		if err != nil {
			t.Fatal(err)
		}
		tg.namespace = "shop"
		if got := tg.String(); got != want {
			t.Errorf("%s: %q, want %q", target, got, want)
		}
	}
}
