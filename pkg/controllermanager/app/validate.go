package app

import (
	"errors"
	"fmt"
	"time"

	cmconfig "k8s.io/controller-manager/config"
)

// ValidateGeneric checks what upstream leaves to runtime in the generic
// section (a fatal log from client-go's leader elector, a rate limiter
// that never fires), so that both commands refuse it at startup, naming
// the flag.
func ValidateGeneric(g *cmconfig.GenericControllerManagerConfiguration) []error {
	var errs []error
	cc := g.ClientConnection
	if cc.QPS < 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps=%v: must not be negative", cc.QPS))
	}
	if cc.Burst < 0 {
		errs = append(errs, fmt.Errorf("--kube-api-burst=%d: must not be negative", cc.Burst))
	}
	if g.MinResyncPeriod.Duration <= 0 {
		errs = append(errs, fmt.Errorf("--min-resync-period=%s: must be greater than zero", g.MinResyncPeriod.Duration))
	}
	if le := g.LeaderElection; le.LeaderElect {
		switch {
		case le.LeaseDuration.Duration <= le.RenewDeadline.Duration:
			errs = append(errs, fmt.Errorf("--leader-elect-lease-duration=%s must be greater than --leader-elect-renew-deadline=%s", le.LeaseDuration.Duration, le.RenewDeadline.Duration))
		case le.RenewDeadline.Duration <= time.Duration(1.2*float64(le.RetryPeriod.Duration)):
			errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline=%s must be greater than 1.2 x --leader-elect-retry-period=%s", le.RenewDeadline.Duration, le.RetryPeriod.Duration))
		}
		if le.RetryPeriod.Duration <= 0 {
			errs = append(errs, fmt.Errorf("--leader-elect-retry-period=%s: must be greater than zero", le.RetryPeriod.Duration))
		}
		if le.ResourceName == "" || le.ResourceNamespace == "" {
			errs = append(errs, errors.New("--leader-elect-resource-name and --leader-elect-resource-namespace must not be empty"))
		}
	}
	return errs
}
