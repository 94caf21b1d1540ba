package kubewait

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// ErrUnknownResource is what the error of a target whose resource the API
// server does not serve is (errors.Is): a typo, or a custom resource whose
// CustomResourceDefinition is not installed. The wait for it ends at once,
// as kubectl wait's does.
var ErrUnknownResource = errors.New("the API server does not serve the resource")

// unknownResource says which resource, and what the API server serves
// instead.
type unknownResource struct{ why string }

func (e unknownResource) Error() string        { return e.why }
func (e unknownResource) Is(target error) bool { return target == ErrUnknownResource }

// mapping is where the API server keeps a resource, and what its objects
// are.
type mapping struct {
	gvr        schema.GroupVersionResource
	kind       string // Certificate
	namespaced bool
}

// singular and plural say the objects in messages: certificate,
// certificates.
func (m mapping) singular() string { return strings.ToLower(m.kind) }
func (m mapping) plural() string   { return m.gvr.Resource }

func (k *kind) mapping() mapping {
	return mapping{gvr: k.gvk.GroupVersion().WithResource(k.plural), kind: k.gvk.Kind, namespaced: true}
}

// discover finds where the API server serves a resource that the kinds
// table does not have, through its discovery documents as kubectl finds it
// there: a resource of an API group (RESOURCE.GROUP) in the group's
// preferred version, else in the first other version that serves it; a
// resource without a group in the core group, v1. The resource may be
// named by its plural, its singular, its kind or a short name, in any case.
//
// It reads the documents itself, rather than through client-go's discovery
// client and RESTMapper: those import client-go's typed clientset's scheme
// (see the package's doc). A target needs two requests at most, once per
// wait.
func discover(ctx context.Context, rc rest.Interface, resource string) (mapping, error) {
	name, group, _ := strings.Cut(strings.ToLower(resource), ".")
	paths := [][]string{{"/api", "v1"}}
	in := "the core API group (v1)"
	if group != "" {
		in = fmt.Sprintf("API group %q", group)
		var g metav1.APIGroup
		if err := get(ctx, rc, &g, "/apis", group); err != nil {
			if apierrors.IsNotFound(err) {
				return mapping{}, unknownResource{fmt.Sprintf("the API server has no %s: is its CustomResourceDefinition installed?", in)}
			}
			return mapping{}, err
		}
		paths = [][]string{{"/apis", g.PreferredVersion.GroupVersion}}
		for _, v := range g.Versions {
			if v.GroupVersion != g.PreferredVersion.GroupVersion {
				paths = append(paths, []string{"/apis", v.GroupVersion})
			}
		}
	}
	var served []string
	for _, path := range paths {
		var list metav1.APIResourceList
		if err := get(ctx, rc, &list, path...); err != nil {
			return mapping{}, err
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return mapping{}, fmt.Errorf("the API server's discovery of %s: %w", strings.Join(path, "/"), err)
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") { // a subresource: deployments/scale
				continue
			}
			if r.Name == name || r.SingularName == name || strings.EqualFold(r.Kind, name) || slices.Contains(r.ShortNames, name) {
				return mapping{gvr: gv.WithResource(r.Name), kind: r.Kind, namespaced: r.Namespaced}, nil
			}
			if !slices.Contains(served, r.Name) {
				served = append(served, r.Name)
			}
		}
	}
	slices.Sort(served)
	has := strings.Join(served, ", ")
	if has == "" {
		has = "none"
	}
	return mapping{}, unknownResource{fmt.Sprintf("the API server has no resource %q in %s, which has %s", name, in, has)}
}

// get reads one discovery document as JSON (the dynamic client's REST
// client may prefer CBOR).
func get(ctx context.Context, rc rest.Interface, into any, path ...string) error {
	body, err := rc.Get().AbsPath(path...).SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("the API server's discovery at %s: %w", strings.Join(path, "/"), err)
	}
	return nil
}
