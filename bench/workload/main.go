// Command workload is the workload of bench's P4: a process that does nothing
// until it is told to stop, and then notes when it was told.
//
//	workload FILE
//
// On SIGTERM it appends "PID UNIXNANO" (its pid, and the wall time at which
// the signal reached it) as a line of FILE and exits 0. vitals run supervises
// it, and sends that SIGTERM when a check with on-failure: restart fails.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: workload FILE")
		os.Exit(2)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	<-term
	at := time.Now()
	f, err := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err == nil {
		_, err = fmt.Fprintf(f, "%d %d\n", os.Getpid(), at.UnixNano())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(1)
	}
}
