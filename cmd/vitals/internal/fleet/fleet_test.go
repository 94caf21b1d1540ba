package fleet

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// What the caches keep answers client-go as a stored object must: its key
// and its resourceVersion (meta.Accessor), as a runtime.Object; and the
// transforms give back what they made already, as client-go's streaming
// list hands it to them twice.
func TestTheCachedObjectsAnswerClientGo(t *testing.T) {
	f := &Fleet{c: Config{Rows: Options{Condition: "vitals.dev/ready", PodPort: "8558"}}}
	p := pod("shop/web", "False", false, map[string]string{"app": "web"})
	p.ResourceVersion = "41"
	e := ev("shop/web", "CheckFailed", `Readiness check "db" failed: refused`, 2, 1)
	e.Namespace, e.Name, e.ResourceVersion = "shop", "web.1", "42"
	for _, tc := range []struct {
		in        runtime.Object
		transform cache.TransformFunc
		key, rv   string
	}{
		{p, f.cachePod, "shop/web", "41"},
		{e, f.cacheEvent, "shop/web.1", "42"},
	} {
		kept, err := tc.transform(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := tc.transform(kept); again != kept {
			t.Errorf("%T transformed again: %v, want it as it was", kept, again)
		}
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(kept)
		m, merr := meta.Accessor(kept)
		if err != nil || merr != nil || key != tc.key || m.GetResourceVersion() != tc.rv {
			t.Errorf("%T: key %q (%v), resourceVersion %v (%v); want %q, %q", kept, key, err, m, merr, tc.key, tc.rv)
		}
		o, ok := kept.(runtime.Object)
		if !ok {
			t.Fatalf("%T is no runtime.Object", kept)
		}
		if c := o.DeepCopyObject(); c == o {
			t.Errorf("%T's copy is itself", kept)
		}
	}
	kept, _ := f.cachePod(p)
	c := kept.(*cachedPod).DeepCopyObject().(*cachedPod)
	c.row.Labels["app"], c.row.Condition.Status = "changed", "True"
	if r := kept.(*cachedPod).row; r.Labels["app"] != "web" || r.Condition.Status != "False" {
		t.Errorf("a copy's change reached the cached pod: %+v", r)
	}
}
