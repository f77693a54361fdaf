package framework

import (
	"net/http"

	"k8s.io/client-go/rest"
)

// Observed returns a copy of cfg whose every request is first passed to
// observe (which must not keep it), e.g. to count a controller's writes.
func Observed(cfg *rest.Config, observe func(*http.Request)) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			observe(r)
			return rt.RoundTrip(r)
		})
	})
	return c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
