package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Until polls cond until it reports true, failing the test once timeout
// passed with what and the last thing cond saw (its second result, shown
// with %v unless nil), so that a failure says how far the test got.
func Until(t testing.TB, timeout time.Duration, what string, cond func() (bool, any)) {
	t.Helper()
	var last any
	for deadline := time.Now().Add(timeout); ; time.Sleep(pollInterval) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
		if time.Now().After(deadline) {
			if last == nil {
				t.Fatalf("%s: not within %v", what, timeout)
			}
			t.Fatalf("%s: not within %v; last saw %v", what, timeout, last)
		}
	}
}

// WaitFor polls the named object until cond holds for it, and returns it.
// Errors, such as NotFound until the object exists, are polled through;
// after timeout the test fails with what and the object's last status, or
// the last error.
func WaitFor[T any](t testing.TB, timeout time.Duration, c Getter[T], name, what string, cond func(T) bool) T {
	t.Helper()
	var obj T
	Until(t, timeout, what, func() (bool, any) {
		got, err := c.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		obj = got
		return cond(got), statusOf(got)
	})
	return obj
}

// statusOf renders the Status field of an API object as JSON, or the
// value itself if it has none.
func statusOf(obj any) string {
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct {
		if s := v.FieldByName("Status"); s.IsValid() && s.CanInterface() {
			if b, err := json.Marshal(s.Interface()); err == nil {
				return "status " + string(b)
			}
		}
	}
	return fmt.Sprintf("%+v", obj)
}

// WaitQuiet waits until count (of a controller's requests, typically
// counted through Observed) has not changed for quiet, and returns it;
// the test fails if that takes longer than timeout: a controller that
// hot-loops or keeps retrying never gets there.
func WaitQuiet(t testing.TB, timeout, quiet time.Duration, count func() int64) int64 {
	t.Helper()
	last, since := count(), time.Now()
	Until(t, timeout, fmt.Sprintf("no change for %v", quiet), func() (bool, any) {
		if n := count(); n != last {
			last, since = n, time.Now()
		}
		return time.Since(since) >= quiet, fmt.Sprintf("count %d, last changed %v ago", last, time.Since(since).Round(time.Millisecond))
	})
	return last
}
