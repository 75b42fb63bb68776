// Package promreg registers Prometheus collectors so that two components of
// one process (two servers, two sweepers, a restart within a test) share the
// counters of a registry instead of failing on the second registration.
package promreg

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg, or returns the collector of the same
// description registered before. It fails when another kind of collector
// holds the name.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
		return c, fmt.Errorf("register metrics: another kind of collector uses the name: %w", err)
	}
	return c, fmt.Errorf("register metrics: %w", err)
}
