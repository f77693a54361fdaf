// Package clientthrottle applies a client's QPS and burst limit in its
// HTTP transport instead of in client-go's rest.Request.
//
// client-go's request path builds the request URL (twice once a wait is
// longer than 50 ms, for log arguments evaluated even when the log level
// is off) and a URL template for the rate-limiter latency metric, on every
// request. A controller manager at its default 20 QPS waits on nearly
// every request, and that was about 3% of kcm's CPU. The transport sees the
// same requests (every HTTP attempt, retries included) and waits on the
// same token bucket; the metric keeps its name and labels (verb, host) and
// the logs their messages, levels and throttling.
package clientthrottle
