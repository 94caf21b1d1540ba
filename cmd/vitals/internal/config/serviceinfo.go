package config

import (
	"os"

	"github.com/vitals-dev/vitals/health"
)

// serviceInfoFields are the fields of the service-info: block, read into s,
// which holds their defaults (defaults: service-id is the host's name).
func serviceInfoFields(s *health.ServiceInfo) []Field {
	return []Field{
		{Key: "service-id", Value: written(&s.ServiceID), Default: "the host's name", Described: true,
			Doc: "serviceId: what tells the service from others, such as its name. By default the host's name, which in a pod is the pod's, so that the answers of replicas say which one answered; \"\" leaves it out."},
		{Key: "version", Value: written(&s.Version),
			Doc: "version: the public version of the service, its API's, which changes only when its interface does, such as \"2\"."},
		{Key: "release-id", Value: written(&s.ReleaseID),
			Doc: "releaseId: the release of the service's implementation, which changes with every build or deploy, such as 1.4.2 or ${GIT_COMMIT}."},
	}
}

// hostname is the default service-id: the host's name, which in a pod is
// the pod's; "" when the system says none.
func hostname() string {
	h, _ := os.Hostname()
	return h
}
