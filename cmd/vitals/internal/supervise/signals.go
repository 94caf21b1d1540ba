package supervise

import (
	"os"
	"os/signal"
	"syscall"
)

// Forwarded are the signals vitals passes on to the workload as they come.
var Forwarded = []os.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGQUIT, syscall.SIGWINCH}

// Forward passes every Forwarded signal vitals receives to the workload that
// runs at the time, until the returned function is called.
func (s *Supervisor) Forward() (stop func()) {
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, Forwarded...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				s.Signal(sig.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
