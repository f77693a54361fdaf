package parity

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// randomAlphabet is what the apiserver's generateName suffixes (and
// rand.String) are made of: no vowels, no 0, 1 or 3.
const randomAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// statefulSetPodNameLabel is the label a StatefulSet gives each pod, with
// the pod's own (stable) name.
const statefulSetPodNameLabel = "statefulset.kubernetes.io/pod-name"

// randomSuffixLen is the length of a generateName suffix.
const randomSuffixLen = 5

// maxGeneratedBase is how much of a generateName the apiserver keeps
// before the suffix: a generated name is at most 63 characters.
const maxGeneratedBase = 63 - randomSuffixLen

// generatedBase is the part of a generateName a generated name starts
// with: the apiserver cuts a longer one to maxGeneratedBase characters.
func generatedBase(prefix string) string {
	if len(prefix) > maxGeneratedBase {
		return prefix[:maxGeneratedBase]
	}
	return prefix
}

// generatedNameRE matches a name made of a prefix ending in "-" and a
// random suffix.
var generatedNameRE = regexp.MustCompile(`^(.+-)[` + randomAlphabet + `]{` + strconv.Itoa(randomSuffixLen) + `}$`)

// generated is one name that carries a random suffix.
type generated struct {
	name, prefix string
	// created and tie order the names of one prefix: creation time, then
	// what the object holds with all generated names blanked, then name.
	created, tie string
}

// genNames collects generated names and numbers them per prefix in
// creation order.
type genNames struct {
	byName map[string]*generated
	// scheduled are the names of CronJobs' Jobs (cronjobs.go).
	scheduled *scheduledNames
}

func newGenNames() *genNames { return &genNames{byName: map[string]*generated{}} }

func (g *genNames) add(name, prefix, created, tie string) {
	if _, ok := g.byName[name]; ok || name == prefix || !strings.HasPrefix(name, prefix) {
		return
	}
	g.byName[name] = &generated{name: name, prefix: prefix, created: created, tie: tie}
}

// fromObjects adds every object whose name extends its generateName,
// except a StatefulSet's pods: web-0 carries generateName web- but its
// name is its stable identity (its pod-name label says so). An object
// without generateName whose name is an owner's name, "-" and a random
// suffix counts as generated too: an update that sends no generateName
// clears it (the endpointslice-mirroring-controller's updates do).
func (g *genNames) fromObjects(objs []*unstructured.Unstructured) {
	g.scheduled = newScheduledNames(objs)
	g.scheduled.scanObjects(objs, nil)
	var gen []*unstructured.Unstructured
	prefixOf := map[*unstructured.Unstructured]string{}
	for _, o := range objs {
		if o.GetLabels()[statefulSetPodNameLabel] == o.GetName() {
			continue
		}
		p := generatedBase(o.GetGenerateName())
		if p == "" {
			p = ownerPrefix(o)
		}
		if p != "" && strings.HasPrefix(o.GetName(), p) && o.GetName() != p {
			gen = append(gen, o)
			prefixOf[o] = p
		}
	}
	// Tie-breaker: the object with every generated name blanked, so that
	// objects created in the same second order by what they hold.
	blank := map[string]string{}
	for _, o := range gen {
		blank[o.GetName()] = prefixOf[o] + "*"
	}
	w := newRewriter(blank)
	for _, o := range gen {
		m := scrubMeta(o.UnstructuredContent(), nil)
		tie := mustYAML(w.walk(m))
		g.add(o.GetName(), prefixOf[o], timeString(o.Object, "metadata", "creationTimestamp"), tie)
	}
}

// ownerPrefix returns "<owner>-" (cut as the apiserver cuts a long
// generateName) when the object's name is that followed by a random
// suffix, else "".
func ownerPrefix(o *unstructured.Unstructured) string {
	name := o.GetName()
	for _, ref := range o.GetOwnerReferences() {
		base := generatedBase(ref.Name + "-")
		if len(name) == len(base)+randomSuffixLen && strings.HasPrefix(name, base) && randomSuffix(name[len(base):]) {
			return base
		}
	}
	return ""
}

// randomSuffix reports whether s is made of randomAlphabet only.
func randomSuffix(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune(randomAlphabet, r) {
			return false
		}
	}
	return true
}

// fromEvents adds names that only Events mention: involved objects not in
// the capture whose names look generated, and, in messages, a known prefix
// or the involved object's name followed by "-" and a random suffix
// ("Created pod: web-7d9f8c6b5-xk2p9"), or by "-<index>-" and one (an
// Indexed Job's pods). Such a name is ordered by the first
// Event mentioning it, then by what the Events mentioning it say with every
// generated name blanked.
func (g *genNames) fromEvents(events []*unstructured.Unstructured, captured map[string]bool) {
	if g.scheduled != nil {
		g.scheduled.scanObjects(nil, events)
	}
	prefixes := map[string]bool{}
	for _, n := range g.byName {
		prefixes[n.prefix] = true
	}
	type mention struct{ when, reason, message string }
	found := map[string]string{} // name → prefix
	mentions := map[string][]mention{}
	suffix := `[` + randomAlphabet + `]{` + strconv.Itoa(randomSuffixLen) + `}\b`
	for _, e := range events {
		name, _, _ := unstructured.NestedString(e.Object, "involvedObject", "name")
		msg, _, _ := unstructured.NestedString(e.Object, "message")
		reason, _, _ := unstructured.NestedString(e.Object, "reason")
		m := mention{eventTime(e), reason, msg}
		if !captured[name] {
			if sm := generatedNameRE.FindStringSubmatch(name); sm != nil {
				found[name] = sm[1]
			}
		}
		mentions[name] = append(mentions[name], m)
		cands := []string{name + "-"}
		for p := range prefixes {
			cands = append(cands, p)
		}
		for _, p := range cands {
			re := regexp.MustCompile(regexp.QuoteMeta(p) + suffix)
			for _, n := range re.FindAllString(msg, -1) {
				if _, known := g.byName[n]; !known {
					found[n] = p
				}
				if n != name {
					mentions[n] = append(mentions[n], m)
				}
			}
		}
		// An Indexed Job's pods: "<job>-<index>-" and a random suffix.
		indexed := regexp.MustCompile(regexp.QuoteMeta(name) + `-[0-9]+-` + suffix)
		for _, n := range indexed.FindAllString(msg, -1) {
			if _, known := g.byName[n]; !known {
				found[n] = n[:len(n)-randomSuffixLen]
			}
			mentions[n] = append(mentions[n], m)
		}
	}
	blank := map[string]string{}
	for _, n := range g.byName {
		blank[n.name] = n.prefix + "*"
	}
	for n, p := range found {
		blank[n] = p + "*"
	}
	w := newRewriter(blank)
	for n, p := range found {
		ms := mentions[n]
		first := ""
		said := make([]string, 0, len(ms))
		for _, m := range ms {
			if first == "" || m.when < first {
				first = m.when
			}
			said = append(said, m.reason+" "+w.lit.Replace(m.message))
		}
		sort.Strings(said)
		g.add(n, p, first, strings.Join(said, "\n"))
	}
}

// placeholders returns generated name → normalised name: the prefix
// (itself normalised, for names generated from generated names) followed by
// <N>, N counting from 1 per prefix in creation order; and the names of
// CronJobs' Jobs (cronjobs.go).
func (g *genNames) placeholders() map[string]string {
	byPrefix := map[string][]*generated{}
	for _, n := range g.byName {
		byPrefix[n.prefix] = append(byPrefix[n.prefix], n)
	}
	number := map[string]int{}
	for _, ns := range byPrefix {
		sort.Slice(ns, func(i, j int) bool {
			a, b := ns[i], ns[j]
			if a.created != b.created {
				return a.created < b.created
			}
			if a.tie != b.tie {
				return a.tie < b.tie
			}
			return a.name < b.name
		})
		for i, n := range ns {
			number[n.name] = i + 1
		}
	}
	// Shorter names first: a prefix can only contain shorter generated names.
	all := make([]*generated, 0, len(g.byName))
	for _, n := range g.byName {
		all = append(all, n)
	}
	sort.Slice(all, func(i, j int) bool {
		if len(all[i].name) != len(all[j].name) {
			return len(all[i].name) < len(all[j].name)
		}
		return all[i].name < all[j].name
	})
	out := map[string]string{}
	if g.scheduled != nil {
		for k, v := range g.scheduled.found {
			out[k] = v
		}
	}
	for _, n := range all {
		prefix := newRewriter(out).lit.Replace(n.prefix)
		out[n.name] = prefix + "<" + strconv.Itoa(number[n.name]) + ">"
	}
	return out
}

// timeString reads a timestamp field as a sortable string ("" if unset).
func timeString(obj map[string]any, fields ...string) string {
	s, _, _ := unstructured.NestedString(obj, fields...)
	return s
}

// eventTime is when an Event first happened, whichever field holds it.
func eventTime(e *unstructured.Unstructured) string {
	for _, f := range [][]string{{"firstTimestamp"}, {"eventTime"}, {"metadata", "creationTimestamp"}} {
		if s := timeString(e.Object, f...); s != "" {
			return s
		}
	}
	return ""
}
