package parity

import (
	"fmt"
	"regexp"
	"time"
)

// timeRefRE matches a time relative to the moment an object is applied or
// patched: {{now}}, {{now +30s}}, {{now -1h}} (a Go duration). It lets a
// scenario write an expiration that passes while the scenario runs, such as
// a bootstrap token's.
var timeRefRE = regexp.MustCompile(`\{\{now(?: ([+-][0-9a-z.]+))?\}\}`)

// substituteTimes replaces every time reference in a marshalled object or
// patch by now plus its offset, in RFC 3339 (UTC, whole seconds).
func substituteTimes(body []byte, now time.Time) ([]byte, error) {
	var err error
	out := timeRefRE.ReplaceAllFunc(body, func(m []byte) []byte {
		g := timeRefRE.FindSubmatch(m)
		var d time.Duration
		if len(g[1]) > 0 {
			var perr error
			if d, perr = time.ParseDuration(string(g[1])); perr != nil && err == nil {
				err = fmt.Errorf("time reference %s: %w", m, perr)
			}
		}
		return []byte(now.Add(d).UTC().Format(time.RFC3339))
	})
	return out, err
}
