package app

import (
	// Registers apiserver_cel_compilation_duration_seconds and
	// apiserver_cel_evaluation_duration_seconds as the library does in
	// upstream's binary, which links it in the same way. Nothing in a
	// controller manager observes them, upstream's included.
	_ "k8s.io/apiserver/pkg/cel/metrics"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Upstream's binary links k8s.io/kube-aggregator/pkg/apiserver, whose init
// registers these two counters of the aggregator's proxy. A controller
// manager never proxies through the aggregator, so they stay 0 upstream
// and here; kcm does not link kube-aggregator (not one of its
// dependencies) and declares them as that package does, so /metrics has
// the same families.
var (
	aggregatorX509MissingSAN = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "apiserver",
		Subsystem: "kube_aggregator",
		Name:      "x509_missing_san_total",
		Help: "Counts the number of requests to servers missing SAN extension " +
			"in their serving certificate OR the number of connection failures " +
			"due to the lack of x509 certificate SAN extension missing " +
			"(either/or, based on the runtime environment)",
		StabilityLevel: metrics.ALPHA,
	})
	aggregatorX509InsecureSHA1 = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: "apiserver",
		Subsystem: "kube_aggregator",
		Name:      "x509_insecure_sha1_total",
		Help: "Counts the number of requests to servers with insecure SHA1 signatures " +
			"in their serving certificate OR the number of connection failures " +
			"due to the insecure SHA1 signatures (either/or, based on the runtime environment)",
		StabilityLevel: metrics.ALPHA,
	})
)

func init() {
	legacyregistry.MustRegister(aggregatorX509MissingSAN, aggregatorX509InsecureSHA1)
}
