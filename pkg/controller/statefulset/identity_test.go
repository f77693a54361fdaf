package statefulset

import (
	"regexp"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestParentAndOrdinal checks the parser against upstream's regular
// expression.
func TestParentAndOrdinal(t *testing.T) {
	upstreamRE := regexp.MustCompile("(.*)-([0-9]+)$")
	upstream := func(name string) (string, int) {
		m := upstreamRE.FindStringSubmatch(name)
		if len(m) < 3 {
			return "", -1
		}
		ordinal := -1
		if i, err := strconv.ParseInt(m[2], 10, 32); err == nil {
			ordinal = int(i)
		}
		return m[1], ordinal
	}
	for _, name := range []string{
		"web-0", "web-12", "a-b-3", "web", "web-", "-5", "web-1a", "web-1-", "web-01", "web-99999999999",
		"web-2147483647", "web-2147483648", "", "-", "a--1", "web-abc-4",
	} {
		p, o := parentAndOrdinal(&v1.Pod{ObjectMeta: metaName(name)})
		wp, wo := upstream(name)
		if p != wp || o != wo {
			t.Errorf("%q: (%q, %d), upstream (%q, %d)", name, p, o, wp, wo)
		}
	}
}

func metaName(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
