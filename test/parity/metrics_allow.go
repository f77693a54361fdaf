package parity

// MetricsAllowlist names the metric families whose difference between
// upstream's /metrics and kcm's is expected, each with the reason. Every
// other difference fails the metrics check (MetricsReport). None is
// expected today.
var MetricsAllowlist = map[string]string{}
