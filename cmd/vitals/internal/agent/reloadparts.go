package agent

import (
	"context"

	"github.com/vitals-dev/vitals/cmd/vitals/internal/config"
	"github.com/vitals-dev/vitals/cmd/vitals/internal/kubereport"
	"github.com/vitals-dev/vitals/health"
)

// remade is what a reload makes of the running agent's parts for the new
// file, before anything changes: each nil or false where the part stays
// as it is.
type remade struct {
	front *front // the probe listener's, for details:, ui:, auth:, tls: or service-info:
	// details and info are what the status page shows from then on.
	details bool
	info    health.ServiceInfo
	// kube is the Kubernetes reporter's options, for kubernetes: (or
	// details:, which decides what its Events withhold); unkube turns it
	// off.
	kube   *kubereport.Options
	unkube bool
	// services are the new definitions of the services that changed.
	services map[*service]config.Service
}

// remake makes, for a plan of the running agent, the parts the plan
// changes: an error (a *ConfigError) when one cannot be, naming its key,
// and nothing made then.
func (r *run) remake(p plan, next *config.Config) (remade, error) {
	var out remade
	if p.changes("details") || p.changes("ui") || p.changes("auth") || p.changes("tls") || p.changes("service-info") {
		f, err := r.newFront(next)
		if err != nil {
			return remade{}, err
		}
		f.handler = r.probeHandler(f, next)
		out.front, out.details, out.info = f, next.Details != config.DetailsNone, next.ServiceInfo
	}
	if len(p.services) > 0 {
		fresh := services(next, r.opts.Command)
		out.services = map[*service]config.Service{}
		for _, name := range p.services {
			svc := serviceNamed(fresh, name).spec.Service
			if err := r.checkRunnable(next, svc); err != nil {
				return remade{}, err
			}
			out.services[serviceNamed(r.services, name)] = svc
		}
	}
	switch {
	case next.Kubernetes == nil:
		out.unkube = r.reporter != nil
	case p.changes("kubernetes") || (p.changes("details") && r.reporter != nil):
		o, err := kubernetesOptions(next, r.logger)
		if err != nil {
			return remade{}, &ConfigError{err}
		}
		o.Monitor, o.Logger = r.monitor, r.logger
		out.kube = &o
	}
	return out, nil
}

// apply puts what remake made in place of the parts it replaces. A new
// Kubernetes reporter reports from the event after the last one the old
// reporter reports, which finishes what it was handed on its own, within
// kubeGrace, so that no Event is written twice or missed; one turned on
// reports from the reload on.
func (r *run) apply(m remade) (restarted []string) {
	if m.front != nil {
		r.page.Show(m.details, m.info)
		r.front.Store(m.front)
	}
	for _, s := range r.services { // in their order
		svc, ok := m.services[s]
		if !ok {
			continue
		}
		sv := s.sv.Load()
		if sv == nil { // not started yet: it starts as the new file says
			s.spec.Service = svc
			continue
		}
		again, err := sv.Update(s.withNotify(svc))
		if err != nil { // remake looked for the command and the directory a moment ago
			r.logger.Warn("a reload could not change a service", "service", s.spec.Name, "err", err)
		}
		if again {
			restarted = append(restarted, s.spec.Name)
		}
	}
	if m.kube != nil || m.unkube {
		r.handOver(m.kube)
	}
	return restarted
}

// handOver replaces the Kubernetes reporter with one of o (nil: none). The
// new one reports from the event after the last one the old one reports;
// once started, the old one finishes what it was handed first (within
// kubeGrace), and only then does the new one start, so that no Event is
// written twice or missed, and the old one's last write of the condition
// is never written over a newer one's. Handovers wait for each other, in
// order. Before the reporter started, the old one has reported nothing: the
// new one reports from where it would have.
func (r *run) handOver(o *kubereport.Options) {
	old, after := r.reporter, r.monitor.LastEventID()
	var next *kubereport.Reporter
	switch {
	case old != nil && r.reporterStarted:
		after = old.Hand()
	case old != nil:
		old.Hand()
		after = r.reportAfter
	}
	r.reporter, r.reportAfter = nil, after
	if o != nil {
		o.After = after
		next = kubereport.New(*o)
		r.reporter, r.pod = next, o.Namespace+"/"+o.Pod
	}
	if !r.reporterStarted {
		return // startReporter starts the new one
	}
	prev, done := r.handedOver, make(chan struct{})
	r.handedOver = done
	r.retired.Go(func() {
		defer close(done)
		if prev != nil {
			<-prev // the old one starts there
		}
		if old != nil {
			ctx, cancel := context.WithTimeout(r.opts.Now, kubeGrace)
			defer cancel()
			if err := old.Stop(ctx); err != nil {
				r.logger.Warn("kubernetes: the reporter a reload replaced did not write everything", "err", err)
			}
		}
		if next != nil {
			next.Start()
		}
	})
}
