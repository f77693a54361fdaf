// Package metricsapi is a small aggregated API server for tests: it serves
// metrics.k8s.io/v1beta1 (PodMetrics), custom.metrics.k8s.io/v1beta2 and
// external.metrics.k8s.io/v1beta1 with values the test sets, over HTTPS on
// 127.0.0.1, and registers itself with a kube-apiserver by APIService, so
// that controllers reach it through the aggregator as they reach
// metrics-server or a metrics adapter in a real cluster.
//
//	srv, err := metricsapi.Start(ctx, metricsapi.Options{Pods: client})
//	err = srv.Register(ctx, restConfig)  // Service + three APIServices, waits until Available
//	srv.Set(metricsapi.Values{Usage: []metricsapi.Usage{{Namespace: "ns", Selector: "app=web", Resources: cpu500m}}})
//
// It is a plain HTTPS handler, not a generic apiserver: it answers the
// aggregated paths (legacy discovery of each group version and the
// metrics) and records the user the aggregator's X-Remote-User header
// names. With Options.ClientCA (the front-proxy CA) it requires the
// aggregator's client certificate, as a delegating server would.
//
// Resource usage and pods metrics are reported for the Running pods the
// query's label selector selects, listed through Options.Pods; a pod no
// value matches has no metric (missing, as metrics-server leaves out pods
// it has no sample for). Timestamps are the time of the request and the
// window is Options.Window (0 by default: a sample never predates a pod's
// readiness, so the HPA's CPU initialization rule does not depend on
// timing).
package metricsapi
